// Source fields an idx or vow feed never sends: the built-in list (RESO Data Dictionary names of
// fields meant for agents and brokers, not consumers; docs/display-rules.md cites each group) and a
// feed's own `display.withhold`. A mapping that reads one (a preset's or a field's rule, `extension`,
// the attribution template) is a config error naming the field and the rule, so no restricted
// value is ever put in a listing; so is a `display.flags` entry naming one (a rule that cannot read
// its flag quotes the value in the record's rejection reason). A preset's ExtensionColumn entry that reads one (the agent's
// email a feed withholds) is not an error: it is left out of the feed's listings (compile.ts).
import type { DisplayRules } from './display-config.js';
import { templateFields } from './display-config.js';
import type { FieldRuleObject, MappingConfig } from './config-schema.js';
import { presetNamed } from './presets/registry.js';
import { rulePaths } from './rule-paths.js';

/** Group → RESO Data Dictionary (Property) fields. */
export const RESTRICTED_GROUPS: Readonly<Record<string, readonly string[]>> = {
  'private and office remarks': ['PrivateRemarks', 'PrivateOfficeRemarks', 'AgentRemarks', 'SyndicationRemarks'],
  'showing instructions and contacts': [
    'ShowingInstructions',
    'ShowingContactName',
    'ShowingContactPhone',
    'ShowingContactPhoneExt',
    'ShowingContactType',
  ],
  'lockbox and access codes': ['LockBoxLocation', 'LockBoxSerialNumber', 'LockBoxType', 'AccessCode'],
  compensation: [
    'BuyerAgencyCompensation',
    'BuyerAgencyCompensationType',
    'SubAgencyCompensation',
    'SubAgencyCompensationType',
    'TransactionBrokerCompensation',
    'TransactionBrokerCompensationType',
    'DualVariableCompensationYN',
  ],
  'owner and occupant names and phones': ['OwnerName', 'OwnerPhone', 'OccupantName', 'OccupantPhone'],
};

/** Every built-in restricted field, with its group. */
export const RESTRICTED_FIELDS: ReadonlyMap<string, string> = new Map(
  Object.entries(RESTRICTED_GROUPS).flatMap(([group, fields]) => fields.map((f) => [f, group] as const)),
);

/** A source field a feed's mapping reads that it may not: where (the config path under the feed) and what. */
export interface RestrictedRead {
  /** path under the feed, e.g. ['mapping', 'fields', 'Description'] */
  path: (string | number)[];
  /** the rule, as a person finds it: "mapping.fields.Description", "the reso preset's rule for Description" */
  rule: string;
  /** the source path read */
  source: string;
  field: string;
  /** the built-in group, or "display.withhold" */
  why: string;
}

/** The restricted fields of a feed: the built-in list for idx and vow, and always its own `withhold`. */
export function restrictedOf(display: Pick<DisplayRules, 'purpose' | 'withhold'>): Map<string, string> {
  const out = new Map<string, string>();
  if (display.purpose !== 'internal') for (const [f, group] of RESTRICTED_FIELDS) out.set(f.toLowerCase(), group);
  for (const f of display.withhold) out.set(f.toLowerCase(), 'display.withhold');
  return out;
}

/** Every place the feed's mapping (and attribution) reads a restricted field. */
export function restrictedReads(
  mapping: MappingConfig,
  display: Pick<DisplayRules, 'purpose' | 'withhold' | 'attribution' | 'fields'>,
): RestrictedRead[] {
  const restricted = restrictedOf(display);
  if (restricted.size === 0) return [];
  const out: RestrictedRead[] = [];
  const check = (source: string, path: (string | number)[], rule: string) => {
    // a dotted path reads each of its segments' fields: Listing.PrivateRemarks is PrivateRemarks
    for (const segment of source.split('.')) {
      const why = restricted.get(segment.trim().toLowerCase());
      if (why !== undefined) out.push({ path, rule, source, field: segment.trim(), why });
    }
  };
  const preset = mapping.preset ? presetNamed(mapping.preset) : undefined;
  for (const [field, rule] of Object.entries(preset?.fields ?? {}) as [string, FieldRuleObject][]) {
    if (Object.hasOwn(mapping.fields, field)) continue; // the feed's own rule replaces it
    for (const source of ruleSources(rule))
      check(source, ['mapping', 'preset'], `the ${mapping.preset} preset's rule for ${field}`);
  }
  for (const [field, rule] of Object.entries(mapping.fields) as [string, FieldRuleObject | null][]) {
    if (rule)
      for (const source of ruleSources(rule)) check(source, ['mapping', 'fields', field], `mapping.fields.${field}`);
  }
  const extension: [string, string][] = Array.isArray(mapping.extension)
    ? mapping.extension.map((p) => [p, p])
    : Object.entries(mapping.extension);
  extension.forEach(([key, source], i) =>
    check(source, ['mapping', 'extension', Array.isArray(mapping.extension) ? i : key], `mapping.extension ${key}`),
  );
  if (display.attribution !== undefined)
    for (const source of templateFields(display.attribution))
      check(source, ['display', 'attribution'], 'display.attribution');
  // a rule's field under a local name (display.flags): the rule reads it, and quotes what it cannot read
  for (const [rule, source] of Object.entries(display.fields))
    if (source !== rule) check(source, ['display', 'flags', rule], `display.flags.${rule}`);
  return out;
}

/** The source paths a field rule reads (rule-paths.ts: one reading of a rule for every check). */
function ruleSources(rule: FieldRuleObject): string[] {
  const { from, template, units, per } = rulePaths(rule);
  return [...new Set([...from, ...template, ...units, ...per])];
}
