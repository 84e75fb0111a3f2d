// `feedsync runs`: run history kept in Redis, newest first. It says which Redis it read when the
// config does not name one, and a feed or chatbot the config does not know is a usage error (exit 2)
// with the same message as `sync` and `feed preview`.
import { loadConfig } from '../config/load.js';
import { selectChatbots, selectFeeds } from '../config/select.js';
import { ConfigError } from '../errors.js';
import { ALL, listRuns, pausedFeeds } from '../queue/index.js';
import { openOpsRedis } from './ops-redis.js';
import { table } from '../format/table.js';
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
  if (opts.feed) selectFeeds(loaded.config.feeds, [opts.feed], loaded.file);
  if (opts.chatbot) selectChatbots(loaded.config.chatbots, [opts.chatbot]);
  const { redis, prefix, where, from, close } = await openOpsRedis(loaded, 'feedsync-runs');
  if (from !== 'config') {
    const why = from === 'REDIS_URL' ? 'from REDIS_URL' : 'the default, as REDIS_URL is not set either';
    process.stderr.write(`feedsync: ${opts.config} has no redis section: reading run history from ${where} (${why}); foreground syncs with this config record none\n`);
  }
  try {
    const runs = await listRuns(redis, prefix, { feed: opts.feed, chatbot: opts.chatbot, limit: opts.limit });
    const paused = [...(await pausedFeeds(redis, prefix)).since].map(([feed, since]) => ({ feed: feed === ALL ? 'all' : feed, since }));
    if (opts.json) {
      printJson({ redis: where, prefix, paused, runs });
      return EXIT.ok;
    }
    // Paused schedules first: a feed that has not run lately may simply be paused.
    for (const p of paused) {
      const what = p.feed === 'all' ? 'every schedule' : `feed ${p.feed}`;
      process.stderr.write(`paused: ${what} since ${p.since.replace('T', ' ').slice(0, 19)} UTC (feedsync resume ${p.feed === 'all' ? '--all' : `--feed ${p.feed}`})
`);
    }
    if (!runs.length) {
      const what = opts.feed ? ` for feed ${opts.feed}` : opts.chatbot ? ` for chatbot ${opts.chatbot}` : '';
      process.stderr.write(`no runs recorded${what} in ${where} (prefix ${prefix})\n`);
      return EXIT.ok;
    }
    const rows = runs.map((r) => [r.at.replace('T', ' ').slice(0, 19), r.job, r.feed ?? r.chatbot ?? '', r.outcome, `${r.attempt.made}/${r.attempt.max}`, r.jobId, r.summary]);
    process.stdout.write(table(['time (UTC)', 'job', 'target', 'outcome', 'try', 'job id', 'summary'], rows).join('\n') + '\n');
    return EXIT.ok;
  } finally {
    await close();
  }
}
