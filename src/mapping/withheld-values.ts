// What a person is not shown of a source record (feed preview --key, unless --show-restricted): its
// restricted fields (restricted-fields.ts: the built-in list for idx and vow, and display.withhold),
// and, when the record's InternetAddressDisplayYN does not read as allowed on an idx or vow feed,
// the source fields its mapping reads for the street address and pin (the listing fields the
// display rules withhold: display-rules.ts ADDRESS_FIELDS). Pure.
import type { MappingConfig } from './config-schema.js';
import type { DisplayRules } from './display-config.js';
import { ADDRESS_FIELDS, readFlag } from './display-rules.js';
import { mappedFields } from './mapped-fields.js';
import { compilePath } from './paths.js';
import { restrictedOf } from './restricted-fields.js';

export const ADDRESS_WITHHELD = 'address withheld (InternetAddressDisplayYN)';

/** A field left out, and why: "restricted: private and office remarks", "listed in display.withhold", ADDRESS_WITHHELD. */
export interface LeftOut {
  field: string;
  why: string;
}

/** The record's fields a person is not shown: field (as the record spells it) → why. */
export function withheldOfRecord(
  record: Record<string, unknown>,
  mapping: MappingConfig,
  rules: DisplayRules,
): Map<string, string> {
  const restricted = restrictedOf(rules);
  const address =
    rules.purpose !== 'internal' && addressWithheld(record, rules) ? addressSources(mapping) : new Set<string>();
  const out = new Map<string, string>();
  for (const field of Object.keys(record)) {
    const group = restricted.get(field.toLowerCase());
    if (group !== undefined)
      out.set(field, group === 'display.withhold' ? 'listed in display.withhold' : `restricted: ${group}`);
    else if (address.has(field.toLowerCase())) out.set(field, ADDRESS_WITHHELD);
  }
  return out;
}

/** The record without the fields left out, and what was left out (in the record's order). */
export function recordShown(
  record: Record<string, unknown>,
  mapping: MappingConfig,
  rules: DisplayRules,
): { record: Record<string, unknown>; leftOut: LeftOut[] } {
  const withheld = withheldOfRecord(record, mapping, rules);
  if (withheld.size === 0) return { record, leftOut: [] };
  return {
    record: Object.fromEntries(Object.entries(record).filter(([k]) => !withheld.has(k))),
    leftOut: [...withheld].map(([field, why]) => ({ field, why })),
  };
}

/** The record's address flag does not say the address may be shown (false, or unreadable: display-rules.ts). */
function addressWithheld(record: Record<string, unknown>, rules: DisplayRules): boolean {
  const flag = readFlag(compilePath(rules.fields.InternetAddressDisplayYN)(record));
  return flag === false || flag === 'unreadable';
}

/** The source fields (lower case) the mapping reads for the listing fields an address withheld leaves out. */
function addressSources(mapping: MappingConfig): Set<string> {
  const listed = new Set<string>(ADDRESS_FIELDS);
  return new Set(
    mappedFields(mapping)
      .filter((m) => listed.has(m.usedBy))
      .map((m) => m.field.toLowerCase()),
  );
}
