// The alert rules, pure: a feed's alert state and what its last run showed in, the conditions that
// hold now and the notices to send out. A condition alerts once when it has held for `openAfterRuns`
// runs in a row, and once ("resolved") when it has stayed clear for `closeAfterMinutes`: never again
// while it holds, and a flapping feed (bad, good, bad) neither alerts nor resolves on every run.
import { excerpt } from '../errors.js';
import type { AlertRules } from './config-schema.js';

/** Feed text in an alert (a run's message, a value) is an excerpt: an alert, a webhook and /status stay small. */
const clip = (text: string) => String(excerpt(text));
/** The first items of a list, each an excerpt, and how many more. */
const firstOf = (items: readonly string[], n = 10) =>
  `${items.slice(0, n).map(clip).join(', ')}${items.length > n ? `, and ${items.length - n} more` : ''}`;

export type Condition =
  'guard' | 'failing' | 'rejected' | 'feed-rejected' | 'dropped' | 'stale' | 'unmapped' | 'chat' | 'source-drift';

/** What a finished run showed, as the rules need it. */
export interface RunObservation {
  runId: string;
  at: string;
  outcome: string;
  message?: string;
  records: number;
  valid: number;
  rejected: number;
  /** lookup values no map covered, "Field: value" */
  unmapped: string[];
  chat?: { asked: number; answerable: number; missing: string[] };
  /** what the run read: everything (full) or what changed since its mark (incremental); valid counts compare within one kind */
  mode?: 'full' | 'incremental';
  /** false: the feed was not read whole, so its valid count says nothing about the feed's size */
  complete?: boolean;
  /** false: a run that read no feed (`feedsync undo`): the feed's own conditions stay as they were */
  feedRead?: boolean;
}

export interface AlertState {
  /** failed or unavailable runs in a row */
  streak: number;
  lastOkAt?: string;
  /** valid records of the last good run (of a run whose kind was not known: read as a full one) */
  lastGoodValid?: number;
  /** valid records of the last good run of each kind: a run is compared with one of its own kind */
  lastGoodValidByMode?: Partial<Record<'full' | 'incremental', number>>;
  /** `clear`: when the open condition was last seen not holding (it resolves once clear long enough) */
  open: Partial<Record<Condition, { since: string; message: string; clear?: string }>>;
  /** conditions holding but not yet open: runs in a row they held */
  pending?: Partial<Record<Condition, number>>;
}

export interface Notice {
  status: 'firing' | 'resolved';
  condition: Condition;
  message: string;
  since: string;
}

export const emptyState = (): AlertState => ({ streak: 0, open: {} });

/** what only a run that read the feed can say */
const FEED_CONDITIONS = ['rejected', 'feed-rejected', 'dropped', 'unmapped'] as const satisfies readonly Condition[];

/**
 * outcomes that count toward `failing`, whatever the cause (an authentication refused ends `failed`);
 * not `cancelled` (an operator's), `taken-over` (a worker job's lost job or chatbot lock) nor
 * `handed-back` (its worker's graceful shutdown): the attempt that takes the job over is the run
 * that counts; these neither count nor end the row
 */
const FAILED = new Set(['unavailable', 'partial', 'aborted', 'error', 'failed']);

/** The state after a run, and the conditions that hold after it (stale aside: see staleness). */
export function afterRun(
  state: AlertState,
  run: RunObservation,
  rules: AlertRules,
): { state: AlertState; holding: Map<Condition, string> } {
  const next: AlertState = { ...state, open: { ...state.open } };
  const holding = new Map<Condition, string>();
  next.streak = FAILED.has(run.outcome) ? state.streak + 1 : run.outcome === 'ok' ? 0 : state.streak;
  const feedRead = run.feedRead !== false;
  // (the order of the checks is the order of the notices)
  outcomeConditions(holding, state, next.streak, run, rules);
  if (feedRead && run.records > 0 && run.rejected / run.records > rules.rejectedFraction) {
    holding.set(
      'rejected',
      `${run.rejected} of ${run.records} records rejected (${pct(run.rejected / run.records)} > ${pct(rules.rejectedFraction)})`,
    );
  }
  droppedCondition(holding, state, run, rules);
  if (feedRead && rules.unmappedValues && run.unmapped.length) {
    holding.set('unmapped', `lookup values no map covers: ${firstOf(run.unmapped)}`);
  }
  if (rules.chatCheck && run.chat && run.chat.answerable < run.chat.asked) {
    holding.set(
      'chat',
      `the chatbot could not answer about ${firstOf(run.chat.missing)} (answerable ${run.chat.answerable}/${run.chat.asked})`,
    );
  }
  if (run.outcome === 'ok' && feedRead) goodRun(next, state, run, holding);
  // staleness ends with a good run; any other run leaves it as it was
  if (state.open.stale && (run.outcome !== 'ok' || !feedRead)) holding.set('stale', state.open.stale.message);
  return { state: next, holding };
}

const pct = (x: number) => `${(x * 100).toFixed(1)}%`;

/** What the run's outcome says: the guard held, failing runs in a row, the feed rejected; a run that read no feed keeps the feed's conditions. */
function outcomeConditions(
  holding: Map<Condition, string>,
  state: AlertState,
  streak: number,
  run: RunObservation,
  rules: AlertRules,
): void {
  const message = run.message === undefined ? undefined : String(excerpt(run.message, 200));
  if (rules.guard && run.outcome === 'guard')
    holding.set('guard', `a delete guard held deletes back: ${message ?? 'see the run'}`);
  if (streak >= rules.failedRuns) {
    holding.set(
      'failing',
      `${streak} runs in a row failed or found the service unavailable (last: ${run.outcome}${message ? `: ${message}` : ''})`,
    );
  }
  const feedRead = run.feedRead !== false;
  // the run's outcome `rejected` (sync/settle/rejection.ts): the feed answered with something that cannot be used
  if (rules.feedRejected && feedRead && run.outcome === 'rejected')
    holding.set('feed-rejected', `the run was rejected: ${message ?? 'see the run'}`);
  if (!feedRead) {
    for (const c of FEED_CONDITIONS) {
      const open = state.open[c];
      if (open) holding.set(c, open.message);
    }
  }
}

/**
 * Valid records fell past `validDropFraction`: only a run that read its feed whole says how many
 * valid records it has, and only to a run of its own kind (an incremental pull reads what changed,
 * a full pull everything). With nothing to compare, an open drop stays as it was.
 */
function droppedCondition(
  holding: Map<Condition, string>,
  state: AlertState,
  run: RunObservation,
  rules: AlertRules,
): void {
  const mode = run.mode ?? 'full';
  const readFeed =
    run.feedRead !== false &&
    (run.outcome === 'ok' || run.outcome === 'partial' || run.outcome === 'guard') &&
    run.complete !== false;
  const reference = state.lastGoodValidByMode?.[mode] ?? (mode === 'full' ? state.lastGoodValid : undefined);
  if (reference !== undefined && reference > 0 && readFeed) {
    const drop = (reference - run.valid) / reference;
    if (drop > rules.validDropFraction) {
      holding.set(
        'dropped',
        `valid records fell from ${reference} (last good ${run.mode ? `${mode} ` : ''}run) to ${run.valid} (−${pct(drop)} > ${pct(rules.validDropFraction)})`,
      );
    }
  } else if (state.open.dropped) holding.set('dropped', state.open.dropped.message);
}

/** A good run that read the feed: the last ok time, and its valid count as the reference of its kind. */
function goodRun(next: AlertState, state: AlertState, run: RunObservation, holding: Map<Condition, string>): void {
  const mode = run.mode ?? 'full';
  next.lastOkAt = run.at;
  // a good run that dropped sharply is not the new reference: the drop would clear itself
  if (!holding.has('dropped') && run.complete !== false) {
    if (mode === 'full') next.lastGoodValid = run.valid;
    next.lastGoodValidByMode = { ...state.lastGoodValidByMode, [mode]: run.valid };
  }
}

/** Whether "no successful sync for staleHours" holds at `now`. */
export function staleness(
  state: AlertState,
  rules: AlertRules,
  now: Date,
  since: string | undefined,
): string | undefined {
  const last = state.lastOkAt ?? since;
  if (!last) return undefined;
  const hours = (now.getTime() - new Date(last).getTime()) / 3_600_000;
  if (hours <= rules.staleHours) return undefined;
  return state.lastOkAt
    ? `no successful sync for ${hours.toFixed(1)} h (last at ${state.lastOkAt}; alert after ${rules.staleHours} h)`
    : `no successful sync in ${hours.toFixed(1)} h since ${last} (alert after ${rules.staleHours} h)`;
}

export interface Hysteresis {
  openAfterRuns: number;
  closeAfterMinutes: number;
  /** the conditions this observation is about (the staleness timer: `stale` alone); default all */
  only?: readonly Condition[];
}

/**
 * The notices that turn `holding` into the open set: a condition fires once it held `openAfterRuns`
 * observations in a row, and an open one resolves once it has been clear for `closeAfterMinutes`
 * ("stale", a time already waited out, both at once).
 */
export function transitions(
  state: AlertState,
  holding: Map<Condition, string>,
  now: Date,
  h: Hysteresis = { openAfterRuns: 1, closeAfterMinutes: 0 },
): { state: AlertState; notices: Notice[] } {
  const open = { ...state.open };
  const pending = { ...state.pending };
  const notices: Notice[] = [];
  const at = now.toISOString();
  const inScope = (c: Condition) => !h.only || h.only.includes(c);
  for (const [condition, message] of holding) {
    if (!inScope(condition)) continue;
    const was = open[condition];
    if (was) {
      if (was.clear) open[condition] = { since: was.since, message: was.message }; // holds again: not clear any more
      continue;
    }
    const runs = (pending[condition] ?? 0) + 1;
    if (runs < h.openAfterRuns && condition !== 'stale') {
      pending[condition] = runs;
      continue;
    }
    delete pending[condition];
    open[condition] = { since: at, message };
    notices.push({ status: 'firing', condition, message, since: at });
  }
  for (const condition of Object.keys(pending) as Condition[])
    if (inScope(condition) && !holding.has(condition)) delete pending[condition];
  for (const condition of Object.keys(open) as Condition[]) {
    if (!inScope(condition) || holding.has(condition)) continue;
    const was = open[condition]!;
    const clear = was.clear ?? at;
    // staleness is measured in hours already, and ended by a good run: it resolves at once
    if (condition !== 'stale' && now.getTime() - new Date(clear).getTime() < h.closeAfterMinutes * 60_000) {
      open[condition] = { ...was, clear };
      continue;
    }
    delete open[condition];
    notices.push({ status: 'resolved', condition, message: `resolved: ${was.message}`, since: was.since });
  }
  return {
    state: { ...state, open, ...(Object.keys(pending).length ? { pending } : { pending: undefined }) },
    notices,
  };
}
