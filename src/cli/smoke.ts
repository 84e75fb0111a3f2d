// `feedsync smoke`: send each chatbot its smoke message, plain and streamed, and check the answers.
import { loadConfig } from '../config/load.js';
import { createLogger } from '../log.js';
import { createRuntime } from '../runtime.js';
import { selectChatbots } from '../config/select.js';
import { formatSmokeReport, runSmoke } from '../smoke/index.js';
import { EXIT, printJson } from './exit.js';

export interface SmokeCliOptions {
  config: string;
  chatbot?: string[];
  json?: boolean;
}

export async function run(opts: SmokeCliOptions): Promise<number> {
  const loaded = await loadConfig(opts.config);
  const { chatbots } = loaded.config;
  selectChatbots(chatbots, opts.chatbot); // an unknown --chatbot fails before anything starts
  const logger = createLogger({ level: process.env.LOG_LEVEL ?? 'warn' });
  const runtime = await createRuntime(loaded, { logger });
  try {
    const report = await runSmoke(chatbots, { api: runtime.api, logger }, { only: opts.chatbot });
    if (opts.json) printJson(report);
    else process.stderr.write(formatSmokeReport(report));
    return report.outcome === 'ok' ? EXIT.ok : EXIT.failed;
  } finally {
    await runtime.close();
  }
}
