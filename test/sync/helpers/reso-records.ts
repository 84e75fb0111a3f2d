// RESO records for the sync tests against test/helpers/reso-server.ts: `n` records a RESO feed
// shows (the generator's, those its display rules keep off left out), keys K-01… in key order,
// ListingId L-01… (the chatbot's MLSNumber), one a minute from 2025-01-01 in the same order
// (`digits` and `everyMs` for other widths and steps).
import { generateResoRecords } from '../../../fixtures/generate.js';

/**
 * StandardStatus values a RESO feed does not show by default (display.purpose idx,
 * docs/display-rules.md): the off-market ones (the reso preset skips them), Closed (display.soldDays
 * 0) and Coming Soon (not among the default display.statuses).
 */
export const NOT_SHOWN = new Set([
  'Expired',
  'Withdrawn',
  'Canceled',
  'Delete',
  'Incomplete',
  'Hold',
  'Closed',
  'Coming Soon',
]);

export function keyedResoRecords(
  n: number,
  seed: number,
  { digits = 2, everyMs = 60_000 } = {},
): Record<string, unknown>[] {
  const base = generateResoRecords(n * 3, { seed }).filter(
    (r) => r.MlgCanView !== false && !NOT_SHOWN.has(String(r.StandardStatus)),
  );
  return base.slice(0, n).map((r, i) => ({
    ...r,
    ListingKey: `K-${String(i + 1).padStart(digits, '0')}`,
    ListingId: `L-${String(i + 1).padStart(digits, '0')}`,
    ModificationTimestamp: new Date(Date.UTC(2025, 0, 1) + i * everyMs).toISOString(),
    PropertyType: 'Residential',
  }));
}

/**
 * A RESO feed `mls` of a YAML config's `feeds:` list, into `chatbot`: `source` its source's own lines
 * (url, credentials), no retry, no photo timestamp; the reso preset's mapping.
 */
export function resoFeedYaml(chatbot: string, source: readonly string[]): string[] {
  return [
    '  - name: mls',
    `    chatbot: ${chatbot}`,
    '    source:',
    '      kind: reso',
    ...source.map((l) => `      ${l}`),
    '      retries: 0',
    '      photosTimestampField: null',
    '    mapping:',
    '      preset: reso',
    '      fields:',
    "        Url: { template: 'https://broker.test/l/{ListingId}' }",
  ];
}
