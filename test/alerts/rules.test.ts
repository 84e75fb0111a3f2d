// The alert rules alone: each condition with its default, one notice when it starts, none while it
// holds, one "resolved" when it clears.
import { describe, expect, it } from 'vitest';
import { AlertRules } from '../../src/alerts/config-schema.js';
import {
  afterRun,
  emptyState,
  staleness,
  transitions,
  type AlertState,
  type RunObservation,
} from '../../src/alerts/rules.js';
import { observationAt } from './observation.js';

const rules = AlertRules.parse({});
const t0 = new Date('2026-11-22T10:00:00Z');
const run = observationAt(t0);

function play(runs: RunObservation[], start: AlertState = emptyState()) {
  let state = start;
  const notices: string[][] = [];
  for (const r of runs) {
    const a = afterRun(state, r, rules);
    const t = transitions(a.state, a.holding, t0);
    state = t.state;
    notices.push(t.notices.map((n) => `${n.status} ${n.condition}`));
  }
  return { state, notices };
}

describe('alert rules (defaults)', () => {
  it('has a default for every rule', () => {
    expect(rules).toEqual({
      guard: true,
      failedRuns: 3,
      rejectedFraction: 0.1,
      feedRejected: true,
      validDropFraction: 0.3,
      staleHours: 36,
      unmappedValues: true,
      chatCheck: true,
      sourceDrift: true,
      openAfterRuns: 1,
      closeAfterMinutes: 60,
    });
  });

  it('a flapping feed (bad, good, bad, ...) alerts once and resolves once it has stayed clear for closeAfterMinutes', () => {
    const bad = run({ rejected: 50 });
    const good = run();
    let state = emptyState();
    const seen: string[] = [];
    const at = (minutes: number) => new Date(t0.getTime() + minutes * 60_000);
    // a run every 15 minutes: bad, good, bad, good, bad, then good for an hour and more
    const runs: Array<[RunObservation, number]> = [
      [bad, 0],
      [good, 15],
      [bad, 30],
      [good, 45],
      [bad, 60],
      [good, 75],
      [good, 90],
      [good, 105],
      [good, 120],
      [good, 135],
    ];
    for (const [r, minutes] of runs) {
      const a = afterRun(state, r, rules);
      const t = transitions(a.state, a.holding, at(minutes), rules);
      state = t.state;
      seen.push(...t.notices.map((n) => `${minutes} ${n.status} ${n.condition}`));
    }
    expect(seen).toEqual(['0 firing rejected', '135 resolved rejected']);
  });

  it('feed-rejected: a rejected run alerts with its message, keeps no good run, and resolves on the next good one', () => {
    const rejected = run({ outcome: 'rejected', valid: 0, rejected: 0, message: '`Beds` is not in the header' });
    const a = afterRun(emptyState(), rejected, AlertRules.parse({ closeAfterMinutes: 0 }));
    expect(a.holding.get('feed-rejected')).toBe('the run was rejected: `Beds` is not in the header');
    expect(a.state.lastOkAt).toBeUndefined();
    expect(a.state.lastGoodValid).toBeUndefined();
    const { notices } = play([rejected, rejected, run()]);
    expect(notices).toEqual([['firing feed-rejected'], [], ['resolved feed-rejected']]);
    expect(
      afterRun(emptyState(), rejected, AlertRules.parse({ feedRejected: false })).holding.has('feed-rejected'),
    ).toBe(false);
  });

  it('openAfterRuns: a condition alerts only once it held that many runs in a row', () => {
    const strict = AlertRules.parse({ openAfterRuns: 2, closeAfterMinutes: 0 });
    const bad = run({ rejected: 50 });
    let state = emptyState();
    const seen: string[] = [];
    for (const [i, r] of [bad, run(), bad, run(), bad, bad, run()].entries()) {
      const a = afterRun(state, r, strict);
      const t = transitions(a.state, a.holding, t0, strict);
      state = t.state;
      seen.push(...t.notices.map((n) => `${i} ${n.status}`));
    }
    expect(seen).toEqual(['5 firing', '6 resolved']);
  });

  it('a guard trip alerts once while it holds, and resolves on the next run without one', () => {
    const { notices } = play([
      run(),
      run({ outcome: 'guard', message: 'would delete 50' }),
      run({ outcome: 'guard' }),
      run(),
    ]);
    expect(notices).toEqual([[], ['firing guard'], [], ['resolved guard']]);
  });

  it('failed or unavailable N times in a row', () => {
    const { notices } = play([
      run({ outcome: 'unavailable' }),
      run({ outcome: 'partial' }),
      run({ outcome: 'error' }),
      run({ outcome: 'unavailable' }),
      run(),
    ]);
    expect(notices).toEqual([[], [], ['firing failing'], [], ['resolved failing']]);
  });

  it('rejected records above the fraction', () => {
    const { notices } = play([run({ rejected: 10 }), run({ rejected: 11 }), run({ rejected: 2 })]);
    expect(notices).toEqual([[], ['firing rejected'], ['resolved rejected']]);
  });

  it('valid records dropped against the last good run; a run that never read its feed does not count', () => {
    const { notices, state } = play([
      run({ valid: 100 }),
      run({ outcome: 'unavailable', valid: 0 }),
      run({ valid: 60 }),
      run({ valid: 65 }),
      run({ valid: 95 }),
    ]);
    expect(notices).toEqual([[], [], ['firing dropped'], [], ['resolved dropped']]);
    expect(state.lastGoodValid).toBe(95);
  });

  it('runs that end failed (an authentication refused among them) raise `failing` after the configured count', () => {
    const refused = {
      outcome: 'failed',
      message: 'the RESO server refused the bearer token of source.bearerToken (HTTP 401)',
      valid: 0,
      records: 0,
    };
    const { notices } = play([run(refused), run(refused), run(refused), run(refused), run()]);
    expect(notices).toEqual([[], [], ['firing failing'], [], ['resolved failing']]);
  });

  it('valid records compare like with like: an incremental run with the last good incremental run, a full run with the last full one; a read not whole with none', () => {
    const full = (valid: number, patch: Partial<RunObservation> = {}) =>
      run({ mode: 'full', complete: true, valid, records: valid, ...patch });
    const inc = (valid: number) => run({ mode: 'incremental', complete: true, valid, records: valid });
    const { notices, state } = play([
      full(463),
      inc(0),
      inc(12),
      full(460),
      full(120, { outcome: 'partial', complete: false }),
      inc(2),
      full(200),
    ]);
    expect(notices).toEqual([[], [], [], [], [], ['firing dropped'], []]);
    expect(state.lastGoodValidByMode).toEqual({ full: 460, incremental: 12 });
    const again = play([full(463), full(200), inc(5), full(450)]);
    expect(again.notices).toEqual([[], ['firing dropped'], [], ['resolved dropped']]);
  });

  it('unmapped lookup values and a failed chat check', () => {
    const { notices } = play([
      run({ unmapped: ['Status: "Under Review"'] }),
      run({ chat: { asked: 3, answerable: 2, missing: ['ATX1'] } }),
      run({ chat: { asked: 3, answerable: 3, missing: [] } }),
    ]);
    expect(notices.map((n) => [...n].sort())).toEqual([
      ['firing unmapped'],
      ['firing chat', 'resolved unmapped'],
      ['resolved chat'],
    ]);
  });

  it('no successful sync for H hours', () => {
    const state: AlertState = { ...emptyState(), lastOkAt: t0.toISOString() };
    expect(staleness(state, rules, new Date(t0.getTime() + 35 * 3_600_000), undefined)).toBeUndefined();
    expect(staleness(state, rules, new Date(t0.getTime() + 37 * 3_600_000), undefined)).toMatch(
      /no successful sync for 37\.0 h/,
    );
    // never synced: counted from when it was first watched
    expect(staleness(emptyState(), rules, new Date(t0.getTime() + 40 * 3_600_000), t0.toISOString())).toMatch(/since/);
  });
});
