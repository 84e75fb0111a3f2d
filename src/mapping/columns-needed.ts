// The columns a CSV feed's own mapping reads, for the reader to judge the header by before any row
// (feeds/csv/csv-reader.ts): a rule's `from` needs one of its columns (a list: any of them), a
// template each field it names, a unit rule the column that names the unit, an ExtensionColumn
// entry each of its paths. A column is a path's first segment (`Location.City` reads Location). A
// preset's rules are left out: a preset names the fields of many feeds, not all of which one file
// has; what they miss shows in the rejected records. Pure.
import type { ColumnNeed } from '../feeds/types.js';
import { AREA_UNIT_NAMES, type FieldRuleObject, type MappingConfig } from './config-schema.js';
import { extensionPaths } from './extension-source.js';

const UNIT_NAMES = new Set<string>(AREA_UNIT_NAMES);
const columnOf = (path: string) => path.split('.')[0]!;

function ruleNeeds(usedBy: string, rule: FieldRuleObject): ColumnNeed[] {
  const out: ColumnNeed[] = [];
  const from = rule.from === undefined ? [] : Array.isArray(rule.from) ? rule.from : [rule.from];
  if (from.length) out.push({ usedBy, anyOf: [...new Set(from.map(columnOf))] });
  for (const m of (rule.template ?? '').matchAll(/\{([^}]+)\}/g)) out.push({ usedBy, anyOf: [columnOf(m[1]!.trim())] });
  const unitFrom =
    rule.unit === undefined
      ? []
      : typeof rule.unit.from === 'string'
        ? [rule.unit.from]
        : Object.entries(rule.unit.from).flat();
  for (const u of unitFrom) if (!UNIT_NAMES.has(u)) out.push({ usedBy: `${usedBy} (its unit)`, anyOf: [columnOf(u)] });
  return out;
}

/** The columns the feed's own mapping reads, once each (the first reader named). */
export function columnsNeeded(config: MappingConfig): ColumnNeed[] {
  const needs: ColumnNeed[] = [];
  for (const [field, rule] of Object.entries(config.fields) as Array<[string, FieldRuleObject | null]>)
    if (rule) needs.push(...ruleNeeds(field, rule));
  const extension = Array.isArray(config.extension)
    ? config.extension.map((p) => [p, p] as const)
    : Object.entries(config.extension);
  for (const [key, source] of extension)
    for (const p of extensionPaths(source)) needs.push({ usedBy: `ExtensionColumn ${key}`, anyOf: [columnOf(p)] });
  const seen = new Set<string>();
  return needs.filter((n) => {
    const id = n.anyOf.join('\u0000');
    if (seen.has(id)) return false;
    seen.add(id);
    return true;
  });
}
