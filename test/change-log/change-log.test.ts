// The change log's two stores (Redis, and the file beside the state) answer the same questions the
// same way, stay bounded, and never keep a secret; the recorder caps a run and batches its writes.
import '../setup/needs-redis.js';
import { mkdtemp, readFile, rm, stat, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import type { ChangeEntry, ChangeLog, RunEntry } from '../../src/change-log/change-log.js';
import { createFileChangeLog } from '../../src/change-log/file-change-log.js';
import { createChangeRecorder } from '../../src/change-log/recorder.js';
import { createRedisChangeLog } from '../../src/change-log/redis-change-log.js';
import { registerSecret, silentLogger } from '../../src/log.js';
import type { ListingChange } from '../../src/sync/model/changes.js';
import { dropPrefix, testRedis, uniquePrefix } from '../queue/helpers.js';

const redis = testRedis();
const prefixes: string[] = [];
afterAll(async () => {
  for (const p of prefixes) await dropPrefix(redis, p);
  await redis.quit();
});

const limits = { retentionDays: 30, maxPerFeed: 100, maxPerRun: 1000 };

const stores: Array<[string, () => Promise<ChangeLog>]> = [
  [
    'redis',
    async () => {
      const prefix = uniquePrefix();
      prefixes.push(prefix);
      return createRedisChangeLog(redis, prefix, limits);
    },
  ],
  ['file', async () => createFileChangeLog(join(await mkdtemp(join(tmpdir(), 'changes-')), 'changes.jsonl'), limits)],
];

const entry = (runId: string, change: ListingChange, at = new Date().toISOString()): ChangeEntry => ({
  runId,
  at,
  feed: 'f1',
  chatbot: 'SN-1',
  dryRun: false,
  change,
});
const runOf = (runId: string, outcome = 'ok'): RunEntry => ({
  runId,
  feed: 'f1',
  chatbot: 'SN-1',
  dryRun: false,
  startedAt: new Date().toISOString(),
  finishedAt: new Date().toISOString(),
  durationMs: 12,
  outcome,
  summary: `synced f1: ${outcome}`,
  counts: { created: 1 },
  recorded: 1,
  dropped: 0,
});

describe.each(stores)('change log in %s', (_name, open) => {
  it("tells one listing's story newest first, and one run's changes with its record", async () => {
    const log = await open();
    await log.append([
      entry('r1', { op: 'create', key: 'A1', headline: { SalePrice: 450000, City: 'Austin' } }),
      entry('r1', { op: 'create', key: 'B2', headline: {} }),
      entry('r1', {
        op: 'reject',
        key: 'C3',
        place: 'feed.csv:4',
        reasons: ['Status must be one of Active, Sold (got "X")'],
      }),
    ]);
    await log.finishRuns([runOf('r1')]);
    await log.append([
      entry('r2', {
        op: 'update',
        key: 'A1',
        reason: 'fields',
        changes: [{ field: 'SalePrice', old: '450000', new: '465000' }],
      }),
      entry('r2', { op: 'delete', key: 'B2', reason: 'absent' }),
    ]);
    await log.finishRuns([runOf('r2')]);

    const a1 = await log.history('f1', 'A1', 10);
    expect(a1.map((e) => [e.runId, e.change.op])).toEqual([
      ['r2', 'update'],
      ['r1', 'create'],
    ]);
    expect(a1[0]!.change).toMatchObject({ changes: [{ field: 'SalePrice', old: '450000', new: '465000' }] });
    expect((await log.history('f1', 'B2', 10)).map((e) => e.change.op)).toEqual(['delete', 'create']);
    expect(await log.history('f1', 'A1', 1)).toHaveLength(1);
    expect(await log.history('other-feed', 'A1', 10)).toEqual([]);

    const r1 = await log.run('r1', 100);
    expect(r1.run).toMatchObject({ runId: 'r1', outcome: 'ok' });
    expect(r1.changes.map((e) => e.change.op)).toEqual(['create', 'create', 'reject']);
    expect(r1.total).toBe(3);
    expect(await log.run('r1', 2)).toMatchObject({ changes: { length: 2 }, total: 3 });
    expect(await log.run('nope', 10)).toEqual({ run: undefined, changes: [], total: 0 });
    expect((await log.runs('f1', 10)).map((r) => r.runId)).toEqual(['r2', 'r1']);
    expect((await log.runs(undefined, 1)).map((r) => r.runId)).toEqual(['r2']);
    await log.close();
  });

  it('never stores a registered secret', async () => {
    const secret = 'sk-change-log-8c1f2e';
    registerSecret(secret);
    const log = await open();
    await log.append([
      entry('r9', { op: 'fail', key: 'A1', attempted: 'update', reason: `401 with key ${secret}`, retryable: false }),
    ]);
    const [e] = await log.history('f1', 'A1', 1);
    expect(JSON.stringify(e)).not.toContain(secret);
    expect(JSON.stringify(e)).toContain('[REDACTED]');
    await log.close();
  });
});

describe('records of older versions', () => {
  it("file: a cancelled run's record written with the old word (`aborted`, before cancelled runs said `cancelled`) still reads, with that word", async () => {
    const path = join(await mkdtemp(join(tmpdir(), 'changes-')), 'changes.jsonl');
    const at = new Date().toISOString();
    const run = {
      runId: 'j1.1',
      jobId: 'j1',
      feed: 'f1',
      chatbot: 'SN-1',
      dryRun: false,
      startedAt: at,
      finishedAt: at,
      durationMs: 5,
      outcome: 'aborted',
      summary: 'sync of f1 → SN-1 aborted: 3 created',
      message: 'cancelled by ops@host: calls in flight were finished, nothing new was sent',
      counts: { created: 3 },
      recorded: 0,
      dropped: 0,
    };
    await writeFile(path, JSON.stringify({ r: run }) + '\n');
    const log = await createFileChangeLog(path, limits);
    expect((await log.run('j1.1', 10)).run).toEqual(run);
    expect(await log.runs('f1', 5)).toEqual([run]);
    await log.close();
  });
});

describe('a change log that cannot be read', () => {
  it('file: none written yet reads as no runs; one whose path became unusable (ENOTDIR) is an error naming it, not an empty log', async () => {
    const folder = join(await mkdtemp(join(tmpdir(), 'changes-')), 'state');
    const path = join(folder, 'changes.jsonl');
    const log = await createFileChangeLog(path, limits);
    expect(await log.runs('f1', 5)).toEqual([]);
    await log.finishRuns([runOf('j1.1')]);
    expect(await log.runs('f1', 5)).toHaveLength(1);
    // the folder replaced by a file: stat fails with ENOTDIR, not ENOENT
    await rm(folder, { recursive: true });
    await writeFile(folder, 'not a folder');
    for (const asked of [() => log.runs('f1', 5), () => log.run('j1.1', 10), () => log.history('f1', 'K1', 5)]) {
      const err = await asked().then(
        () => undefined,
        (e: unknown) => e,
      );
      expect(err).toMatchObject({ code: 'ENVIRONMENT' });
      expect((err as Error).message).toContain(path);
      expect((err as Error).message).toContain('ENOTDIR');
    }
    await log.close();
  });
});

describe('retention', () => {
  it('redis: the feed stream is trimmed to about maxPerFeed, and run lists expire', async () => {
    const prefix = uniquePrefix();
    prefixes.push(prefix);
    const log = createRedisChangeLog(redis, prefix, limits);
    for (let i = 0; i < 10; i++) {
      await log.append(
        Array.from({ length: 100 }, (_, j) => entry(`r${i}`, { op: 'create', key: `K${i * 100 + j}`, headline: {} })),
      );
    }
    const len = await redis.xlen(`${prefix}:changes:feed:f1`);
    expect(len).toBeGreaterThanOrEqual(100);
    expect(len).toBeLessThan(300); // MAXLEN ~ trims whole stream nodes
    const ttl = await redis.ttl(`${prefix}:changes:run:r0`);
    expect(ttl).toBeGreaterThan(29 * 86_400);
    expect(ttl).toBeLessThanOrEqual(30 * 86_400);
  });

  it('file: lines past retentionDays go, and the file is cut back when it grows past its budget', async () => {
    const path = join(await mkdtemp(join(tmpdir(), 'changes-')), 'changes.jsonl');
    const old = new Date(Date.now() - 40 * 86_400_000).toISOString();
    await writeFile(path, JSON.stringify({ c: entry('old', { op: 'create', key: 'OLD', headline: {} }, old) }) + '\n');
    const log = await createFileChangeLog(path, limits);
    await log.append([entry('new', { op: 'create', key: 'NEW', headline: {} })]);
    expect(await log.history('f1', 'OLD', 10)).toEqual([]);
    expect(await log.history('f1', 'NEW', 10)).toHaveLength(1);

    // the budget: 1 MB at least; 2 MB of changes leave at most that
    const big = 'x'.repeat(1000);
    for (let i = 0; i < 20; i++) {
      await log.append(
        Array.from({ length: 100 }, (_, j) =>
          entry(`b${i}`, { op: 'reject', key: `K${i}-${j}`, place: 'f:1', reasons: [big] }),
        ),
      );
    }
    expect((await stat(path)).size).toBeLessThanOrEqual(1 << 20);
    // the newest are kept
    expect(await log.history('f1', 'K19-99', 1)).toHaveLength(1);
    expect((await readFile(path, 'utf8')).endsWith('\n')).toBe(true);
    await log.close();
  });
});

describe('change recorder', () => {
  it('records at most maxPerRun changes of a run, counts the rest, and writes the run record', async () => {
    const log = await createFileChangeLog(join(await mkdtemp(join(tmpdir(), 'changes-')), 'changes.jsonl'), limits);
    const rec = createChangeRecorder(
      log,
      { runId: 'r1', feed: 'f1', chatbot: 'SN-1', dryRun: false },
      { maxPerRun: 3, logger: silentLogger },
    );
    for (let i = 0; i < 5; i++) rec.sink({ op: 'create', key: `K${i}`, headline: {} });
    const run = await rec.finish({
      startedAt: 'a',
      finishedAt: 'b',
      durationMs: 1,
      outcome: 'ok',
      summary: 's',
      counts: {},
    });
    expect(run).toMatchObject({ recorded: 3, dropped: 2 });
    expect((await log.run('r1', 100)).changes.map((e) => e.change.key)).toEqual(['K0', 'K1', 'K2']);
  });
});
