// What a mapping rule reads of a record, as source paths: its `from` (a list: any one of them
// yields the value), each `{Path}` of its template, the field naming its unit (a unit named
// outright, `Square Feet`, reads nothing), and the field naming the period of a `per` amount
// (AssociationFeeFrequency). A path reads its first segment's field (`Location.StreetAddress` reads
// Location). The one reading of a rule: feed drift's fields (mapped-fields.ts), the CSV header's
// check (columns-needed.ts), the restricted-field check (restricted-fields.ts) and a RESO source's
// $select check (config/select-reads.ts) all take it from here. Pure.
import { AREA_UNIT_NAMES, type FieldRuleObject, type MappingConfig } from './config-schema.js';

const UNIT_NAMES = new Set<string>(AREA_UNIT_NAMES);

/** The field a source path reads: its first segment. */
export const fieldOf = (path: string): string => path.split('.')[0]!;

/** The source paths `rule` reads, by how it reads them. */
export function rulePaths(rule: FieldRuleObject): {
  from: string[];
  template: string[];
  units: string[];
  per: string[];
} {
  const from = rule.from === undefined ? [] : Array.isArray(rule.from) ? rule.from : [rule.from];
  const template = [...(rule.template ?? '').matchAll(/\{([^}]+)\}/g)].map((m) => m[1]!.trim());
  const unitFrom =
    rule.unit === undefined
      ? []
      : typeof rule.unit.from === 'string'
        ? [rule.unit.from]
        : Object.entries(rule.unit.from).flat();
  return {
    from,
    template,
    units: unitFrom.filter((u) => !UNIT_NAMES.has(u)),
    per: rule.per === undefined ? [] : [rule.per.from],
  };
}

/** mapping.extension as [ExtensionColumn key, source path] pairs (a list's key is its path). */
export function extensionEntries(config: MappingConfig): Array<readonly [string, string]> {
  return Array.isArray(config.extension)
    ? config.extension.map((p) => [p, p] as const)
    : Object.entries(config.extension);
}
