// The two spellings RESO servers send lookup values in: Data Dictionary display names ("Active Under
// Contract") and OData enum member names ("ActiveUnderContract", as Trestle and servers in "enum
// type" mode send them). Test data is written in display form; `inSpelling(record, 'enum')` gives
// the same record as an enum-mode server would serve it.

export type Spelling = 'display' | 'enum';

/** Lookup fields of a Property record (and of its Media) that the preset reads. */
const LOOKUP_FIELDS = [
  'StandardStatus',
  'PropertyType',
  'PropertySubType',
  'LivingAreaUnits',
  'LotSizeUnits',
  'AssociationFeeFrequency',
];

export function enumMember(display: string): string {
  return display.replace(/[\s-]+/g, '');
}

export function inSpelling(record: Record<string, unknown>, spelling: Spelling): Record<string, unknown> {
  if (spelling === 'display') return record;
  const out: Record<string, unknown> = { ...record };
  for (const f of LOOKUP_FIELDS) if (typeof out[f] === 'string') out[f] = enumMember(out[f] as string);
  if (Array.isArray(out.Media)) {
    out.Media = out.Media.map((m: Record<string, unknown>) =>
      typeof m.MediaCategory === 'string' ? { ...m, MediaCategory: enumMember(m.MediaCategory) } : m,
    );
  }
  return out;
}
