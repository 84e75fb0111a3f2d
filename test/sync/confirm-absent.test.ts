// confirm-absent.ts, issue 54 point 4: an incremental run's removal asks for the key's other records,
// and the full pull's rule (the key's last record in the reader's key order) decides. Pure: a lookup
// that answers from a list, a take that records what it was given.
import { describe, expect, it } from 'vitest';
import type { FeedItem, KeyAsk, KeyLookup } from '../../src/feeds/types.js';
import { confirmAbsences, type AbsenceInput } from '../../src/sync/settle/confirm-absent.js';
import type { PlannedDelete } from '../../src/sync/model/plan-types.js';

const record = (ListingKey: string, ListingId: string, on = true): FeedItem => ({
  kind: 'record',
  position: { file: 'Property', index: 0, id: ListingKey },
  data: { ListingKey, ListingId, StandardStatus: on ? 'Active' : 'Withdrawn' },
});

function setup(held: FeedItem[], deletes: PlannedDelete[], idField = 'ListingKey') {
  const asks: KeyAsk[][] = [];
  const taken: FeedItem[] = [];
  const holds = new Set<string>();
  const lookup: KeyLookup = {
    paging: { used: 'keyset', advice: '' },
    idField,
    async *find(wanted) {
      asks.push([...wanted]);
      yield held.filter((r) => wanted.some((a) => a.values.includes(String(r.data?.[a.field]))));
    },
  };
  const input: AbsenceInput = {
    deletes,
    lookup,
    sources: [
      { field: 'ListingId', valueOf: (k) => k },
      { field: 'ListingKey', valueOf: (k) => k },
    ],
    keyOf: (i) => String(i.data?.ListingId),
    limit: 100,
    keyRule: 'MLSNumber',
    removals: true,
    take: async (items) => {
      taken.push(...items);
      for (const i of items) if (i.data?.StandardStatus === 'Active') holds.add(String(i.data.ListingId));
    },
    holds: (k) => holds.has(k),
  };
  return { input, asks, taken };
}

const offMarket = (key: string): PlannedDelete => ({
  key,
  reason: 'off-market',
  deleteKey: key,
  keyType: 'MLSNumber',
  remoteIds: [1],
});

describe('confirmAbsences, an incremental removal', () => {
  it("asks by ListingId (not by the record's own ListingKey), takes the key's last record in key order whatever the answer's order, and keeps the listing it holds", async () => {
    const { input, asks, taken } = setup(
      [record('K2', 'A'), record('K1', 'A', false), record('K3', 'B', false)],
      [offMarket('A'), offMarket('B')],
    );
    const out = await confirmAbsences(input);
    expect(asks).toEqual([[{ field: 'ListingId', values: ['A', 'B'] }]]);
    // B is held once at the source: left as read, not taken again
    expect(taken.map((i) => i.position.id)).toEqual(['K2']);
    expect(out.deletes.map((d) => d.key)).toEqual(['B']);
    expect(out.missed).toBeUndefined();
  });

  it('the later record off the market: it decides, the delete stands', async () => {
    const { input, taken } = setup([record('K1', 'A'), record('K2', 'A', false)], [offMarket('A')]);
    const out = await confirmAbsences(input);
    expect(taken.map((i) => i.position.id)).toEqual(['K2']);
    expect(out.deletes.map((d) => d.key)).toEqual(['A']);
  });

  it('each record the source answers has its key read once, and carries it to take (issue 52 point 4)', async () => {
    const { input, taken } = setup([record('K2', 'A'), record('K1', 'A'), record('K3', 'A')], [offMarket('A')]);
    const read: string[] = [];
    const out = await confirmAbsences({
      ...input,
      keyOf: (i) => (read.push(String(i.position.id)), input.keyOf(i)),
    });
    expect(read.sort()).toEqual(['K1', 'K2', 'K3']);
    expect(taken.map((i) => [i.position.id, 'key' in i && i.key])).toEqual([['K3', 'A']]);
    expect(out.deletes).toEqual([]);
  });

  it("a listing key read from the record's own id alone asks nothing", async () => {
    const { input, asks } = setup([record('K1', 'A')], [offMarket('A')], 'ListingId');
    const out = await confirmAbsences({ ...input, sources: [{ field: 'ListingId', valueOf: (k) => k }] });
    expect(asks).toEqual([]);
    expect(out).toEqual({ deletes: [offMarket('A')], asked: 0 });
  });

  it('a lookup that fails deletes nothing this run', async () => {
    const { input } = setup([], [offMarket('A')]);
    const failing: AbsenceInput = {
      ...input,
      lookup: {
        paging: { used: 'keyset', advice: '' },
        // eslint-disable-next-line require-yield -- fails before answering
        async *find() {
          throw new Error('503 from the server');
        },
      },
    };
    const out = await confirmAbsences(failing);
    expect(out.problem).toMatch(/could not be asked of the source.*503 from the server.*nothing is deleted/);
  });
});
