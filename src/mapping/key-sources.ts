// Where a listing key comes from in the source, the mapping read backwards: the source fields a key
// (MLSNumber or Url as mapped) is read from and the value each would hold, so a source can be asked
// for the record of a key (confirming an absence before a delete, issue 22). Pure.
//
// Only rules that can be read backwards exactly: `from` top-level fields (the first non-empty wins,
// so each is asked), or a `template` with one {Field} placeholder (its text around it stripped).
// A rule that transforms, maps, picks from a list or has a default cannot: undefined.
import type { FieldRuleObject } from './config-schema.js';

export interface KeySource {
  /** the source field (a top-level name, as a $filter names it) */
  field: string;
  /** the value the field holds for a record with this listing key, or undefined when none could */
  valueOf(key: string): string | undefined;
}

const FIELD = /^[A-Za-z_][A-Za-z0-9_]*$/;

export function keySources(rule: FieldRuleObject | undefined): KeySource[] | undefined {
  if (
    !rule ||
    rule.transform?.length ||
    rule.map ||
    rule.list ||
    rule.unit ||
    rule.when ||
    rule.default !== undefined ||
    rule.skip?.length
  )
    return undefined;
  const froms = rule.from === undefined ? [] : Array.isArray(rule.from) ? rule.from : [rule.from];
  if (froms.some((f) => !FIELD.test(f))) return undefined;
  const out: KeySource[] = froms.map((field) => ({ field, valueOf: (key) => key }));
  if (rule.template) {
    const parts = rule.template.split(/\{([^{}]+)\}/);
    if (parts.length !== 3) return undefined;
    const [before, field, after] = [parts[0]!, parts[1]!.trim(), parts[2]!];
    if (!FIELD.test(field)) return undefined;
    out.push({
      field,
      valueOf: (key) =>
        key.startsWith(before) && key.endsWith(after) && key.length > before.length + after.length
          ? key.slice(before.length, key.length - after.length)
          : undefined,
    });
  }
  return out.length ? out : undefined;
}
