// `feedsync pause|resume --feed NAME... | --all`: keep schedules from starting runs (every worker
// on the Redis asks before a scheduled run), or let them start again. Runs asked for by hand still run.
// Needs the config's Redis (or REDIS_URL), and says which it wrote to; a cron `sync` is not paused.
import { loadConfig } from '../config/load.js';
import { selectFeeds } from '../config/select.js';
import { ConfigError } from '../errors.js';
import { ALL, pauseFeeds, pausedFeeds, resumeFeeds } from '../queue/index.js';
import { EXIT, printJson } from './exit.js';
import { openOpsRedis } from './ops-redis.js';
import { feedsyncCommand } from '../format/invocation.js';

export interface ControlOptions {
  action: 'pause' | 'resume';
  config: string;
  feed?: string[];
  all?: boolean;
  json?: boolean;
}

export async function run(opts: ControlOptions): Promise<number> {
  if (Boolean(opts.feed?.length) === Boolean(opts.all))
    throw new ConfigError(`${opts.action}: give --feed NAME (one or more) or --all`);
  const loaded = await loadConfig(opts.config);
  const feeds = opts.all ? ALL : selectFeeds(loaded.config.feeds, opts.feed, loaded.file).map((f) => f.name);
  const { redis, prefix, where, named, answer, close } = await openOpsRedis(loaded, opts.action);
  try {
    if (opts.action === 'pause') await answer(pauseFeeds(redis, prefix, feeds));
    else await answer(resumeFeeds(redis, prefix, feeds));
    const paused = [...(await answer(pausedFeeds(redis, prefix))).since].map(([feed, since]) => ({
      feed: feed === ALL ? 'all' : feed,
      since,
    }));
    if (opts.json) {
      printJson({ redis: where, prefix, paused });
      return EXIT.ok;
    }
    const what = feeds === ALL ? 'every schedule' : feeds.join(', ');
    // (`resume` alone is a usage error: the hint names what this paused)
    const resume = `${feedsyncCommand()} resume ${feeds === ALL ? '--all' : feeds.map((f) => `--feed ${f}`).join(' ')}`;
    process.stderr.write(
      opts.action === 'pause'
        ? `paused ${what} in ${named}: the workers' scheduled runs start nothing until \`${resume}\`; a running sync goes on (\`${feedsyncCommand()} cancel --feed NAME\` stops it), and a \`feedsync sync\` run by cron is not paused\n`
        : `resumed ${what} in ${named}: schedules start runs again\n`,
    );
    const still = paused.map((p) => p.feed);
    process.stderr.write(still.length ? `paused now: ${still.join(', ')}\n` : 'nothing is paused\n');
    return EXIT.ok;
  } finally {
    await close();
  }
}
