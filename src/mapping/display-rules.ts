// The display rules of a feed (display-config.ts), applied to one source record: pure, no I/O, the
// clock passed in. A record is
// - hidden by a rule: the seller opted out of internet display (InternetEntireListingDisplayYN
//   false), the listing broker does not take part in IDX (IDXParticipationYN false, idx only), MLS
//   Grid says it may not be shown (MlgCanView false), its StandardStatus is not among
//   `display.statuses`, or it is Closed past its sold window (CloseDate + soldDays);
// - held back: the attribution names a field the record lacks or holds no text in (a listing is
//   never shown without it), or a rule cannot read its value (an unreadable flag, no StandardStatus,
//   a status that is neither a Data Dictionary value nor among display.statuses). Only a value the record states removes a
//   listing by a rule, because such removals are sent at once and no delete limit holds them: a vendor
//   that stops sending StandardStatus, or a `flags` entry naming the wrong field, would otherwise
//   empty the chatbot. A held record is rejected, so the chatbot keeps what it had and the report
//   names the field;
// - or shown, with its address withheld when InternetAddressDisplayYN is false, and the attribution
//   and disclaimer rendered for ExtensionColumn. A Closed listing shown has the time its window ends.
// `internal` applies no rule: only the attribution and disclaimer, when given.
// Flags are read as MLSs send them: booleans, Y/N, Yes/No, true/false, 1/0. An absent flag hides
// nothing; a flag with any other value holds the record back (it cannot be shown to be allowed,
// nor to be forbidden).
import type { ExtensionEntry } from '../listing/schema.js';
import {
  ATTRIBUTION_KEY,
  DISCLAIMER_KEY,
  templateFields,
  type DisplayRules,
  type HideRule,
  type RuleField,
} from './display-config.js';
import { foldLookup } from './lookup.js';
import { compilePath, isEmpty, type Getter } from './paths.js';

export type DisplayVerdict =
  /** `until`: a Closed listing's window ends then (ISO): the next run after it removes the listing */
  | { kind: 'shown'; addressWithheld: boolean; extension: ExtensionEntry[]; until?: string }
  | { kind: 'hidden'; rule: HideRule; reason: string }
  /**
   * `field`: the source field at fault; `value`: what the record holds there, undefined when it has
   * no such field. `reason` reads after the field's name, as a validation issue's rule does
   * (`formatIssue`: "F is missing (reason)" without a value, "F reason (got value)" with one).
   */
  | Held;

type Held = { kind: 'held'; reason: string; field: string; value?: unknown };

export type DisplayEvaluator = (record: Record<string, unknown>) => DisplayVerdict;

/** Listing fields that hold the street address or pin the property on a map: left out when the seller withholds the address. */
export const ADDRESS_FIELDS = ['Address', 'Location', 'Latitude', 'Longitude'] as const;
/** A listing field the display rules may withhold from a listing shown. */
export type WithheldField = (typeof ADDRESS_FIELDS)[number];

const DAY_MS = 86_400_000;

/** A flag's value: true, false, or undefined when the record has none; 'unreadable' for anything else. */
export function readFlag(v: unknown): boolean | undefined | 'unreadable' {
  if (isEmpty(v)) return undefined;
  const x = Array.isArray(v) ? v[0] : v;
  if (typeof x === 'boolean') return x;
  if (typeof x === 'number') return x === 1 ? true : x === 0 ? false : 'unreadable';
  if (typeof x !== 'string') return 'unreadable';
  const s = x.trim().toLowerCase();
  if (s === 'y' || s === 'yes' || s === 'true' || s === '1') return true;
  if (s === 'n' || s === 'no' || s === 'false' || s === '0') return false;
  return 'unreadable';
}

/** How a rule is named in reports and counts: "InternetEntireListingDisplayYN false", "sold past 30 days". */
export function ruleLabel(rule: HideRule, soldDays?: number): string {
  if (rule === 'StandardStatus') return 'status not shown';
  if (rule === 'sold-window') return soldDays === undefined ? 'sold past its window' : `sold past ${soldDays} days`;
  return `${rule} false`;
}

/** The flags that hide a listing when false, in the order compileDisplay reads them (none for an internal feed). */
export function hidingFlags(purpose: DisplayRules['purpose']): Array<HideRule & RuleField> {
  if (purpose === 'internal') return [];
  return [
    'MlgCanView',
    'InternetEntireListingDisplayYN',
    ...(purpose === 'idx' ? (['IDXParticipationYN'] as const) : []),
  ];
}

/**
 * The rules' fields a record is read for when the rules apply (not internal): the hiding flags,
 * then the address flag and the sold window's date. StandardStatus is left out: a record without
 * it is held back, never shown.
 */
export function flagFieldsRead(purpose: DisplayRules['purpose']): RuleField[] {
  if (purpose === 'internal') return [];
  return [...hidingFlags(purpose), 'InternetAddressDisplayYN', 'CloseDate'];
}

/** The evaluator of a feed's rules; undefined when they do nothing (internal, no attribution or disclaimer), so mapping is as it was. */
export function compileDisplay(rules: DisplayRules, now: () => Date = () => new Date()): DisplayEvaluator | undefined {
  const render = compileRender(rules);
  if (rules.purpose === 'internal') {
    if (!render) return undefined;
    return (record) => {
      const r = render(record);
      return Array.isArray(r) ? { kind: 'shown', addressWithheld: false, extension: r } : r;
    };
  }
  const get = Object.fromEntries(
    Object.entries(rules.fields).map(([rule, path]) => [rule, compilePath(path)]),
  ) as Record<RuleField, Getter>;
  const flagRules = hidingFlags(rules.purpose);
  const statuses = new Set(rules.statuses.map(foldLookup));
  const closed = foldLookup('Closed');
  return (record) => {
    for (const field of flagRules) {
      const flag = readFlag(get[field](record));
      if (flag === false) return { kind: 'hidden', rule: field, reason: `${rules.fields[field]} is false` };
      if (flag === 'unreadable') return held(rules.fields[field], get[field](record), NOT_A_FLAG);
    }
    const status = get.StandardStatus(record);
    const folded = isEmpty(status) ? '' : foldLookup(Array.isArray(status) ? status[0] : status);
    if (!statuses.has(folded)) {
      const field = rules.fields.StandardStatus;
      if (folded === '')
        return status === undefined
          ? held(
              field,
              undefined,
              'the display rules cannot tell whether the listing may be shown without it: held back',
            )
          : held(field, status, 'is empty: the display rules cannot tell whether the listing may be shown: held back');
      if (!STANDARD_STATUSES.has(folded))
        return held(field, status, 'is neither a StandardStatus value nor among display.statuses: held back');
      return {
        kind: 'hidden',
        rule: 'StandardStatus',
        reason: `${field} ${excerpt(status)} is not among display.statuses`,
      };
    }
    let until: string | undefined;
    if (folded === closed) {
      const window = soldWindow(rules, get.CloseDate(record), now());
      if (typeof window !== 'number') return { kind: 'hidden', rule: 'sold-window', reason: window.reason };
      until = new Date(window).toISOString();
    }
    const r = render ? render(record) : [];
    if (!Array.isArray(r)) return r;
    // a flag that does not read as allowed withholds the address (an unreadable one too)
    const address = readFlag(get.InternetAddressDisplayYN(record));
    const addressWithheld = address === false || address === 'unreadable';
    return { kind: 'shown', addressWithheld, extension: r, ...(until !== undefined && { until }) };
  };
}

/** The RESO Data Dictionary's StandardStatus values (folded): a value outside them is not one the record states. */
const STANDARD_STATUSES = new Set(
  [
    'Active',
    'Active Under Contract',
    'Canceled',
    'Closed',
    'Coming Soon',
    'Delete',
    'Expired',
    'Hold',
    'Incomplete',
    'Pending',
    'Withdrawn',
  ].map(foldLookup),
);

/** A rule's field the record holds but the rules cannot read, or lacks: the record is held back, naming both. */
const held = (field: string, value: unknown, reason: string): Held => ({
  kind: 'held',
  reason,
  field,
  ...(value !== undefined && { value }),
});

const NOT_A_FLAG =
  'is not a yes/no (Y/N, Yes/No, true/false, 1/0): the display rules cannot tell whether the listing may be shown: held back';

/** The end of a Closed listing's window (epoch ms), or why it is not shown. */
function soldWindow(rules: DisplayRules, closeDate: unknown, now: Date): number | { reason: string } {
  const field = rules.fields.CloseDate;
  if (rules.soldDays === 0) return { reason: `Closed, and display.soldDays is 0 (sold listings are not shown)` };
  if (isEmpty(closeDate)) return { reason: `Closed without ${field}: its sold window cannot be told` };
  const at = Date.parse(String(Array.isArray(closeDate) ? closeDate[0] : closeDate).trim());
  if (!Number.isFinite(at)) return { reason: `${field} ${excerpt(closeDate)} is not a date` };
  const until = at + rules.soldDays * DAY_MS;
  if (now.getTime() >= until)
    return { reason: `closed ${new Date(at).toISOString().slice(0, 10)}, more than ${rules.soldDays} days ago` };
  return until;
}

/** The attribution and disclaimer of a record as ExtensionColumn entries, or why the record is held back. */
function compileRender(
  rules: DisplayRules,
): ((record: Record<string, unknown>) => ExtensionEntry[] | Held) | undefined {
  const { attribution, disclaimer } = rules;
  if (attribution === undefined && disclaimer === undefined) return undefined;
  const parts =
    attribution === undefined
      ? []
      : attribution.split(/\{([^{}]+)\}/).map((p, i) => (i % 2 ? { field: p.trim(), get: compilePath(p.trim()) } : p));
  const named = attribution === undefined ? [] : templateFields(attribution);
  return (record) => {
    const out: ExtensionEntry[] = [];
    if (attribution !== undefined) {
      let text = '';
      for (const part of parts) {
        if (typeof part === 'string') {
          text += part;
          continue;
        }
        const value = part.get(record);
        const v = textOf(value);
        if (v === undefined) return withoutAttribution(part.field, value, named);
        text += v;
      }
      out.push({ Key: ATTRIBUTION_KEY, value: text });
    }
    if (disclaimer !== undefined) out.push({ Key: DISCLAIMER_KEY, value: disclaimer });
    return out;
  };
}

/** A record held back for a field its attribution names: absent, empty, or no text (an object). */
function withoutAttribution(field: string, value: unknown, named: string[]): Held {
  const of = named.length > 1 ? ` (of ${named.join(', ')})` : '';
  const why = `display.attribution names ${field}${of}, and a listing is never shown without its attribution: held back`;
  if (value === undefined) return held(field, undefined, why);
  const blank = (Array.isArray(value) ? value : [value]).every(isEmpty);
  return held(field, value, `${blank ? 'is empty' : 'is not text'}: ${why}`);
}

function textOf(v: unknown): string | undefined {
  if (isEmpty(v)) return undefined;
  const list = Array.isArray(v) ? v : [v];
  const texts = list
    .filter((x) => typeof x === 'string' || typeof x === 'number' || typeof x === 'boolean')
    .map((x) => String(x).trim());
  const text = texts.filter((t) => t !== '').join(', ');
  return text === '' ? undefined : text;
}

function excerpt(v: unknown): string {
  const s = JSON.stringify(Array.isArray(v) ? v[0] : v) ?? String(v);
  return s.length > 80 ? `${s.slice(0, 77)}…` : s;
}
