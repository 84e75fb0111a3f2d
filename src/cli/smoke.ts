// `feedsync smoke`: send each chatbot its smoke message, plain and streamed, and check the answers.
import { loadConfig } from '../config/load.js';
import { selectChatbots } from '../config/select.js';
import { formatSmokeReport, runSmoke } from '../smoke/index.js';
import { exitForOutcome, printJson } from './exit.js';
import { withRuntime } from './with-runtime.js';

export interface SmokeCliOptions {
  config: string;
  chatbot?: string[];
  json?: boolean;
}

export async function run(opts: SmokeCliOptions): Promise<number> {
  const loaded = await loadConfig(opts.config);
  const { chatbots } = loaded.config;
  selectChatbots(chatbots, opts.chatbot); // an unknown --chatbot fails before anything starts
  // smoke writes no state: it runs when Redis does not answer (with this process's request budgets)
  const report = await withRuntime(
    loaded,
    ({ api }, logger) => runSmoke(chatbots, { api, logger }, { only: opts.chatbot }),
    { redisOptional: true },
  );
  if (opts.json) printJson(report);
  else process.stderr.write(formatSmokeReport(report));
  return exitForOutcome(report.outcome);
}
