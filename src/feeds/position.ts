// Where a record is, said one way everywhere (sync report, feed preview, change log, parse errors):
// `feeds/zillow.xml:354, record 10` (the line, and the record number for formats where a record
// spans lines), `feeds/reso-pages.json, record 45 (ListingKey K1000045, ListingId RES1000045)`.
import type { RecordPosition } from './types.js';

/** What formatPosition reads of a position: a report's copy of one names no more (cli/job-report.ts checks these). */
export type PositionView = Pick<RecordPosition, 'file' | 'line' | 'index' | 'id' | 'ids'>;

export function formatPosition(p: PositionView): string {
  const at = p.line !== undefined ? `${p.file}:${p.line}` : p.file;
  const ids =
    p.ids && Object.keys(p.ids).length
      ? Object.entries(p.ids)
          .map(([k, v]) => `${k} ${v}`)
          .join(', ')
      : p.id;
  return `${at}, record ${p.index}${ids ? ` (${ids})` : ''}`;
}
