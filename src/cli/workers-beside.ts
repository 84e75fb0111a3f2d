// What a `--no-redis` run says when feedsync workers are running on the config's Redis: it takes
// neither their locks nor their state, so it may write the same listings as they do at the same
// time. Whether workers run is asked of Redis (BullMQ's workers of the sync queue, by their
// connections' names), briefly: a Redis that does not answer is why a person runs --no-redis, and
// the run then goes on with the usual note only. Briefly also once Redis answered the PING: one
// that stops answering then (hung, paused, partitioned: the connection stays up) held the run
// before its first call without end, so the question goes through the ops connection's bounded
// `answer` (ANSWER_MS, as the PING).
import type { LoadedConfig } from '../config/schema.js';
import { closeQueues, createQueues, QUEUE_NAMES } from '../queue/index.js';
import { openOpsRedis } from './ops-redis.js';

const ANSWER_MS = 1500;

/** The warning to print (once, on stderr), or undefined: no Redis configured, none answering, or no worker running. */
export async function workersBesideWarning(loaded: LoadedConfig): Promise<string | undefined> {
  if (!loaded.config.redis) return undefined;
  // (a Redis that does not answer is why a person runs --no-redis: no warning, the run's usual note only)
  const ops = await openOpsRedis(loaded, 'sync --no-redis', ANSWER_MS).catch(() => undefined);
  if (!ops) return undefined;
  const queues = createQueues(ops.redis, ops.prefix);
  try {
    const count = await ops.answer(queues.sync.getWorkersCount());
    if (count === 0) return undefined;
    const workers = count === 1 ? '1 feedsync worker is' : `${count} feedsync workers are`;
    return (
      `warning: ${workers} running on Redis ${ops.where} (prefix ${ops.prefix}, queue ${QUEUE_NAMES.sync}), and this run, with --no-redis, ` +
      `takes neither their chatbot locks nor their state: it may write the same listings as they do at the same time (duplicates), ` +
      `and they will not know what it wrote. Stop the workers first, or run without --no-redis (or queue the run: feedsync enqueue sync).`
    );
  } catch {
    return undefined; // (a Redis that stops answering here: no warning, as when none answers above)
  } finally {
    // (the queues' objects on a connection ended next: a close that fails leaves nothing open, and the
    // warning is advice, which the run goes on without)
    await closeQueues(queues).catch(() => {});
    await ops.close();
  }
}
