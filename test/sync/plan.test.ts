import { describe, expect, it } from 'vitest';
import { fingerprintListing } from '../../src/listing/fingerprint.js';
import { planSync } from './helpers/whole-plan.js';
import type { PlanOptions } from '../../src/sync/model/plan-types.js';
import { desiredSide, listing, listItem, remoteSide } from './helpers/listings.js';

const opts = (patch: Partial<PlanOptions> = {}): PlanOptions => ({
  keyBy: 'MLSNumber',
  deletesMode: 'mirror',
  ignore: new Set(),
  fingerprints: new Map(),
  ...patch,
});

describe('planSync', () => {
  it('creates, updates with changed fields, deletes the absent and counts the unchanged', () => {
    const a = listing('A'),
      b = listing('B', { SalePrice: 400000 }),
      c = listing('C');
    const plan = planSync(
      desiredSide([a, b, c]),
      remoteSide([listItem(1, a), listItem(2, listing('B')), listItem(3, listing('Z'))]),
      opts(),
    );
    expect(plan.creates.map((x) => x.key)).toEqual(['C']);
    expect(plan.updates).toMatchObject([
      { key: 'B', remoteId: 2, reason: 'fields', changes: [{ field: 'SalePrice', old: 350000, new: 400000 }] },
    ]);
    expect(plan.deletes).toEqual([
      { key: 'Z', reason: 'absent', deleteKey: 'Z', keyType: 'MLSNumber', remoteIds: [3] },
    ]);
    expect(plan.unchanged).toBe(1);
    expect(plan.recordFingerprints).toEqual([['A', fingerprintListing(a)]]);
  });

  it('updates a listing whose list fields agree but whose fingerprint differs (Location changed)', () => {
    const old = listing('A', { Location: 'Old town' });
    const now = listing('A', { Location: 'Downtown' });
    const plan = planSync(
      desiredSide([now]),
      remoteSide([listItem(1, old)]),
      opts({ fingerprints: new Map([['A', fingerprintListing(old)]]) }),
    );
    expect(plan.updates).toMatchObject([{ key: 'A', reason: 'unlisted', changes: [] }]);
    expect(plan.unchanged).toBe(0);
  });

  it('does not update for an ignored field alone', () => {
    const fp = fingerprintListing(listing('A', { DaysOnMarket: 4 }), new Set(['DaysOnMarket']));
    const plan = planSync(
      desiredSide([listing('A', { DaysOnMarket: 5 })]),
      // the remote side is hashed with the same ignore set the plan is given (as a sync does)
      remoteSide([listItem(1, listing('A', { DaysOnMarket: 4 }))], 'MLSNumber', true, ['DaysOnMarket']),
      opts({ ignore: new Set(['DaysOnMarket']), fingerprints: new Map([['A', fp]]) }),
    );
    expect(plan.updates).toEqual([]);
    expect(plan.unchanged).toBe(1);
    expect(plan.recordFingerprints).toEqual([]);
  });

  it('keeps the copy matching the feed and deletes the other copies by NewOaks ID', () => {
    const a = listing('A');
    const plan = planSync(
      desiredSide([a]),
      remoteSide([
        listItem(4, listing('A', { SalePrice: 1 })),
        listItem(7, a),
        listItem(9, listing('A', { SalePrice: 2 })),
      ]),
      opts(),
    );
    expect(plan.duplicates).toEqual([{ key: 'A', keepId: 7, extraIds: [4, 9] }]);
    expect(plan.deletes).toEqual([
      { key: 'A', reason: 'duplicate', deleteKey: '4', keyType: 'NewOaks', remoteIds: [4] },
      { key: 'A', reason: 'duplicate', deleteKey: '9', keyType: 'NewOaks', remoteIds: [9] },
    ]);
    expect(plan.updates).toEqual([]);
    expect(plan.unchanged).toBe(1);
  });

  it('keeps the newest copy when none matches, and updates it', () => {
    const plan = planSync(
      desiredSide([listing('A', { SalePrice: 5 })]),
      remoteSide([listItem(4, listing('A')), listItem(9, listing('A'))]),
      opts(),
    );
    expect(plan.duplicates).toEqual([{ key: 'A', keepId: 9, extraIds: [4] }]);
    expect(plan.updates).toMatchObject([{ key: 'A', remoteId: 9 }]);
  });

  it('in keep mode deletes nothing, duplicates only reported', () => {
    const a = listing('A');
    const plan = planSync(
      desiredSide([a]),
      remoteSide([listItem(1, a), listItem(2, a), listItem(3, listing('Z'))]),
      opts({ deletesMode: 'keep' }),
    );
    expect(plan.deletes).toEqual([]);
    expect(plan.duplicates).toHaveLength(1);
  });

  it('protects the remote listing of a rejected record with a readable key', () => {
    const plan = planSync(
      desiredSide([], { protectedKeys: new Set(['P']) }),
      remoteSide([listItem(1, listing('P')), listItem(2, listing('Q'))]),
      opts(),
    );
    expect(plan.protectedKeys).toEqual(['P']);
    expect(plan.deletes.map((d) => d.key)).toEqual(['Q']);
  });

  it('never deletes a listing another feed of the chatbot wrote', () => {
    const plan = planSync(
      desiredSide([]),
      remoteSide([listItem(1, listing('OTHER')), listItem(2, listing('MINE'))]),
      opts({ ownedElsewhere: (r) => r.key === 'OTHER' }),
    );
    expect(plan.deletes.map((d) => d.key)).toEqual(['MINE']);
    expect(plan.otherFeeds).toBe(1);
  });

  it('in an incremental feed deletes only the keys marked removed or off-market', () => {
    const a = listing('A');
    const plan = planSync(
      desiredSide([a], {
        mode: 'incremental',
        goneKeys: new Map([
          ['R', 'removed'],
          ['S', 'off-market'],
        ]),
      }),
      remoteSide([listItem(1, a), listItem(2, listing('R')), listItem(3, listing('S')), listItem(4, listing('T'))]),
      opts(),
    );
    expect(plan.deletes.map((d) => [d.key, d.reason])).toEqual([
      ['R', 'removed'],
      ['S', 'off-market'],
    ]);
  });

  it('keys by URL: creates, deletes and updates by the listing Url', () => {
    const a = listing('A', { Url: 'https://x/a' });
    const moved = listing('A', { Url: 'https://x/a2' });
    const plan = planSync(
      {
        ...desiredSide([]),
        listings: new Map([
          ['https://x/a2', { key: 'https://x/a2', listing: moved, position: { file: 'f', index: 0 } }],
        ]),
      },
      remoteSide([listItem(1, a)], 'URL'),
      opts({ keyBy: 'URL' }),
    );
    expect(plan.creates.map((c) => c.key)).toEqual(['https://x/a2']);
    expect(plan.deletes).toEqual([
      {
        key: 'https://x/a',
        reason: 'absent',
        deleteKey: 'https://x/a',
        keyType: 'URL',
        remoteIds: [1],
        mlsNumber: 'A',
      },
    ]); // (a URL-keyed delete carries the copy's MLSNumber: undo reads it back by it)
  });

  it('decides the same by hash when the remote canonical form is not kept (a real run)', () => {
    const a = listing('A'),
      b = listing('B', { SalePrice: 400000, DaysOnMarket: 9 }),
      c = listing('C', { DaysOnMarket: 30 });
    const remote = remoteSide(
      [
        listItem(1, a),
        listItem(2, listing('B')),
        listItem(3, listing('C')),
        listItem(4, listing('A', { SalePrice: 1 })),
      ],
      'MLSNumber',
      false,
      ['DaysOnMarket'],
    );
    const plan = planSync(desiredSide([a, b, c]), remote, opts({ ignore: new Set(['DaysOnMarket']) }));
    expect(plan.updates).toMatchObject([{ key: 'B', remoteId: 2, reason: 'fields', changes: [] }]);
    expect(plan.unchanged).toBe(2);
    expect(plan.duplicates).toEqual([{ key: 'A', keepId: 1, extraIds: [4] }]);
  });
});
