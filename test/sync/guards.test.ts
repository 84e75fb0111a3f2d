import { describe, expect, it } from 'vitest';
import { evaluateGuards, type GuardInput } from '../../src/sync/settle/guards.js';
import type { PlannedDelete } from '../../src/sync/model/plan-types.js';
import type { SyncPlan } from './helpers/whole-plan.js';

const del = (key: string, reason: PlannedDelete['reason'] = 'absent'): PlannedDelete => ({
  key,
  reason,
  deleteKey: key,
  keyType: 'MLSNumber',
  remoteIds: [1],
});
const plan = (deletes: PlannedDelete[]): SyncPlan => ({
  keyBy: 'MLSNumber',
  creates: [],
  updates: [],
  deletes,
  unchanged: 0,
  recordFingerprints: [],
  duplicates: [],
  protectedKeys: [],
  otherFeeds: 0,
});
const NOW = new Date('2024-05-01T12:00:00Z');

const input = (deletes: PlannedDelete[], patch: Partial<GuardInput> = {}): GuardInput => ({
  plan: plan(deletes),
  deletes: { maxFraction: 0.25, maxCount: 500, graceHours: 0 },
  remote: { count: 100, complete: true },
  feed: { complete: true, mode: 'full', valid: 90 },
  force: false,
  now: NOW,
  missingSince: new Map(),
  ...patch,
});

describe('evaluateGuards', () => {
  it('passes deletes within the fraction and count', () => {
    const d = evaluateGuards(input([del('A'), del('B')]));
    expect(d.outcome).toBe('passed');
    expect(d.allowed.map((x) => x.key)).toEqual(['A', 'B']);
  });

  it('trips over maxFraction and names what it would delete and how to proceed', () => {
    const many = Array.from({ length: 30 }, (_, i) => del(`K${i}`));
    const d = evaluateGuards(input(many));
    expect(d.outcome).toBe('tripped');
    expect(d.allowed).toEqual([]);
    expect(d.withheld).toHaveLength(30);
    expect(d.message).toContain('would have deleted 30 listing(s) (K0, K1, K2, K3, K4, … 25 more)');
    expect(d.message).toContain('--force');
    expect(d.message).toContain('--dry-run');
  });

  it('trips over maxCount', () => {
    const d = evaluateGuards(
      input([del('A'), del('B'), del('C')], { deletes: { maxFraction: 1, maxCount: 2, graceHours: 0 } }),
    );
    expect(d.outcome).toBe('tripped');
    expect(d.reasons).toEqual(['3 deletes exceed deletes.maxCount 2']);
  });

  it('trips on an incomplete feed, an incomplete remote side and a feed with no valid listing', () => {
    expect(
      evaluateGuards(input([del('A')], { feed: { complete: false, readError: 'HTTP 500', mode: 'full', valid: 50 } }))
        .reasons[0],
    ).toContain('HTTP 500');
    expect(
      evaluateGuards(input([del('A')], { remote: { count: 100, complete: false, problem: 'VirtualCount 101' } }))
        .outcome,
    ).toBe('tripped');
    expect(evaluateGuards(input([del('A')], { feed: { complete: true, mode: 'full', valid: 0 } })).reasons).toContain(
      'the feed yielded no valid listing',
    );
  });

  it('lets --force lift the count and fraction limits and the empty-feed check', () => {
    const d = evaluateGuards(
      input([del('A'), del('B'), del('C')], {
        force: true,
        deletes: { maxFraction: 0.01, maxCount: 1, graceHours: 0 },
        feed: { complete: true, mode: 'full', valid: 0 },
      }),
    );
    expect(d.outcome).toBe('forced');
    expect(d.allowed).toHaveLength(3);
  });

  it('never lets --force delete after an incomplete read of the feed or of the remote side', () => {
    for (const patch of [
      { feed: { complete: false, readError: 'HTTP 401', mode: 'full' as const, valid: 90 } },
      { remote: { count: 100, complete: false, problem: 'VirtualCount lies' } },
    ]) {
      const d = evaluateGuards(input([del('A')], { force: true, ...patch }));
      expect(d.outcome).toBe('tripped');
      expect(d.allowed).toEqual([]);
      expect(d.message).toContain('--force does not');
    }
  });

  it("withholds the deletes that may be another feed's, whose state is missing, even forced, and judges the rest as usual", () => {
    const unsynced = { writers: ['feed-b', 'routed>SN-1'], deletes: [del('B1'), del('B2')] };
    const d = evaluateGuards(input([del('A', 'off-market')], { unsynced, force: true }));
    expect(d.outcome).toBe('tripped');
    expect(d.allowed.map((x) => x.key)).toEqual(['A']);
    expect(d.withheld.map((x) => x.key)).toEqual(['B1', 'B2']);
    expect(d.reasons).toEqual(['feed feed-b, feed routed of this chatbot have no sync state']);
    expect(d.message).toContain('held 2 delete(s) of listings this feed no longer has (B1, B2)');
    expect(d.message).toContain('(feedsync sync --feed feed-b, feedsync sync --feed routed)');
    expect(d.message).toContain('--force does not lift this');
  });

  it('is silent when nothing is to be deleted, even for an empty feed', () => {
    expect(evaluateGuards(input([], { feed: { complete: false, mode: 'full', valid: 0 } })).outcome).toBe('none');
  });

  it('holds absent listings for the grace period, marks them, and clears marks of keys that came back', () => {
    const grace = { maxFraction: 1, maxCount: 500, graceHours: 12 };
    const missingSince = new Map([
      ['OLD', '2024-04-30T20:00:00Z'], // 16 h ago: due
      ['NEW', '2024-05-01T06:00:00Z'], // 6 h ago: waits
      ['BACK', '2024-05-01T01:00:00Z'], // no longer missing
    ]);
    const d = evaluateGuards(
      input([del('OLD'), del('NEW'), del('FRESH'), del('GONE', 'removed')], { deletes: grace, missingSince }),
    );
    expect(d.allowed.map((x) => x.key)).toEqual(['OLD', 'GONE']);
    expect(d.waiting.map((x) => x.key)).toEqual(['NEW', 'FRESH']);
    expect(d.marks).toEqual({ set: [['FRESH', NOW.toISOString()]], clear: ['BACK'] });
  });

  it('sets no grace marks from a feed that was not read whole', () => {
    const d = evaluateGuards(
      input([del('A')], {
        deletes: { maxFraction: 1, maxCount: 9, graceHours: 1 },
        feed: { complete: false, mode: 'full', valid: 5 },
      }),
    );
    expect(d.marks).toEqual({ set: [], clear: [] });
  });

  it('a removal by a display rule is not counted toward the limits and goes whatever holds the rest (docs/display-rules.md)', () => {
    const byRule = Array.from({ length: 60 }, (_, i) => del(`R${i}`, 'rule:InternetEntireListingDisplayYN'));
    // 60% of the remote listings removed by rule: passed
    const ruled = evaluateGuards(input(byRule));
    expect(ruled.outcome).toBe('passed');
    expect(ruled.allowed).toHaveLength(60);
    // the same share absent: tripped, nothing allowed
    const absent = evaluateGuards(input(Array.from({ length: 60 }, (_, i) => del(`A${i}`))));
    expect(absent.outcome).toBe('tripped');
    expect(absent.allowed).toEqual([]);
    // both: the absences are held, the rule's removals go; a read that was not whole holds the absences only
    for (const patch of [{}, { feed: { complete: false, readError: 'cut off', mode: 'full' as const, valid: 90 } }]) {
      const both = evaluateGuards(
        input([...byRule, del('A1'), del('A2'), ...Array.from({ length: 30 }, (_, i) => del(`B${i}`))], patch),
      );
      expect(both.outcome).toBe('tripped');
      expect(both.allowed.map((d) => d.reason)).toEqual(byRule.map(() => 'rule:InternetEntireListingDisplayYN'));
      expect(both.withheld).toHaveLength(32);
      expect(both.message).toMatch(/60 removal\(s\) by a display rule went: they are not held/);
    }
  });
});
