import type { ChatbotConfig, FeedConfig } from './schema.js';
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

/**
 * The feeds named by `names` (all when empty). A name the config does not know is a usage error
 * that lists the ones it does.
 */
export function selectFeeds(
  feeds: readonly FeedConfig[],
  names: readonly string[] | undefined,
  file: string,
): FeedConfig[] {
  if (!names?.length) {
    if (!feeds.length) throw new ConfigError(`${file} has no feeds to sync`, file);
    return [...feeds];
  }
  const unknown = names.filter((n) => !feeds.some((f) => f.name === n));
  if (unknown.length) {
    throw new ConfigError(
      `unknown feed ${unknown.join(', ')}; feeds in ${file}: ${feeds.map((f) => f.name).join(', ') || 'none'}`,
      file,
    );
  }
  return feeds.filter((f) => names.includes(f.name));
}
