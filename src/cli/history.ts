// `feedsync history --feed F --key K`: one listing's story from the change log, newest first —
// created, each update with its fields old → new, rejected records with their reasons, deletes
// with their reason (or held back by the guard), in every run that touched it.
import { loadConfig } from '../config/load.js';
import { selectFeeds } from '../config/select.js';
import { ConfigError } from '../errors.js';
import { asShownNow, shownEntry } from '../change-log/change-log.js';
import { openChangeLog } from '../change-log/open.js';
import { describeChange } from '../sync/index.js';
import { EXIT, printJson } from './exit.js';

export interface HistoryOptions {
  config: string;
  feed: string;
  key: string;
  limit: number;
  json?: boolean;
}

export async function run(opts: HistoryOptions): Promise<number> {
  if (opts.limit < 1) throw new ConfigError('--limit must be at least 1');
  const loaded = await loadConfig(opts.config);
  const [feed] = selectFeeds(loaded.config.feeds, [opts.feed], loaded.file);
  const log = await openChangeLog(loaded);
  try {
    // (a listing whose address is withheld now: no entry prints it, those from before either)
    const entries = asShownNow(await log.history(feed!.name, opts.key.trim(), opts.limit));
    if (opts.json) {
      printJson({ feed: feed!.name, key: opts.key.trim(), changes: entries.map(shownEntry) });
      return EXIT.ok;
    }
    const out: string[] = [
      `history of ${feed!.keyBy} ${opts.key.trim()} in feed ${feed!.name} → ${feed!.chatbot} (newest first)`,
    ];
    if (!entries.length)
      out.push(
        `  nothing recorded (the change log keeps ${loaded.config.changeLog.retentionDays} days; ${log.location})`,
      );
    for (const e of entries) {
      out.push(
        `  ${e.at.replace('T', ' ').slice(0, 19)}  run ${e.runId}${e.dryRun ? ' (dry run)' : ''}`,
        `    ${describeChange(e.change, e.dryRun)}`,
      );
    }
    process.stdout.write(out.join('\n') + '\n');
    return EXIT.ok;
  } finally {
    await log.close();
  }
}
