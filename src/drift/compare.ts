// The findings of `feed drift`, pure: a feed's mapping against what its source's dictionary says
// now (and said at the read before). A finding names what will break a sync before it does:
// - gone: a field the mapping reads that the entity type no longer has (it had it at a read before;
//   on a first read, a field the feed's own mapping names and the server lacks); a navigation
//   property (Media) is not a field, and never "not offered";
// - renamed: such a field, and a field new since the read before with the same lookup list (else,
//   the only field the mapping does not read with that list; else the only new field of the same Edm
//   type); on a first read, a field the server lacks and a field whose lookup values its `map`
//   covers: "X looks renamed to Y";
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
import type { DictionarySnapshot, LookupEntry } from './snapshot.js';

export type DriftKind = 'gone' | 'renamed' | 'value' | 'values' | 'system';

export interface DriftFinding {
  kind: DriftKind;
  /** the source field (gone, renamed, value) */
  field?: string;
  /** renamed: the field it looks renamed to, and why */
  to?: string;
  why?: string;
  /** value: the lookup value no map covers; system: the new OriginatingSystemName */
  value?: string;
  message: string;
}

/** A field the resource offered at an earlier read and lacks since (kept by the check across reads). */
export interface Vanished {
  type: string;
  lookup?: string;
  /** the last read that had it */
  lastSeen: string;
}

export interface CompareInput {
  mapped: readonly MappedField[];
  current: DictionarySnapshot;
  previous?: DictionarySnapshot;
  /** fields offered at a read before `previous` and absent since */
  vanished?: Readonly<Record<string, Vanished>>;
  /** the renames a read found (field → its new name, and why): they stand while the new name is offered */
  renamed?: Readonly<Record<string, { to: string; why: string }>>;
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

type Renamed = { to: string; why: string };

/** Fields of the current read that the mapping does not read: what a mapped field may have been renamed to. */
function unmapped(input: CompareInput): string[] {
  const mapped = new Set(input.mapped.map((m) => m.field));
  return Object.keys(input.current.fields).filter((f) => !mapped.has(f));
}

/**
 * The field `field` (offered before, as `before` says) looks renamed to, and why: the one it was
 * found renamed to at an earlier read; a field new since the read before with the same lookup list;
 * the only field the mapping does not read with that lookup list; else the only new field of the
 * same Edm type.
 */
function renamedFrom(field: string, before: Vanished, input: CompareInput): Renamed | undefined {
  const { current, previous } = input;
  const found = input.renamed?.[field];
  if (found && found.to in current.fields) return found;
  const fresh = previous ? Object.keys(current.fields).filter((f) => !(f in previous.fields)) : [];
  const lookup = before.lookup;
  if (lookup !== undefined) {
    const sameLookup = fresh.find((f) => current.lookupOf[f] === lookup);
    if (sameLookup) return { to: sameLookup, why: `the same lookup ${lookup}` };
    const others = unmapped(input).filter((f) => current.lookupOf[f] === lookup);
    if (others.length === 1) return { to: others[0]!, why: `the same lookup ${lookup}` };
  }
  const sameType = fresh.filter((f) => current.fields[f] === before.type && current.lookupOf[f] === undefined);
  return sameType.length === 1 ? { to: sameType[0]!, why: `the only new field of type ${before.type}` } : undefined;
}

/** How many of a lookup list's values a map covers, in any spelling. */
function coveredValues(list: readonly LookupEntry[], covers: ReadonlySet<string>): number {
  return list.filter((e) => [e.value, e.standard, e.legacy].some((s) => s !== undefined && covers.has(foldLookup(s))))
    .length;
}

/** Whether a map covers at least half of a (non-empty) lookup list's values: the list may be the one its field now reads. */
export function coversList(list: readonly LookupEntry[], covers: ReadonlySet<string>): boolean {
  const covered = coveredValues(list, covers);
  return covered > 0 && covered * 2 >= list.length;
}

/**
 * A field never seen offered (a first read): the field the mapping does not read whose lookup list's
 * values the field's `map` covers (at least half of them), the one covering most; undefined without a
 * map or such a field.
 */
function renamedByValues(readers: readonly MappedField[], input: CompareInput): Renamed | undefined {
  const reader = readers.find((r) => r.covers);
  if (!reader) return undefined;
  let best: (Renamed & { covered: number }) | undefined;
  for (const f of unmapped(input)) {
    const list = input.current.lookupOf[f];
    const values = list === undefined ? undefined : input.current.lookups[list];
    if (!values?.length) continue;
    const covered = coveredValues(values, reader.covers!);
    if (!coversList(values, reader.covers!) || covered <= (best?.covered ?? 0)) continue;
    best = {
      to: f,
      why: `its lookup ${list}: ${covered} of its ${values.length} values are ones the map of ${reader.usedBy} covers`,
      covered,
    };
  }
  return best && { to: best.to, why: best.why };
}

/** What the read before (or an earlier one) knew of `field`, where it offered it. */
function seenBefore(field: string, input: CompareInput): Vanished | undefined {
  const { previous } = input;
  if (previous && field in previous.fields) {
    const lookup = previous.lookupOf[field];
    return { type: previous.fields[field]!, ...(lookup !== undefined && { lookup }), lastSeen: previous.readAt };
  }
  return input.vanished?.[field];
}

function fieldFindings(input: CompareInput, out: Comparison): void {
  const { current, previous } = input;
  for (const [field, readers] of byField(input.mapped)) {
    // a navigation property (Media, OpenHouse) is not a field: `$expand` brings it
    if (field in current.fields || current.navigation?.includes(field)) continue;
    const uses = readers.map((r) => r.usedBy).join(', ');
    const before = seenBefore(field, input);
    const renamed = before ? renamedFrom(field, before, input) : renamedByValues(readers, input);
    if (renamed) {
      out.findings.push({
        kind: 'renamed',
        field,
        to: renamed.to,
        why: renamed.why,
        message: `${field} looks renamed to ${renamed.to} (${renamed.why}); the mapping reads ${field} for ${uses}`,
      });
    } else if (before || (previous === undefined && readers.some((r) => r.own))) {
      const since = before
        ? `no longer in the ${current.resource} entity type (it was at ${before.lastSeen})`
        : `not in the ${current.resource} entity type`;
      out.findings.push({ kind: 'gone', field, message: `${field} is ${since}; the mapping reads it for ${uses}` });
    } else out.notOffered.push(field);
  }
}

/** Most fields kept as vanished: the oldest go first. */
const VANISHED_KEPT = 500;

/**
 * The fields offered at some read and absent from `current`: those vanished before it, and those
 * `previous` had; bounded (VANISHED_KEPT, the most recently seen kept).
 */
export function vanishedAfter(
  vanished: Readonly<Record<string, Vanished>> | undefined,
  previous: DictionarySnapshot | undefined,
  current: DictionarySnapshot,
): Record<string, Vanished> {
  const out: Record<string, Vanished> = {};
  for (const [field, v] of Object.entries(vanished ?? {})) if (!(field in current.fields)) out[field] = v;
  for (const [field, type] of Object.entries(previous?.fields ?? {})) {
    if (field in current.fields) continue;
    const lookup = previous!.lookupOf[field];
    out[field] = { type, ...(lookup !== undefined && { lookup }), lastSeen: previous!.readAt };
  }
  const newest = Object.entries(out)
    .sort((a, b) => b[1].lastSeen.localeCompare(a[1].lastSeen))
    .slice(0, VANISHED_KEPT);
  return Object.fromEntries(newest);
}

/** The renames among the findings: field → its new name, and why. */
export function renamesOf(findings: readonly DriftFinding[]): Record<string, { to: string; why: string }> {
  return Object.fromEntries(
    findings.filter((f) => f.kind === 'renamed').map((f) => [f.field!, { to: f.to!, why: f.why ?? '' }]),
  );
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
