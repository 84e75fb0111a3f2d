// `feedsync runs`: run history kept in Redis, newest first.
import { loadConfig } from '../config/load.js';
import { ConfigError } from '../errors.js';
import { closeRedis, createRedis, listRuns, redisSettings } from '../queue/index.js';
import { EXIT, printJson } from './exit.js';

export interface RunsOptions {
  config: string;
  feed?: string;
  chatbot?: string;
  limit: number;
  json?: boolean;
}

export async function run(opts: RunsOptions): Promise<number> {
  if (opts.feed && opts.chatbot) throw new ConfigError('give --feed or --chatbot, not both');
  if (opts.limit < 1) throw new ConfigError('--limit must be at least 1');
  const loaded = await loadConfig(opts.config);
  const { url, prefix } = redisSettings(loaded);
  const redis = createRedis(url, { name: 'feedsync-runs' });
  try {
    const runs = await listRuns(redis, prefix, { feed: opts.feed, chatbot: opts.chatbot, limit: opts.limit });
    if (opts.json) {
      printJson({ runs });
      return EXIT.ok;
    }
    if (!runs.length) {
      process.stderr.write(`no runs recorded${opts.feed ? ` for feed ${opts.feed}` : opts.chatbot ? ` for chatbot ${opts.chatbot}` : ''}\n`);
      return EXIT.ok;
    }
    const rows = runs.map((r) => [r.at.replace('T', ' ').slice(0, 19), r.job, r.feed ?? r.chatbot ?? '', r.outcome, `${r.attempt.made}/${r.attempt.max}`, r.jobId, r.summary]);
    process.stdout.write(table(['time (UTC)', 'job', 'target', 'outcome', 'try', 'job id', 'summary'], rows));
    return EXIT.ok;
  } finally {
    await closeRedis(redis);
  }
}

function table(header: string[], rows: string[][]): string {
  // The summary (last column) is not padded: it is the long one.
  const widths = header.map((h, i) => Math.max(h.length, ...rows.map((r) => (r[i] ?? '').length)));
  const line = (cells: string[]) => cells.map((c, i) => (i === cells.length - 1 ? c : c.padEnd(widths[i] ?? 0))).join('  ').trimEnd();
  return [line(header), ...rows.map(line)].join('\n') + '\n';
}
