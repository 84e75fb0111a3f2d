// The delete guards: pure, no I/O. Given a plan, decide which deletes may be sent.
//
// Grace period first (deletes.graceHours): a listing absent from a full feed is deleted only once
// it has been missing that long. Its first-missing time is kept per key (store namespace
// `missing:<feed>`); a key that comes back loses its mark. Removed records and duplicate copies are
// deleted at once, but for a run of pushed events (`graceFor: removed`): a key a push says is gone
// waits out the grace period as an absent one does (a push is anyone's word that a record changed). `--force` does not shorten the grace period: it is a policy, not a safety check.
//
// Then the safety checks, each of which withholds every delete of the run when it trips. Two are
// about knowing, and nothing overrides them: a listing is deleted only when the feed was read whole
// and positively lacks its key.
//   - the feed was not read whole (read error, truncated row, a record whose key could not be read,
//     a record listed twice in one pull);
//   - the remote side could not be paged completely;
//   - the run was rejected (rejection.ts: the source's answer is not the feed, or too few of its
//     records are valid).
//   - another feed of the chatbot has no committed state (it never ran, or its state was lost): the
//     listings this feed lacks cannot be told apart from that feed's, so their deletes (`unsynced`,
//     plan.ts) are withheld until it has run. Only these: the other deletes are judged as usual.
// Three are limits, which `--force` lifts (the run then reports guard outcome 'forced'):
//   - a full feed yielded no valid listing at all;
//   - more than deletes.maxCount listings would go;
//   - more than deletes.maxFraction of the remote listings would go.
// These delete reasons count toward maxCount and maxFraction: 'absent' (a full pull's or a keys-only
// reconcile's absence, confirmed with the source), 'removed' (the source says the record is gone:
// MLS Grid's MlgCanView false on a feed of purpose internal, or an EntityEvent whose key the source
// no longer returns), 'off-market', 'moved' and 'duplicate'.
// One does not: a removal by a display rule (`rule:<name>`, plan-types.ts RuleReason; docs/display-rules.md),
// unless the rule itself changed since the lane's last run applied the rules (rule-change.ts): then
// the run's removals by that rule count toward the limits as other deletes do (`ruleChange`).
// The record itself, read this run, says the MLS does not allow the listing shown, so it is neither
// an inference from absence nor a guess: it is sent at once, is not counted toward the limits, and
// is not withheld by anything that trips them or by a read that was not whole (what was not read
// cannot have hidden anything; what was read says so itself).
// Creates and updates are not guarded: they only ever write what the feed says.
import type { DeletesConfig } from '../../config/schema.js';
import type { HideRule } from '../../mapping/display-config.js';
import { ruleOf, type PlannedDelete } from '../model/plan-types.js';
import type { GuardDecision } from '../model/outcome.js';
import { feedOfLane } from '../model/lane.js';
import { describeRuleChange, type RuleDiff } from './rule-change.js';

export type { GuardDecision } from '../model/outcome.js';

export interface GuardInput {
  plan: { deletes: readonly PlannedDelete[] };
  deletes: Pick<DeletesConfig, 'maxFraction' | 'maxCount' | 'graceHours'>;
  remote: { count: number; complete: boolean; problem?: string };
  feed: { complete: boolean; readError?: string; mode: 'full' | 'incremental'; valid: number; rejected?: string };
  force: boolean;
  now: Date;
  /** key → ISO time the key was first found missing */
  missingSince: ReadonlyMap<string, string>;
  /** delete reasons besides 'absent' that wait out deletes.graceHours (a run of pushed events: 'removed') */
  graceFor?: ReadonlySet<string>;
  /** the display rules that changed since the lane's last run applied them (rule-change.ts): their removals are guarded */
  ruleChange?: readonly RuleDiff[];
  /** deletes of absent keys that may be another feed's, whose state is missing (plan-types.ts DeleteDecision.unsynced): withheld */
  unsynced?: { writers: readonly string[]; deletes: readonly PlannedDelete[] };
}

const SHOWN_KEYS = 5;

export function evaluateGuards(input: GuardInput): GuardDecision {
  const decision = guardedByRules(input);
  const held = input.unsynced;
  if (!held?.deletes.length) return decision;
  const reason = `${named(held.writers)} of this chatbot ${held.writers.length > 1 ? 'have' : 'has'} no sync state`;
  return {
    ...decision,
    outcome: 'tripped',
    withheld: [...held.deletes, ...decision.withheld],
    reasons: [reason, ...decision.reasons],
    message: [unsyncedMessage(held), decision.message].filter(Boolean).join(' '),
  };
}

/** The feeds of lanes, by name, each once. */
function feedsOf(writers: readonly string[]): string[] {
  return [...new Set(writers.map(feedOfLane))];
}

const named = (writers: readonly string[]) =>
  feedsOf(writers)
    .map((f) => `feed ${f}`)
    .join(', ');

/** What the guard says of deletes held for feeds with no state: which, why, and what to do. */
function unsyncedMessage({ writers, deletes }: NonNullable<GuardInput['unsynced']>): string {
  const keys = deletes.slice(0, SHOWN_KEYS).map((d) => d.key);
  const more = deletes.length > SHOWN_KEYS ? `, … ${deletes.length - SHOWN_KEYS} more` : '';
  const feeds = feedsOf(writers);
  const one = feeds.length === 1;
  const runs = feeds.map((f) => `feedsync sync --feed ${f}`).join(', ');
  return (
    `delete guard: held ${deletes.length} delete(s) of listings this feed no longer has (${keys.join(', ')}${more}): ` +
    `${named(writers)} of this chatbot ${one ? 'has' : 'have'} no sync state (never ran, or the state was lost: ` +
    `Redis restarted without persistence, a FLUSHALL, a deleted state file), so ${one ? 'its' : 'their'} listings ` +
    `cannot be told apart from those. None of them was deleted. Run ${one ? 'that feed' : 'each of them'} once ` +
    `(${runs}), then this feed deletes what is stale again; --force does not lift this.`
  );
}

/** The guards, a display rule's removals apart (see the header). */
function guardedByRules(input: GuardInput): GuardDecision {
  const changed = new Set<HideRule>(input.ruleChange?.map((r) => r.rule));
  const outside = (d: PlannedDelete) => {
    const rule = ruleOf(d.reason);
    return rule !== undefined && !changed.has(rule);
  };
  const byRule = input.plan.deletes.filter(outside);
  const rest = guardDeletes(
    byRule.length ? { ...input, plan: { deletes: input.plan.deletes.filter((d) => !outside(d)) } } : input,
  );
  const byChange = [...rest.allowed, ...rest.withheld].filter((d) => changed.has(ruleOf(d.reason)!));
  const ruleChange = input.ruleChange?.length ? changeOf(input.ruleChange, byChange, rest) : undefined;
  if (byRule.length === 0 && !ruleChange) return rest;
  // a display rule's removals go whatever the rest decides (see the header)
  const went = byRule.length ? ` (${byRule.length} removal(s) by a display rule went: they are not held.)` : '';
  const message = [ruleChange?.said, rest.message && `${rest.message}${went}`].filter(Boolean).join(' ');
  return {
    ...rest,
    outcome: rest.outcome === 'none' && byRule.length ? 'passed' : rest.outcome,
    allowed: [...byRule, ...rest.allowed],
    ...(message && { message }),
    ...(ruleChange && { ruleChange: ruleChange.decision }),
  };
}

/** What a change of rules removes this run, and the sentence that says it (only when it removes something). */
function changeOf(rules: readonly RuleDiff[], removals: readonly PlannedDelete[], rest: GuardDecision) {
  const keys = removals
    .map((d) => d.key)
    .sort()
    .slice(0, SHOWN_KEYS);
  const held = rest.withheld.some((d) => removals.includes(d));
  const more = removals.length > SHOWN_KEYS ? `, … ${removals.length - SHOWN_KEYS} more` : '';
  const said = removals.length
    ? `display rules changed since this feed's last run applied them (${describeRuleChange(rules)}): ${removals.length} removal(s) by them (${keys.join(', ')}${more}) count toward the delete limits this run${held ? '' : '.'}${held ? ', and were held with the other deletes.' : ''}`
    : undefined;
  return { said, decision: { rules: [...rules], removals: removals.length, keys, held } };
}

function guardDeletes(input: GuardInput): GuardDecision {
  const { candidates, waiting, marks } = graceSplit(input);
  if (candidates.length === 0) return { outcome: 'none', allowed: [], withheld: [], waiting, reasons: [], marks };
  const listings = candidates.reduce((n, d) => n + Math.max(1, d.remoteIds.length), 0);
  const blockers = blockersOf(input);
  const reasons = [...blockers, ...limitsExceeded(input, listings)];
  if (reasons.length === 0) return { outcome: 'passed', allowed: candidates, withheld: [], waiting, reasons, marks };
  if (input.force && blockers.length === 0)
    return { outcome: 'forced', allowed: candidates, withheld: [], waiting, reasons, marks };
  const message = trippedMessage(input, candidates, listings, reasons, blockers.length > 0);
  return { outcome: 'tripped', allowed: [], withheld: candidates, waiting, reasons, message, marks };
}

/**
 * The deletes that may go now (candidates) and those still inside the grace period (waiting), with
 * the first-missing marks to set and to clear. Marks change only after a read that can be trusted
 * (both sides whole, the run not rejected).
 */
function graceSplit(input: GuardInput): Pick<GuardDecision, 'waiting' | 'marks'> & { candidates: PlannedDelete[] } {
  const { plan, deletes, feed, remote, now, missingSince } = input;
  const graceMs = deletes.graceHours * 3_600_000;
  const readable = feed.complete && remote.complete && feed.rejected === undefined;
  const candidates: PlannedDelete[] = [];
  const waiting: PlannedDelete[] = [];
  const set: Array<[string, string]> = [];
  const absent = new Set<string>();
  for (const d of plan.deletes) {
    if ((d.reason !== 'absent' && !input.graceFor?.has(d.reason)) || graceMs === 0) {
      candidates.push(d);
      continue;
    }
    absent.add(d.key);
    const since = missingSince.get(d.key);
    if (since === undefined) {
      if (readable) set.push([d.key, now.toISOString()]);
      waiting.push(d);
    } else if (now.getTime() - Date.parse(since) >= graceMs) candidates.push(d);
    else waiting.push(d);
  }
  const clear = readable ? [...missingSince.keys()].filter((k) => !absent.has(k)) : [];
  return { candidates, waiting, marks: { set, clear } };
}

/** The checks about knowing, which nothing overrides: a read that was not whole, or a rejected run. */
function blockersOf({ feed, remote }: GuardInput): string[] {
  const blockers: string[] = [];
  if (!feed.complete) blockers.push(`the feed was not read whole (${feed.readError ?? 'read error'})`);
  if (!remote.complete)
    blockers.push(`the chatbot's listings could not all be paged (${remote.problem ?? 'incomplete'})`);
  if (feed.rejected !== undefined) blockers.push(`the run was rejected (${feed.rejected})`);
  return blockers;
}

/** The limits `--force` lifts: an empty full feed, deletes.maxCount, deletes.maxFraction. */
function limitsExceeded({ feed, remote, deletes }: GuardInput, listings: number): string[] {
  const reasons: string[] = [];
  if (feed.mode === 'full' && feed.valid === 0) reasons.push('the feed yielded no valid listing');
  if (listings > deletes.maxCount) reasons.push(`${listings} deletes exceed deletes.maxCount ${deletes.maxCount}`);
  const fraction = remote.count > 0 ? listings / remote.count : 1;
  if (fraction > deletes.maxFraction) {
    reasons.push(
      `${listings} of ${remote.count} remote listings (${percent(fraction)}) exceed deletes.maxFraction ${percent(deletes.maxFraction)}`,
    );
  }
  return reasons;
}

/** What a tripped guard says: what it would have deleted, why not, and what to do next. */
function trippedMessage(
  { feed }: GuardInput,
  candidates: readonly PlannedDelete[],
  listings: number,
  reasons: readonly string[],
  blocked: boolean,
): string {
  const keys = candidates.slice(0, SHOWN_KEYS).map((d) => d.key);
  const more = candidates.length > SHOWN_KEYS ? `, … ${candidates.length - SHOWN_KEYS} more` : '';
  const rejected = feed.rejected !== undefined;
  const next = blocked
    ? `--force does not delete after ${rejected ? 'a rejected' : 'an incomplete'} read: fix what kept the read from ${rejected ? 'being used' : 'finishing'} and rerun.`
    : 'Check the feed, run with --dry-run to see the plan, or rerun with --force to delete anyway.';
  return `delete guard: would have deleted ${listings} listing(s) (${keys.join(', ')}${more}) but ${reasons.join('; ')}. Nothing was deleted. ${next}`;
}

function percent(f: number): string {
  return `${Math.round(f * 1000) / 10}%`;
}
