// The findings of `feed drift`, pure: a feed's mapping against what its source's dictionary says
// now (and said at the read before). A finding names what will break a sync before it does:
// - gone: a field the mapping reads that the entity type no longer has (it had it at the read
//   before; on a first read, a field the feed's own mapping names and the server lacks);
// - renamed: such a field, and a field new since the read before with the same lookup list (else,
//   the only new field of the same Edm type): "X looks renamed to Y";
// - value: a lookup value the server lists for a field the mapping reads through a `map` that no
//   entry (nor `skip`) covers, in any of its spellings (LookupValue, StandardLookupValue,
//   LegacyODataValue; matched as maps match: lookup.ts);
// - values: a lookup list a mapped field reads, longer than the values a read keeps
//   (LOOKUP_VALUES_KEPT), whose digest changed since the read before: a value changed past those
//   compared (the list is counted and digested whole, never kept whole);
// - system: the OriginatingSystemName changed: the one the feed's last records carried against the
//   feed's `source.originatingSystem` or the records of the check before, or the Lookup records'.
import { foldLookup } from '../mapping/lookup.js';
import type { MappedField } from '../mapping/mapped-fields.js';
import type { DictionarySnapshot } from './snapshot.js';

export type DriftKind = 'gone' | 'renamed' | 'value' | 'values' | 'system';

export interface DriftFinding {
  kind: DriftKind;
  /** the source field (gone, renamed, value) */
  field?: string;
  /** renamed: the field it looks renamed to */
  to?: string;
  /** value: the lookup value no map covers; system: the new OriginatingSystemName */
  value?: string;
  message: string;
}

export interface CompareInput {
  mapped: readonly MappedField[];
  current: DictionarySnapshot;
  previous?: DictionarySnapshot;
  /** OriginatingSystemName: the feed's filter, what its last records carried, what they carried at the check before */
  systems: { configured?: string; records?: string; before?: string };
}

export interface Comparison {
  findings: DriftFinding[];
  /** mapped fields the server does not have and never had since feedsync looked (a preset's optional fields): not drift */
  notOffered: string[];
  /** lookup lists of mapped fields longer than the values kept: the first `compared` compared, the rest counted */
  capped: Array<{ lookup: string; values: number; compared: number }>;
}

function byField(mapped: readonly MappedField[]): Map<string, MappedField[]> {
  const out = new Map<string, MappedField[]>();
  for (const m of mapped) out.set(m.field, [...(out.get(m.field) ?? []), m]);
  return out;
}

/** The field new since `previous` that `field` looks renamed to, and why. */
function renamedTo(
  field: string,
  current: DictionarySnapshot,
  previous: DictionarySnapshot,
): { to: string; why: string } | undefined {
  const fresh = Object.keys(current.fields).filter((f) => !(f in previous.fields));
  const lookup = previous.lookupOf[field];
  const sameLookup = lookup === undefined ? undefined : fresh.find((f) => current.lookupOf[f] === lookup);
  if (sameLookup) return { to: sameLookup, why: `the same lookup ${lookup}` };
  const type = previous.fields[field];
  const sameType = fresh.filter((f) => current.fields[f] === type && current.lookupOf[f] === undefined);
  return sameType.length === 1 ? { to: sameType[0]!, why: `the only new field of type ${type}` } : undefined;
}

function fieldFindings(input: CompareInput, out: Comparison): void {
  const { current, previous } = input;
  for (const [field, readers] of byField(input.mapped)) {
    if (field in current.fields) continue;
    const uses = readers.map((r) => r.usedBy).join(', ');
    const hadIt = previous !== undefined && field in previous.fields;
    if (!hadIt && !(previous === undefined && readers.some((r) => r.own))) {
      out.notOffered.push(field);
      continue;
    }
    const renamed = hadIt ? renamedTo(field, current, previous!) : undefined;
    if (renamed) {
      out.findings.push({
        kind: 'renamed',
        field,
        to: renamed.to,
        message: `${field} looks renamed to ${renamed.to} (${renamed.why}); the mapping reads ${field} for ${uses}`,
      });
    } else {
      const since = hadIt
        ? `no longer in the ${current.resource} entity type (it was at ${previous!.readAt})`
        : `not in the ${current.resource} entity type`;
      out.findings.push({ kind: 'gone', field, message: `${field} is ${since}; the mapping reads it for ${uses}` });
    }
  }
}

function valueFindings(input: CompareInput, out: Comparison): void {
  const { current } = input;
  for (const m of input.mapped) {
    if (!m.covers || !(m.field in current.fields)) continue;
    const list = current.lookupOf[m.field];
    for (const entry of (list && current.lookups[list]) || []) {
      const spellings = [entry.value, entry.standard, entry.legacy].filter((s): s is string => s !== undefined);
      if (spellings.some((s) => m.covers!.has(foldLookup(s)))) continue;
      out.findings.push({
        kind: 'value',
        field: m.field,
        value: entry.value,
        message: `${m.field} value ${JSON.stringify(entry.value)} (lookup ${list}${entry.standard && entry.standard !== entry.value ? `, standard ${JSON.stringify(entry.standard)}` : ''}) is listed by the server and no map of ${m.usedBy} covers it`,
      });
    }
  }
}

function systemFindings(input: CompareInput, out: Comparison): void {
  const { configured, records, before } = input.systems;
  const push = (value: string, message: string) => out.findings.push({ kind: 'system', value, message });
  if (records !== undefined && configured !== undefined && records !== configured) {
    push(
      records,
      `the last records carried OriginatingSystemName ${JSON.stringify(records)}; the feed filters on source.originatingSystem ${JSON.stringify(configured)}`,
    );
  } else if (records !== undefined && before !== undefined && records !== before) {
    push(
      records,
      `OriginatingSystemName changed from ${JSON.stringify(before)} (records at the check before) to ${JSON.stringify(records)} (the last records)`,
    );
  }
  const was = input.previous?.systems ?? [];
  const now = input.current.systems;
  if (was.length && now.join('\u0000') !== was.join('\u0000')) {
    push(
      now.join(', '),
      `the Lookup records' OriginatingSystemName changed from ${JSON.stringify(was.join(', '))} to ${JSON.stringify(now.join(', ') || '(none)')}`,
    );
  }
}

/** Lookup lists of mapped fields longer than the values kept: said, and a change among the values not kept found by the list's digest. */
function cappedLists(input: CompareInput, out: Comparison): void {
  const { current, previous } = input;
  const lists = new Set(
    input.mapped.filter((m) => m.covers && m.field in current.fields).map((m) => current.lookupOf[m.field]),
  );
  for (const list of lists) {
    const size = list === undefined ? undefined : current.lookupSizes?.[list];
    const compared = current.lookups[list!]?.length ?? 0;
    if (size === undefined || size.values <= compared) continue;
    out.capped.push({ lookup: list!, values: size.values, compared });
    const before = previous?.lookupSizes?.[list!];
    if (before && before.digest !== size.digest) {
      out.findings.push({
        kind: 'values',
        value: list,
        message: `lookup ${list} changed since ${previous!.readAt} (${before.values} values then, ${size.values} now); only its first ${compared} are compared with the mapping, so the change may lie among the others`,
      });
    }
  }
}

export function compareDictionary(input: CompareInput): Comparison {
  const out: Comparison = { findings: [], notOffered: [], capped: [] };
  fieldFindings(input, out);
  valueFindings(input, out);
  cappedLists(input, out);
  systemFindings(input, out);
  return out;
}
