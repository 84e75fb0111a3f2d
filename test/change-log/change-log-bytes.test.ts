// Issue 23: the change log is bounded by bytes, not only by entries. One run changing 5,000
// descriptions of 20,000 characters used to add 205 MB to Redis (each new value stored whole,
// twice). Here the same run, against the emulator over HTTP with the change log in a real Redis,
// adds under 20 MB: long values are kept as an excerpt, a sha1 and a length, and the whole
// listings kept for undo stay within changeLog.maxWholeBytesPerRun (the rest are named as not kept).
import '../setup/needs-redis.js';
import { randomBytes } from 'node:crypto';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { ApiConfig, FeedConfig } from '../../src/config/schema.js';
import { DEFAULT_LIMITS } from '../../src/change-log/change-log.js';
import { createChangeRecorder } from '../../src/change-log/recorder.js';
import { createRedisChangeLog } from '../../src/change-log/redis-change-log.js';
import { silentLogger } from '../../src/log.js';
import { syncFeed } from '../../src/sync/index.js';
import { startTestEmulator, type TestEmulator } from '../helpers/emulator.js';
import { dropPrefix, testRedis, uniquePrefix } from '../queue/helpers.js';
import { COLUMNS, createSyncEnv, csv, row, SN, type SyncEnv } from '../sync/helpers/feed.js';

// The figure is 5,000 listings (FEEDSYNC_BYTES_FULL=1: about 80 s here). The suite runs 500:
// enough to fill the whole-listing budget, and the entries' bytes are held per change, so 5,000 stay
// within the bound by the same arithmetic.
const FULL = 5_000;
const N = process.env.FEEDSYNC_BYTES_FULL ? FULL : 500;
/** bytes of change log one change may add (stream and run list), whole listings aside */
const PER_CHANGE = 2_500;
const CHARS = 20_000;
let te: TestEmulator;
let env: SyncEnv;
const redis = testRedis();
const prefix = uniquePrefix();

beforeAll(async () => {
  te = await startTestEmulator();
  env = await createSyncEnv();
});
afterAll(async () => {
  await te.close();
  await env.cleanup();
  await dropPrefix(redis, prefix);
  await redis.quit();
});

/** text that does not compress away: random letters and spaces */
const text = (n: number) => randomBytes(n).toString('base64').replace(/[+/=]/g, ' ').slice(0, n);

async function changeLogBytes(): Promise<number> {
  let bytes = 0;
  let cursor = '0';
  do {
    const [next, keys] = await redis.scan(cursor, 'MATCH', `${prefix}:changes:*`, 'COUNT', 1000);
    cursor = next;
    for (const k of keys) bytes += Number((await redis.memory('USAGE', k, 'SAMPLES', '0')) ?? 0);
  } while (cursor !== '0');
  return bytes;
}

it(
  `one run changing ${N} descriptions of ${CHARS} characters adds under 20 MB of change log to Redis`,
  { timeout: 240_000 },
  async () => {
    const columns = [...COLUMNS, 'Description'] as const;
    const feed = FeedConfig.parse({
      ...env.feed(),
      mapping: { fields: Object.fromEntries(columns.map((c) => [c, c])) },
    });
    const apiConfig = ApiConfig.parse({
      baseUrl: te.url,
      secretKey: 'x',
      sessionKey: 'y',
      concurrency: 8,
      pageSize: 100,
    });
    const log = createRedisChangeLog(redis, prefix, DEFAULT_LIMITS);
    const run = async (runId: string, descriptions: (i: number) => string) => {
      await env.writeFeed(
        csv(
          Array.from({ length: N }, (_, i) => ({ ...row(i + 1), Description: descriptions(i) })),
          columns,
        ),
      );
      const recorder = createChangeRecorder(
        log,
        { runId, feed: feed.name, chatbot: SN, dryRun: false },
        { maxPerRun: DEFAULT_LIMITS.maxPerRun, maxBytesPerRun: DEFAULT_LIMITS.maxBytesPerRun, logger: silentLogger },
      );
      const report = await syncFeed(
        feed,
        {
          api: te.client(),
          store: env.store,
          configFeeds: [feed],
          logger: silentLogger,
          baseDir: env.dir,
          apiConfig,
          changes: recorder.sink,
          maxWholeBytes: DEFAULT_LIMITS.maxWholeBytesPerRun,
        },
        {},
      );
      return {
        report,
        entry: await recorder.finish({
          startedAt: report.startedAt,
          finishedAt: report.finishedAt,
          durationMs: report.durationMs,
          outcome: report.outcome,
          summary: report.summary,
          counts: { ...report.counts },
        }),
      };
    };
    const first = await run('first', () => text(CHARS));
    expect(first.report.counts.created).toBe(N);

    const before = await changeLogBytes();
    const second = await run('second', () => text(CHARS));
    expect(second.report.counts.updated).toBe(N);
    const added = (await changeLogBytes()) - before;
    console.log(
      `change log: one run of ${N} × ${CHARS}-character description changes added ${(added / 1e6).toFixed(1)} MB to Redis (${second.entry.recorded} changes kept, ${second.entry.dropped} dropped; whole listings: ${second.entry.wholes?.kept} kept, ${((second.entry.wholes?.bytes ?? 0) / 1e6).toFixed(1)} MB, ${second.entry.wholes?.notKept} not kept)`,
    );
    expect(added).toBeLessThan(20e6);
    // what 5,000 such changes add at most: their entries, and whole listings within their budget
    const wholeBytes = second.entry.wholes?.bytes ?? 0;
    expect((added - wholeBytes) / N).toBeLessThan(PER_CHANGE);
    expect(FULL * PER_CHANGE + DEFAULT_LIMITS.maxWholeBytesPerRun).toBeLessThan(20e6);
    // every change is recorded (excerpts), and the whole listings fill their budget, the rest named
    expect(second.entry).toMatchObject({ recorded: N, dropped: 0 });
    expect(second.entry.wholes!.kept).toBeGreaterThan(0);
    expect(second.entry.wholes!.kept + second.entry.wholes!.notKept).toBe(N);
    expect(second.entry.wholes!.bytes).toBeLessThanOrEqual(DEFAULT_LIMITS.maxWholeBytesPerRun);
    const { changes } = await log.run('second', 1);
    const change = changes[0]!.change;
    // the new description as an excerpt, its sha1 and its length (canonical: runs of spaces count once)
    const description = change.op === 'update' ? change.changes.find((c) => c.field === 'Description') : undefined;
    expect(description).toMatchObject({
      new: expect.stringMatching(/^.{80}…$/),
      cut: { new: { sha1: expect.any(String) } },
    });
    expect(description?.cut?.new?.length).toBeGreaterThan(CHARS * 0.9);
  },
);
