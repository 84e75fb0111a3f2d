// The source fields a feed's mapping reads, and for a field read through a value `map` the source
// values that map covers: what `feed drift` compares with the source's dictionary. Pure. A path
// reads its first segment's field (`Location.StreetAddress` → Location); a template reads each
// `{Path}`; a unit rule the field naming the unit; a `per` rule the field naming the period; the
// ExtensionColumn entries their paths (rule-paths.ts).
import type { FieldRuleObject, MappingConfig } from './config-schema.js';
import { mergedRules } from './compile.js';
import { extensionPaths } from './extension-source.js';
import { foldLookup } from './lookup.js';
import { presetNamed } from './presets/registry.js';
import { extensionEntries, fieldOf, rulePaths } from './rule-paths.js';

export interface MappedField {
  /** the source field (a path's first segment) */
  field: string;
  /** what reads it: a listing field (Status), or `ExtensionColumn ListAgentName` */
  usedBy: string;
  /** the source values the rule's `map` and `skip` cover, folded (lookup.ts); only for a rule with a map and no "*" */
  covers?: ReadonlySet<string>;
  /** the feed's own mapping names it (not its preset alone) */
  own: boolean;
}

function coverage(rule: FieldRuleObject): ReadonlySet<string> | undefined {
  if (!rule.map || '*' in rule.map) return undefined;
  return new Set([...Object.keys(rule.map), ...(rule.skip ?? [])].map(foldLookup));
}

/** Every source field the mapping reads, once per (field, reader); config order, preset first. */
export function mappedFields(config: MappingConfig): MappedField[] {
  const own = new Set<string>();
  for (const rule of Object.values(config.fields) as Array<FieldRuleObject | null>) {
    if (!rule) continue;
    const { from, template, units, per } = rulePaths(rule);
    for (const p of [...from, ...template, ...units, ...per]) own.add(fieldOf(p));
  }
  const extension = extensionEntries(config);
  for (const [, path] of extension) own.add(fieldOf(path));

  const out = new Map<string, MappedField>();
  const add = (field: string, usedBy: string, covers?: ReadonlySet<string>) => {
    const key = `${field}\u0000${usedBy}`;
    if (!out.has(key)) out.set(key, { field, usedBy, ...(covers && { covers }), own: own.has(field) });
  };
  for (const [listingField, rule] of Object.entries(mergedRules(config)) as Array<[string, FieldRuleObject]>) {
    const { from, template, units, per } = rulePaths(rule);
    const covers = coverage(rule);
    for (const p of from) add(fieldOf(p), listingField, covers);
    for (const p of [...template, ...units, ...per]) add(fieldOf(p), listingField);
  }
  const presetExtension = config.preset ? (presetNamed(config.preset).extension ?? {}) : {};
  for (const [key, source] of Object.entries(presetExtension))
    for (const p of extensionPaths(source)) add(fieldOf(p), `ExtensionColumn ${key}`);
  for (const [key, path] of extension) add(fieldOf(path), `ExtensionColumn ${key}`);
  return [...out.values()];
}
