// `enqueue --wait` reads a job's return value, which is unknown until checked: a worker of another
// version (a rolling upgrade) or a hand in Redis may have written it in another shape. It was cast to
// the report's type and formatted, which printed an undo's omitted count as `[object Object]` and
// crashes or prints `undefined` for other shapes. A value that is not a report of its job's kind is
// said, naming the job and the field that is wrong, and the command exits 1 (docs/contracts.md: what
// the run did is not known from it); a well-formed one prints as before.
import '../setup/needs-redis.js';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { z } from 'zod';
import { readJobReport } from '../../src/cli/job-report.js';
import { startWorker } from '../../src/cli/worker.js';
import { boundReport } from '../../src/queue/report-size.js';
import { formatUndoReport, type UndoReport } from '../../src/undo/index.js';
import { loadConfig } from '../../src/config/load.js';
import { silentLogger } from '../../src/log.js';
import { workerJob, type JobDefinition, type RunReport } from '../../src/queue/index.js';
import { startTestEmulator, TEST_SECRET_KEY, TEST_SESSION_KEY } from '../helpers/emulator.js';
import { feedsync } from '../settings/run-cli.js';
import { writeDeployment } from './deploy.js';
import { dropPrefix, testRedis, uniquePrefix } from './helpers.js';

const cleanups: Array<() => Promise<unknown>> = [];
afterAll(async () => {
  for (const c of cleanups.splice(0).reverse()) await c();
});

/** what the fake sync job returns for each feed: a report whose counts are a string */
const RETURNED: Record<string, unknown> = {
  homes: { feed: 'homes', chatbot: 'SN-R', outcome: 'ok', retryable: false, summary: 'synced homes', counts: 'lots' },
};
let config: string;

function undoReport(deletes: number): UndoReport {
  const zero = { deleted: deletes, updated: 0, created: 0, unchanged: 0, conflicts: 0, cannot: 0, failed: 0 };
  return {
    ...{ runId: 'undo-1.1', undoOf: 'sync-a.1', feed: 'homes', chatbot: 'SN-R', outcome: 'ok', retryable: false },
    ...{ dryRun: false, force: false, calls: 1, summary: 'undid run sync-a.1', durationMs: 1 },
    counts: { ...zero, duplicatesNotRecreated: 0, removedByRuleNotRecreated: 0 },
    plan: { creates: [], updates: [], deletes: Array.from({ length: deletes }, (_, i) => `MLS${1000 + i}`) },
    ...{ conflicts: [], cannot: [], failures: [], next: { full: 'the next sync reads the feed whole' } },
    ...{ startedAt: '2026-12-07T00:00:00.000Z', finishedAt: '2026-12-07T00:00:01.000Z' },
  };
}

beforeAll(async () => {
  const emu = await startTestEmulator();
  cleanups.push(() => emu.close());
  const dir = await mkdtemp(join(tmpdir(), 'feedsync-unreadable-'));
  cleanups.push(() => rm(dir, { recursive: true, force: true }));
  const prefix = uniquePrefix();
  const redis = testRedis();
  cleanups.push(async () => {
    await dropPrefix(redis, prefix);
    await redis.quit();
  });
  const deployment = { dir, prefix, apiUrl: emu.url, secretKey: TEST_SECRET_KEY, sessionKey: TEST_SESSION_KEY };
  config = await writeDeployment([{ name: 'homes', chatbot: 'SN-R', rows: 1 }], deployment);
  const fake: JobDefinition<{ feed: string }> = {
    name: 'listing-sync',
    kind: 'sync',
    payload: z.looseObject({ feed: z.string() }),
    target: (p) => ({ feed: p.feed, chatbot: 'SN-R' }),
    // the shape under test is the point: the job returns what a worker of another version might
    process: async (p) => RETURNED[p.feed] as RunReport,
  };
  const w = await startWorker(await loadConfig(config), {
    port: 0,
    logger: silentLogger,
    jobs: { sync: workerJob(fake) },
  });
  cleanups.push(() => w.close());
}, 60_000);

describe('enqueue --wait, a job whose return value is not a report of its kind', () => {
  it('says which job and which field, and exits 1; no crash, no garbage', async () => {
    const r = await feedsync(['enqueue', 'sync', '--feed', 'homes', '--wait', '--timeout', '60', '--config', config]);
    const jobId = r.stdout.trim();
    expect(r.stderr).toMatch(
      new RegExp(`job ${jobId} .*not a sync report.*counts: expected object, received string`, 's'),
    );
    expect(r.stderr).toContain('calls: missing (expected object)');
    expect(r.stderr).not.toMatch(/\[object Object\]|TypeError|\n\s+at /);
    expect(r.code).toBe(1);
  }, 90_000);

  it("an undo report whose omitted count is an object (what printed '… and [object Object] more'): named", () => {
    const text = formatUndoReport(boundReport(undoReport(60)));
    expect(readJobReport('undo', boundReport(undoReport(60)))).toEqual({
      report: { kind: 'undo', report: expect.anything() },
    });
    expect(text).toContain('… and 10 more');
    const old = undoReport(10);
    const wrong = { ...old, plan: { ...old.plan, omitted: { deletes: { count: 3 } } } };
    expect(readJobReport('undo', wrong)).toEqual({ problem: 'plan.omitted.deletes: expected number, received object' });
  });
});
