// The columns a CSV feed's own mapping reads, for the reader to judge the header by before any row
// (feeds/csv/csv-reader.ts): a rule's `from` needs one of its columns (a list: any of them), a
// template each field it names, a unit rule the column that names the unit, a `per` rule the column
// that names the period, an ExtensionColumn
// entry each of its paths. A column is a path's first segment (`Location.City` reads Location). A
// preset's rules are left out: a preset names the fields of many feeds, not all of which one file
// has; what they miss shows in the rejected records. Pure.
import type { ColumnNeed } from '../feeds/types.js';
import type { FieldRuleObject, MappingConfig } from './config-schema.js';
import { extensionPaths } from './extension-source.js';
import { extensionEntries, fieldOf, rulePaths } from './rule-paths.js';

function ruleNeeds(usedBy: string, rule: FieldRuleObject): ColumnNeed[] {
  const { from, template, units, per } = rulePaths(rule);
  return [
    ...(from.length ? [{ usedBy, anyOf: [...new Set(from.map(fieldOf))] }] : []),
    ...template.map((p) => ({ usedBy, anyOf: [fieldOf(p)] })),
    ...units.map((u) => ({ usedBy: `${usedBy} (its unit)`, anyOf: [fieldOf(u)] })),
    ...per.map((p) => ({ usedBy: `${usedBy} (its period)`, anyOf: [fieldOf(p)] })),
  ];
}

/** The columns the feed's own mapping reads, once each (the first reader named). */
export function columnsNeeded(config: MappingConfig): ColumnNeed[] {
  const needs: ColumnNeed[] = [];
  for (const [field, rule] of Object.entries(config.fields) as Array<[string, FieldRuleObject | null]>)
    if (rule) needs.push(...ruleNeeds(field, rule));
  for (const [key, source] of extensionEntries(config))
    for (const p of extensionPaths(source)) needs.push({ usedBy: `ExtensionColumn ${key}`, anyOf: [fieldOf(p)] });
  const seen = new Set<string>();
  return needs.filter((n) => {
    const id = n.anyOf.join('\u0000');
    if (seen.has(id)) return false;
    seen.add(id);
    return true;
  });
}
