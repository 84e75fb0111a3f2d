// Whole listings (undo) in the Redis change log: kept apart from the entries, once per key and run,
// and within maxWholeBytesPerFeed across a feed's runs: past it the oldest runs' are dropped, and
// their changes then say so.
import '../setup/needs-redis.js';
import { afterAll, expect, it } from 'vitest';
import { shownEntry, type ChangeEntry, type RunEntry } from '../../src/change-log/change-log.js';
import { createRedisChangeLog } from '../../src/change-log/redis-change-log.js';
import { dropPrefix, testRedis, uniquePrefix } from '../queue/helpers.js';

const redis = testRedis();
const prefix = uniquePrefix();
afterAll(async () => {
  await dropPrefix(redis, prefix);
  await redis.quit();
});

const entry = (runId: string, key: string, before: string): ChangeEntry => ({
  runId,
  at: new Date().toISOString(),
  feed: 'f',
  chatbot: 'SN',
  dryRun: false,
  change: { op: 'update', key, reason: 'fields', changes: [], before },
});
const run = (runId: string, bytes: number): RunEntry => ({
  runId,
  feed: 'f',
  chatbot: 'SN',
  dryRun: false,
  startedAt: '',
  finishedAt: new Date().toISOString(),
  durationMs: 1,
  outcome: 'ok',
  summary: '',
  counts: {},
  recorded: 2,
  dropped: 0,
  wholes: { kept: 2, bytes, notKept: 0 },
});

it('keeps each key’s first whole listing of a run apart, and drops the oldest runs’ past the feed’s budget', async () => {
  const log = createRedisChangeLog(redis, prefix, {
    retentionDays: 1,
    maxPerFeed: 1000,
    maxPerRun: 100,
    maxWholeBytesPerFeed: 1500,
  });
  const big = (c: string) => c.repeat(600);
  await log.append([entry('r1', 'A', big('a')), entry('r1', 'A', big('b')), entry('r1', 'B', big('c'))]);
  await log.finishRuns([run('r1', 1800)]);
  // the entries hold a marker, not the listing: stream and run list stay small
  expect((await redis.lrange(`${prefix}:changes:run:r1`, 0, -1)).every((l) => l.length < 400)).toBe(true);
  const first = (await log.run('r1', 10)).changes.map((e) => e.change);
  expect(first).toEqual([
    expect.objectContaining({ key: 'A', before: big('a') }),
    expect.objectContaining({ key: 'A', beforeMissing: 'kept with the first change of this key in the run' }),
    expect.objectContaining({ key: 'B', before: big('c') }),
  ]);

  await log.append([entry('r2', 'C', big('d'))]);
  await log.finishRuns([run('r2', 600)]);
  // 1800 + 600 bytes > 1500: r1's are dropped, r2's (the newest) kept
  expect((await log.run('r1', 10)).changes.map((e) => e.change)).toEqual([
    expect.objectContaining({
      key: 'A',
      beforeMissing: expect.stringMatching(/^trimmed: the whole listings of this run were dropped/),
    }),
    expect.objectContaining({ key: 'A' }),
    expect.objectContaining({ key: 'B', beforeMissing: expect.stringMatching(/^trimmed/) }),
  ]);
  const r2 = (await log.run('r2', 10)).changes[0]!;
  expect(r2.change).toMatchObject({ key: 'C', before: big('d') });
  // what `runs show --json` and `history --json` print: the size, not the packed listing
  expect(shownEntry(r2).change).toEqual({ op: 'update', key: 'C', reason: 'fields', changes: [], beforeBytes: 600 });
});
