// Rule changes are changes (docs/display-rules.md, "When the rules change"). A removal by a display
// rule goes outside the delete limits because the record itself, read this run, says it may not be
// shown (guards.ts). That holds when the record changed; it does not when the rules did: a new
// default after an upgrade, or a config edit, can take a third of a chatbot's listings in one run
// whose records are all as they were. So each lane stores the rules its last run applied (state.ts,
// RULES_NAMESPACE: the resolved rules as JSON, with their fingerprint), and a run compares them with
// its own. A rule whose terms differ (or every rule in force, when none are stored for a lane that
// already holds listings: a store written before rules were kept) is a changed rule: this run's
// removals by it count toward deletes.maxCount / maxFraction, and `--force` accepts them as it does
// other deletes. A removal by a rule whose terms did not change is one the old rules would have
// made too, so its record changed on its own: it stays outside the limits. Pure, no I/O.
import { hash } from 'node:crypto';
import { HIDE_RULES, type DisplayRules, type HideRule } from '../../mapping/display-config.js';

/** One rule whose terms differ from those the lane's last run applied: old → new, as a person reads them. */
export interface RuleDiff {
  rule: HideRule;
  from: string;
  to: string;
}

/** What a lane's run applies against what its last run applied. */
export interface RuleChange {
  /** the hide rules whose terms changed: their removals count toward the delete limits this run */
  rules: RuleDiff[];
  /** the rules as stored (JSON with the fingerprint): stored once the run applied them */
  store: string;
  /** whether the stored entry differs from this run's (then it is written, when the run applied the rules) */
  differs: boolean;
  /** display.soldDays the stored sold windows were judged by, when it differs from this run's */
  soldDays?: { from: number; to: number };
}

interface StoredRules {
  fingerprint: string;
  rules: DisplayRules;
}

/** What a rule stored before rules were kept is said to have been. */
export const NONE_RECORDED = '(not recorded)';

const DAY_MS = 86_400_000;

/**
 * The change of rules of a lane: `stored`, the entry its last run that applied them left (undefined:
 * none); `holdsListings`, whether the lane has written listings (with none, nothing can be removed
 * by a change and nothing is compared).
 */
export function ruleChangeOf(stored: string | undefined, now: DisplayRules, holdsListings: boolean): RuleChange {
  const entry: StoredRules = { fingerprint: rulesFingerprint(now), rules: now };
  const store = JSON.stringify(entry);
  const before = parseStored(stored);
  if (before?.fingerprint === entry.fingerprint) return { rules: [], store, differs: false };
  if (!before) {
    // nothing stored: a lane with no listing starts here; one that holds listings was written by rules
    // nobody recorded, so every rule in force is taken as new
    const rules = holdsListings
      ? HIDE_RULES.flatMap((rule) => {
          const to = termsOf(rule, now);
          return to === undefined ? [] : [{ rule, from: NONE_RECORDED, to }];
        })
      : [];
    return { rules, store, differs: true };
  }
  const rules = HIDE_RULES.flatMap((rule) => {
    const from = termsOf(rule, before.rules) ?? 'not applied';
    const to = termsOf(rule, now) ?? 'not applied';
    return from === to ? [] : [{ rule, from, to }];
  });
  const soldDays =
    before.rules.soldDays !== now.soldDays ? { from: before.rules.soldDays, to: now.soldDays } : undefined;
  return { rules, store, differs: true, ...(soldDays && { soldDays }) };
}

/**
 * The stored sold windows re-judged by a changed display.soldDays: each ends `to - from` days later
 * (earlier, when lowered) than it was stored, since it was stored as CloseDate + `from` days. The
 * run then removes those whose window has now ended (sold-window.ts), and stores the new ends.
 */
export function rejudgeWindows(
  stored: ReadonlyMap<string, string>,
  soldDays: { from: number; to: number },
): Map<string, string> {
  const shift = (soldDays.to - soldDays.from) * DAY_MS;
  const out = new Map<string, string>();
  for (const [key, until] of stored) {
    const t = Date.parse(until);
    out.set(key, Number.isNaN(t) ? until : new Date(t + shift).toISOString());
  }
  return out;
}

/** The changed rules of a run in a sentence: "StandardStatus: (not recorded) → statuses Active, Pending". */
export function describeRuleChange(rules: readonly RuleDiff[]): string {
  return rules.map((r) => `${r.rule}: ${r.from} → ${r.to}`).join('; ');
}

/** A rule's terms under a feed's rules, as a person reads them; undefined when the purpose does not apply it. */
function termsOf(rule: HideRule, rules: DisplayRules): string | undefined {
  if (rules.purpose === 'internal') return undefined;
  if (rule === 'IDXParticipationYN' && rules.purpose !== 'idx') return undefined;
  const reads = (field: keyof DisplayRules['fields']) =>
    rules.fields[field] === field ? '' : ` (read from ${rules.fields[field]})`;
  if (rule === 'StandardStatus') return `statuses ${rules.statuses.join(', ')}${reads('StandardStatus')}`;
  if (rule === 'sold-window') return `soldDays ${rules.soldDays}${reads('CloseDate')}`;
  return `applied${reads(rule)}`;
}

/** The fingerprint of resolved rules: the same rules give the same one, whatever order their keys were written in. */
export function rulesFingerprint(rules: DisplayRules): string {
  return hash('sha1', canonical(rules), 'base64url');
}

function canonical(v: unknown): string {
  if (Array.isArray(v)) return `[${v.map(canonical).join(',')}]`;
  if (v !== null && typeof v === 'object')
    return `{${Object.keys(v)
      .sort()
      .map((k) => `${JSON.stringify(k)}:${canonical((v as Record<string, unknown>)[k])}`)
      .join(',')}}`;
  return JSON.stringify(v);
}

/** The stored entry, when it reads as one (an entry this code cannot read is taken as none). */
function parseStored(text: string | undefined): StoredRules | undefined {
  if (text === undefined) return undefined;
  try {
    const v: unknown = JSON.parse(text);
    if (v !== null && typeof v === 'object' && 'fingerprint' in v && 'rules' in v) {
      const { fingerprint, rules } = v;
      if (typeof fingerprint === 'string' && isRules(rules)) return { fingerprint, rules };
    }
  } catch {
    // not JSON: as if none were stored
  }
  return undefined;
}

function isRules(v: unknown): v is DisplayRules {
  if (v === null || typeof v !== 'object') return false;
  const r = v as Partial<Record<keyof DisplayRules, unknown>>;
  return (
    typeof r.purpose === 'string' &&
    typeof r.soldDays === 'number' &&
    Array.isArray(r.statuses) &&
    r.fields !== null &&
    typeof r.fields === 'object'
  );
}
