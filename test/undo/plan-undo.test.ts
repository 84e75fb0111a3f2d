// planUndo: what undoing a run takes, from its changes, the later runs' writes and the service now.
import { describe, expect, it } from 'vitest';
import type { ChangeEntry } from '../../src/change-log/change-log.js';
import { keptOfListing } from '../../src/listing/fingerprint.js';
import { packListing } from '../../src/listing/whole.js';
import type { ListingChange } from '../../src/sync/model/changes.js';
import { planUndo, type CurrentCopy } from '../../src/undo/plan-undo.js';
import { sampleListing } from '../helpers/emulator.js';

const listing = (key: string, patch: Record<string, unknown> = {}) => sampleListing({ MLSNumber: key, ...patch });
const e = (change: ListingChange, dryRun = false): ChangeEntry => ({
  runId: 'R',
  at: '',
  feed: 'f',
  chatbot: 'SN',
  dryRun,
  change,
});
const plan = (
  changes: ListingChange[],
  current: Record<string, CurrentCopy[]> = {},
  opts: { dropped?: number; later?: Record<string, string>; force?: boolean } = {},
) =>
  planUndo({
    run: { runId: 'R', dropped: opts.dropped ?? 0 },
    changes: changes.map((c) => e(c)),
    laterWrites: new Map(Object.entries(opts.later ?? {})),
    current: (k) => current[k] ?? [],
    force: Boolean(opts.force),
  });
const copy = (id: number, l: ReturnType<typeof listing>): CurrentCopy => ({ id, kept: keptOfListing(l) });

describe('planUndo', () => {
  const a = listing('A');
  const a2 = listing('A', { SalePrice: 999 });

  it('deletes what the run created, puts back what it updated or deleted, and leaves the rest', () => {
    const p = plan(
      [
        { op: 'create', key: 'N', headline: {}, after: keptOfListing(listing('N')) },
        { op: 'update', key: 'A', reason: 'fields', changes: [], before: packListing(a), after: keptOfListing(a2) },
        { op: 'delete', key: 'D', reason: 'absent', before: packListing(listing('D')) },
        { op: 'delete', key: 'X', reason: 'duplicate', deleteKey: '7' },
        { op: 'delete', key: 'R', reason: 'rule:InternetEntireListingDisplayYN', before: packListing(listing('R')) },
        { op: 'delete', key: 'W', reason: 'absent', withheld: true },
        { op: 'fail', key: 'F', attempted: 'update', reason: 'HTTP 500', retryable: true },
        { op: 'create', key: 'G', headline: {}, after: keptOfListing(listing('G')) },
      ],
      { N: [copy(5, listing('N'))], A: [copy(1, a2)] },
    );
    expect(p.actions.map((x) => [x.kind, x.key])).toEqual([
      ['delete', 'N'],
      ['update', 'A'],
      ['create', 'D'],
    ]);
    expect(p.actions[1]).toMatchObject({ remoteId: 1, changes: [{ field: 'SalePrice', old: 999 }] });
    expect(p).toMatchObject({
      unchanged: 1,
      conflicts: [],
      cannot: [],
      notUndone: { duplicates: 1, withheld: 1, failed: 1, byRule: 1 },
    });
  });

  it('nets a key the run wrote twice: created then updated is deleted', () => {
    const p = plan(
      [
        { op: 'create', key: 'N', headline: {}, after: keptOfListing(a) },
        { op: 'update', key: 'N', reason: 'unlisted', changes: [], after: keptOfListing(a2) },
      ],
      { N: [copy(3, a2)] },
    );
    expect(p.actions).toEqual([{ kind: 'delete', key: 'N', remoteIds: [3] }]);
  });

  it('names conflicts (a later run, the service) and leaves them unless forced', () => {
    const changes: ListingChange[] = [
      { op: 'update', key: 'A', reason: 'fields', changes: [], before: packListing(a), after: keptOfListing(a2) },
      {
        op: 'update',
        key: 'B',
        reason: 'fields',
        changes: [],
        before: packListing(listing('B')),
        after: keptOfListing(listing('B', { Bedrooms: 1 })),
      },
      { op: 'delete', key: 'D', reason: 'absent', before: packListing(listing('D')) },
      { op: 'create', key: 'N', headline: {}, after: keptOfListing(listing('N')) },
    ];
    const current = {
      A: [copy(1, a2)],
      B: [copy(2, listing('B', { Bedrooms: 7 }))],
      D: [copy(4, listing('D', { Bedrooms: 7 }))],
      N: [copy(5, listing('N')), copy(6, listing('N'))],
    };
    const p = plan(changes, current, { later: { A: 'run S of f at T made a update' } });
    expect(p.actions).toEqual([]);
    expect(p.conflicts).toEqual([
      { key: 'A', action: 'update', reason: 'changed by a later run: run S of f at T made a update' },
      { key: 'B', action: 'update', reason: 'changed on the service since the run: Bedrooms' },
      { key: 'D', action: 'update', reason: 'the run deleted it, and the service holds it again (ID 4)' },
      { key: 'N', action: 'delete', reason: 'the service holds 2 copies of N now (IDs 5, 6)' },
    ]);
    const forced = plan(changes, current, { later: { A: 'x' }, force: true });
    expect(forced.actions.map((x) => x.key)).toEqual(['A', 'B', 'D', 'N']);
    expect(forced.conflicts.every((c) => c.forced)).toBe(true);
  });

  it('says what cannot be undone: listings not kept, changes not recorded; dry-run entries are not undone', () => {
    const p = planUndo({
      run: { runId: 'R', dropped: 3 },
      changes: [
        e({ op: 'update', key: 'A', reason: 'fields', changes: [], beforeMissing: 'not kept: budget' }),
        e({ op: 'delete', key: 'D', reason: 'absent' }),
        e({ op: 'create', key: 'Z', headline: {} }, true),
      ],
      laterWrites: new Map(),
      current: () => [],
      force: false,
    });
    expect(p.actions).toEqual([]);
    expect(p.cannot).toEqual([
      {
        reason:
          '3 change(s) of run R were counted but not kept by the change log (changeLog.maxPerRun / maxBytesPerRun): they cannot be undone',
      },
      { key: 'A', reason: 'its listing before the update was not kept: budget' },
      { key: 'D', reason: 'its listing before the delete was not kept' },
    ]);
  });
});

describe('planUndo after an interrupted undo', () => {
  it('leaves what was put back already (listed fields as before), and still sends an update of unlisted fields only', () => {
    const a = listing('A');
    const aBad = listing('A', { SalePrice: 1 });
    const u = listing('U');
    const uBad = listing('U', { Location: 'Elsewhere' });
    const p = plan(
      [
        { op: 'update', key: 'A', reason: 'fields', changes: [], before: packListing(a), after: keptOfListing(aBad) },
        { op: 'delete', key: 'D', reason: 'absent', before: packListing(listing('D')) },
        { op: 'update', key: 'U', reason: 'unlisted', changes: [], before: packListing(u), after: keptOfListing(uBad) },
      ],
      { A: [copy(1, a)], D: [copy(9, listing('D'))], U: [copy(2, uBad)] },
    );
    expect(p.unchanged).toBe(2);
    expect(p.conflicts).toEqual([]);
    expect(p.actions).toEqual([expect.objectContaining({ kind: 'update', key: 'U', remoteId: 2 })]);
  });
});
