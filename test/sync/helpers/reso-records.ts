// RESO records for the sync tests against test/helpers/reso-server.ts: `n` on-market records (the
// generator's, off-market and MlgCanView: false left out), keys K-01… in key order, ListingId L-01…
// (the chatbot's MLSNumber), one a minute from 2025-01-01 in the same order.
import { generateResoRecords } from '../../../fixtures/generate.js';

const OFF_MARKET = new Set(['Expired', 'Withdrawn', 'Canceled', 'Delete', 'Incomplete', 'Hold', 'Closed']);

export function keyedResoRecords(n: number, seed: number): Record<string, unknown>[] {
  const base = generateResoRecords(n * 3, { seed }).filter((r) => r.MlgCanView !== false && !OFF_MARKET.has(String(r.StandardStatus)));
  return base.slice(0, n).map((r, i) => ({
    ...r,
    ListingKey: `K-${String(i + 1).padStart(2, '0')}`,
    ListingId: `L-${String(i + 1).padStart(2, '0')}`,
    ModificationTimestamp: new Date(Date.UTC(2025, 0, 1, 0, i)).toISOString(),
    PropertyType: 'Residential',
  }));
}
