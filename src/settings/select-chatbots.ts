import type { ChatbotConfig } from '../config/schema.js';
import { ConfigError } from '../errors.js';

export interface SelectedChatbot {
  chatbot: ChatbotConfig;
  /** position in the config's `chatbots` list, for paths such as chatbots[2].settings */
  index: number;
}

/**
 * The chatbots named by `only` (all when empty), with their place in the config. A name the config
 * does not know is a usage error that lists the ones it does.
 */
export function selectChatbots(chatbots: readonly ChatbotConfig[], only: readonly string[] = []): SelectedChatbot[] {
  const known = chatbots.map((c) => c.serialNumber);
  const unknown = only.filter((sn) => !known.includes(sn));
  if (unknown.length) {
    throw new ConfigError(
      `unknown chatbot ${unknown.join(', ')}: the config has ${known.length ? known.join(', ') : 'no chatbots'}`,
    );
  }
  return chatbots
    .map((chatbot, index) => ({ chatbot, index }))
    .filter(({ chatbot }) => only.length === 0 || only.includes(chatbot.serialNumber));
}
