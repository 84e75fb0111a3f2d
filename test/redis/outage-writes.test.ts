// Writes that fail while Redis is away (an outage, a failover) are not dropped silently: the run
// history of the worker keeps a refused record and writes it later, in order; the change log's
// recorder keeps a refused batch and writes it again at the end of the run, and what still cannot
// be written is counted and said in the run's report.
import { describe, expect, it } from 'vitest';
import type { ChangeEntry, ChangeLog, RunEntry } from '../../src/change-log/change-log.js';
import { createChangeRecorder } from '../../src/change-log/recorder.js';
import { silentLogger } from '../../src/log.js';
import { createHistoryWriter, runRecord, type RunRecord } from '../../src/queue/run-records.js';
import { until } from '../queue/helpers.js';

const rec = (jobId: string): RunRecord =>
  runRecord({
    jobId,
    job: 'listing-sync',
    queue: 'listing-sync',
    attempt: { made: 1, max: 3 },
    feed: 'homes',
    report: { outcome: 'ok', summary: jobId },
  });

/** A store that refuses every write while `down` is true. */
function flaky() {
  const state = { down: true, saved: [] as string[] };
  const save = async (r: RunRecord) => {
    if (state.down) throw new Error('Connection is closed.');
    state.saved.push(r.jobId);
  };
  return { state, save };
}

describe('run history during an outage', () => {
  it('a refused record is kept and written when Redis answers again, before and in order with the next ones', async () => {
    const { state, save } = flaky();
    const kept: string[] = [];
    const writer = createHistoryWriter(save, { retryMs: 20, onKept: (r) => kept.push(r.jobId) });
    expect(await writer.record(rec('a'))).toBe('kept');
    expect(await writer.record(rec('b'))).toBe('kept');
    expect(writer.pending).toBe(2);
    state.down = false;
    await until('the kept records to be written', async () => writer.pending === 0);
    expect(await writer.record(rec('c'))).toBe('written');
    expect(state.saved).toEqual(['a', 'b', 'c']);
    expect(kept[0]).toBe('a');
    expect(writer.lost).toBe(0);
  });

  it('past its bound the oldest record is handed to onLost (logged whole) and counted, never dropped silently', async () => {
    const { save } = flaky();
    const lost: string[] = [];
    const writer = createHistoryWriter(save, { retryMs: 60_000, max: 2, onLost: (r) => lost.push(r.jobId) });
    for (const id of ['a', 'b', 'c']) await writer.record(rec(id));
    expect(lost).toEqual(['a']);
    expect(writer.lost).toBe(1);
    expect(writer.pending).toBe(2);
  });
});

describe('change log during an outage', () => {
  const meta = { runId: 'r1', feed: 'homes', chatbot: 'SN-1', dryRun: false };
  const run = {
    startedAt: 't0',
    finishedAt: 't1',
    durationMs: 1,
    outcome: 'ok',
    summary: 'synced',
    counts: { created: 600 },
  };
  const change = (i: number) => ({ op: 'create' as const, key: `MLS${i}`, headline: {} });

  function log(refuse: (call: number) => boolean) {
    const appended: ChangeEntry[] = [];
    const runs: RunEntry[] = [];
    let calls = 0;
    const l: ChangeLog = {
      location: 'test',
      append: async (entries) => {
        if (refuse(calls++)) throw new Error("READONLY You can't write against a read only replica.");
        appended.push(...entries);
      },
      finishRuns: async (r) => void runs.push(...r),
      run: async () => ({ changes: [], total: 0 }),
      history: async () => [],
      runs: async () => [],
      close: async () => {},
    };
    return { l, appended, runs };
  }

  it('a batch refused during the run is written again at its end: every change recorded, nothing to report', async () => {
    const { l, appended, runs } = log((call) => call === 0); // the first batch of 500 meets the failover
    const recorder = createChangeRecorder(l, meta, { maxPerRun: 10_000, logger: silentLogger });
    for (let i = 0; i < 600; i++) recorder.sink(change(i));
    const entry = await recorder.finish(run);
    expect(appended).toHaveLength(600);
    expect(entry).toMatchObject({ recorded: 600 });
    expect(entry.message).toBeUndefined();
    expect(recorder.unrecorded()).toBeUndefined();
    expect(runs).toHaveLength(1);
  });

  it('what still cannot be written is counted in the run record and said for the report', async () => {
    const { l, appended, runs } = log((call) => call === 0 || call === 2); // the batch fails again at the end
    const recorder = createChangeRecorder(l, meta, { maxPerRun: 10_000, logger: silentLogger });
    for (let i = 0; i < 600; i++) recorder.sink(change(i));
    const entry = await recorder.finish(run);
    expect(appended).toHaveLength(100);
    expect(entry.recorded).toBe(100);
    expect(entry.message).toContain('500 change(s) not recorded');
    expect(recorder.unrecorded()).toMatch(/^change log incomplete: 500 change\(s\) not recorded \(READONLY/);
    expect(runs[0]).toMatchObject({ recorded: 100 });
  });
});
