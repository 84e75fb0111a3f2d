// A field the desired listing no longer has is cleared on the chatbot, end to end over HTTP: the
// reso preset's HOAMonth (AssociationFee per AssociationFeeFrequency) on a listing synced with a
// monthly fee, then its frequency turned One Time (no monthly amount: the mapping gives no HOAMonth)
// and, on another listing, the fee taken away together with its remarks (a text field, the same rule).
// The update sends the listing whole and without the field (the spec's update takes the whole
// listing: docs/contracts.md, "open points"), so the list no longer answers the old fee; a rerun
// writes nothing (the cleared field is seen as unset on both sides, not as a change every run).
import { describe, expect, it } from 'vitest';
import { generateResoRecords } from '../../fixtures/generate.js';
import type { TestEmulator } from '../helpers/emulator.js';
import { startResoServer } from '../helpers/reso-server.js';
import { SN, useEmulatorSync, writeCounts } from './helpers/feed.js';

const bodies: Array<{ path: string; body: string }> = [];
const emulator = useEmulatorSync({ bodies });

/** the chatbot's listings as the spec's list answers them, by MLSNumber */
const listed = async (te: TestEmulator) =>
  new Map((await te.api.listListings({ SerialNumber: SN, PageSize: 100 })).List.map((i) => [i.MLSNumber, i]));
/** the update bodies the emulator received since `from`, as sent */
const updatesSince = (from: number) =>
  bodies
    .slice(from)
    .filter((b) => b.path.endsWith('/RealEstateUpdate'))
    .map((b) => JSON.parse(b.body) as Record<string, unknown>);

describe('a field the feed no longer gives is cleared on the chatbot (reso preset, HOAMonth)', () => {
  it('frequency turned One Time, and a fee (with its remarks) taken away: each listing updated once without the field, the list answers it unset, a rerun writes nothing', async () => {
    const te = emulator.te();
    const env = emulator.env();
    const [a, b, c] = generateResoRecords(12, { seed: 29 }).filter(
      (r) => r.MlgCanView !== false && r.StandardStatus === 'Active' && !String(r.PropertyType).includes('Lease'),
    );
    const records: Record<string, unknown>[] = [
      { ...a!, AssociationFee: 250, AssociationFeeFrequency: 'Monthly' },
      { ...b!, AssociationFee: 1200, AssociationFeeFrequency: 'Annually', PublicRemarks: 'Quiet street, new roof.' },
      { ...c!, AssociationFee: 90, AssociationFeeFrequency: 'Monthly' },
    ];
    const server = emulator.closeAfterTest(await startResoServer({ records }));
    const feed = env.feed({
      source: { kind: 'reso', url: server.url, retries: 0, photosTimestampField: null },
      mapping: { preset: 'reso', fields: { Url: { template: 'https://broker.test/l/{ListingId}' } } },
      deletes: { maxFraction: 1 },
    });
    const [idA, idB, idC] = [String(a!.ListingId), String(b!.ListingId), String(c!.ListingId)];

    const first = await env.sync(te, feed);
    expect(first.outcome, first.message).toBe('ok');
    expect(first.counts.created).toBe(3);
    const before = await listed(te);
    expect([before.get(idA)?.HOAMonth, before.get(idB)?.HOAMonth, before.get(idC)?.HOAMonth]).toEqual([
      '250',
      '100',
      '90',
    ]);
    expect(before.get(idB)?.Description).toBe('Quiet street, new roof.');

    server.touch(String(a!.ListingKey), { AssociationFeeFrequency: 'One Time' });
    server.touch(String(b!.ListingKey), { AssociationFee: null, AssociationFeeFrequency: null, PublicRemarks: null });
    const from = bodies.length;
    const second = await env.sync(te, feed);
    expect(second.outcome, second.message).toBe('ok');
    expect(second.counts).toMatchObject({ created: 0, updated: 2, deleted: 0, failed: 0 });

    // the calls: one update each, the listing whole (its required fields) without the fields it no longer has
    const sent = updatesSince(from);
    expect(sent.map((u) => u.Key).sort()).toEqual([idA, idB].sort());
    for (const u of sent) {
      expect(u).not.toHaveProperty('HOAMonth');
      expect(u).toMatchObject({ KeyType: 'MLSNumber', SerialNumber: SN, Status: 'Active', CurrencySymbol: '$' });
    }
    expect(sent.find((u) => u.Key === idB)).not.toHaveProperty('Description');
    expect(bodies.slice(from).filter((b) => /RealEstate(Create|Delete)$/.test(b.path))).toEqual([]);

    // what the chatbot holds: no stale fee for either, the remarks gone, the third untouched
    const after = await listed(te);
    expect(after.size).toBe(3);
    expect(after.get(idA)?.HOAMonth).toBe('');
    expect(after.get(idB)?.HOAMonth).toBe('');
    expect(after.get(idB)?.Description).toBe('');
    expect(after.get(idC)?.HOAMonth).toBe('90');

    const counts = await writeCounts(te);
    const again = await env.sync(te, feed);
    expect(again.counts).toMatchObject({ created: 0, updated: 0, deleted: 0 });
    expect(await writeCounts(te)).toEqual(counts);
  });
});
