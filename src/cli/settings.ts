// `feedsync settings`: push each chatbot's settings from config with Edit.
import { loadConfig } from '../config/load.js';
import { selectChatbots } from '../config/select.js';
import { formatSettingsReport, pushSettings } from '../settings/index.js';
import { exitForOutcome, printJson } from './exit.js';
import { withRuntime } from './with-runtime.js';

export interface SettingsCliOptions {
  config: string;
  chatbot?: string[];
  dryRun?: boolean;
  force?: boolean;
  json?: boolean;
  /** false with `--no-redis` (commander's negated option) */
  redis?: boolean;
}

export async function run(opts: SettingsCliOptions): Promise<number> {
  const loaded = await loadConfig(opts.config);
  const { chatbots } = loaded.config;
  selectChatbots(chatbots, opts.chatbot); // an unknown --chatbot fails before anything starts
  const { report, uncoordinated } = await withRuntime(
    loaded,
    async ({ api, store, uncoordinated }, logger) => ({
      report: await pushSettings(
        chatbots,
        { api, store, logger },
        { dryRun: opts.dryRun, force: opts.force, only: opts.chatbot },
      ),
      uncoordinated,
    }),
    { noRedis: opts.redis === false },
  );
  if (opts.json) printJson({ ...(uncoordinated && { uncoordinated }), ...report });
  else process.stderr.write(`${uncoordinated ? `feedsync: ${uncoordinated}\n` : ''}${formatSettingsReport(report)}`);
  return exitForOutcome(report.outcome);
}
