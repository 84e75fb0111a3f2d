// `feedsync runs show RUN` of a worker's run whose first attempt was handed back by a shutdown (or
// taken over after its worker died): BullMQ spends no attempt, so both attempts record under one run
// id (`<job id>.1`). Seen on a deploy walk: a run that created 245 listings, 148 of them before
// SIGTERM, showed "changes (101): … 98 more" over a list of 253, the second attempt's count. The
// count is the list's, and the head says that an earlier attempt made some of them.
import '../setup/needs-redis.js';
import { mkdtemp, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, expect, it } from 'vitest';
import type { ChangeEntry, RunEntry } from '../../src/change-log/change-log.js';
import { createRedisChangeLog } from '../../src/change-log/redis-change-log.js';
import { dropPrefix, REDIS_URL, testRedis, uniquePrefix } from '../queue/helpers.js';
import { feedsync } from '../settings/run-cli.js';

const redis = testRedis();
const prefix = uniquePrefix();
afterAll(async () => {
  await dropPrefix(redis, prefix);
  await redis.quit();
});

const RUN = 'sync-homes-1.1';
const creates = (from: number, n: number): ChangeEntry[] =>
  Array.from({ length: n }, (_, i) => ({
    runId: RUN,
    at: new Date().toISOString(),
    feed: 'homes',
    chatbot: 'SN-1',
    dryRun: false,
    change: { op: 'create', key: `MLS${from + i}`, headline: {} },
  }));
/** The record an attempt leaves as it ends: the handed-back one (`aborted`), then the one that ends. */
function attempt(outcome: string, created: number): RunEntry {
  const at = new Date().toISOString();
  const head = { runId: RUN, jobId: 'sync-homes-1', feed: 'homes', chatbot: 'SN-1', dryRun: false };
  const summary = `homes → SN-1 ${outcome}: ${created} created`;
  return {
    ...head,
    startedAt: at,
    finishedAt: at,
    durationMs: 10,
    outcome,
    summary,
    counts: { created },
    recorded: created,
    dropped: 0,
  };
}

it('counts every change recorded under the run id and says an earlier attempt made some', async () => {
  const log = createRedisChangeLog(redis, prefix, { retentionDays: 30, maxPerFeed: 1000, maxPerRun: 1000 });
  await log.append(creates(0, 6));
  await log.finishRuns([attempt('aborted', 6)]);
  await log.append(creates(6, 4));
  await log.finishRuns([attempt('ok', 4)]);

  const dir = await mkdtemp(join(tmpdir(), 'feedsync-runs-show-'));
  const config = join(dir, 'feedsync.yaml');
  await writeFile(
    config,
    [
      'api: { baseUrl: embedded, secretKey: k-secret-1, sessionKey: k-session-1 }',
      `redis: { url: "${REDIS_URL}", prefix: ${prefix} }`,
      'chatbots: [{ serialNumber: SN-1 }]',
      'feeds:',
      '  - { name: homes, chatbot: SN-1, source: { kind: csv, path: homes.csv }, mapping: { preset: reso } }',
      '',
    ].join('\n'),
  );
  await writeFile(join(dir, 'homes.csv'), 'ListingId\nA1\n');
  const r = await feedsync(['runs', 'show', RUN, '--config', config, '--limit', '3']);
  expect(r.stderr).toBe('');
  expect(r.code).toBe(0);
  expect(r.stdout).toContain('changes (10):');
  expect(r.stdout).toContain('… 7 more (--limit, or --json)');
  expect(r.stdout).toContain(
    '6 of these changes were made by an earlier attempt of this run (its worker shut down, died or lost the job’s lock before it ended); the outcome and counts above are the last attempt’s',
  );
});
