// Alerts around a feed's runs: after each real run the rules are checked against the alert state of
// the run's lane (kept in the state store, namespace `alerts`, one JSON value per lane: the feed's
// name, or `feed>serialNumber` for each chatbot of a routed feed, so one chatbot's good runs never
// reset another's failing streak or close its alerts), the notices that
// follow are sent to every channel, and the new state is saved. `checkStaleness` does the same for
// "no successful sync for H hours", from the worker's timer.
import type { Logger } from '../log.js';
import type { KvStore } from '../state/kv-store.js';
import { sendAlert, registerChannelSecrets, type Alert } from './channels.js';
import type { AlertsConfig } from './config-schema.js';
import { excerpt } from '../errors.js';
import {
  afterRun,
  emptyState,
  staleness,
  transitions,
  type AlertState,
  type Condition,
  type Notice,
  type RunObservation,
} from './rules.js';

export type { AlertsConfig } from './config-schema.js';
export type { Notice, RunObservation, Condition, AlertState } from './rules.js';

const ALERT_NAMESPACE = 'alerts';

interface Target {
  feed: string;
  chatbot: string;
  /** the name the alert state goes under (sync/read/lanes.ts, the lane's id); the feed's name when not given */
  lane?: string;
}

const stateName = (t: Target) => t.lane ?? t.feed;

/** The alert state of a lane (its id: the feed's name, or `feed>serialNumber` for a routed feed's chatbot). */
export async function loadAlertState(store: Pick<KvStore, 'get'>, lane: string): Promise<AlertState> {
  return parseAlertState(await store.get(ALERT_NAMESPACE, lane));
}

function parseAlertState(raw: string | undefined): AlertState {
  if (!raw) return emptyState();
  try {
    const v: unknown = JSON.parse(raw);
    if (v && typeof v === 'object' && 'open' in v && 'streak' in v) return v as AlertState;
  } catch {
    // unreadable: start over (a condition still holding fires again once)
  }
  return emptyState();
}

/** Tries of a read-decide-swap before giving up (each lost one means another worker changed the state). */
const MAX_SWAPS = 10;

/** A decision on a lane's alert state: its next state, the notices that follow, and whether to store it. */
type Decide = (before: AlertState) => { state: AlertState; notices: Notice[]; store: boolean };

/**
 * Read the feed's alert state, decide, and store the new state only if no other process changed it
 * meanwhile (else read again and decide again). The notices returned are those of the decision that
 * was stored: with several workers, each transition is announced by exactly one of them.
 */
async function updateAlertState(store: KvStore, lane: string, decide: Decide): Promise<Notice[]> {
  for (let i = 0; i < MAX_SWAPS; i++) {
    const raw = await store.get(ALERT_NAMESPACE, lane);
    const { state, notices, store: changed } = decide(parseAlertState(raw));
    if (!changed) return notices;
    if (await store.swap(ALERT_NAMESPACE, lane, raw, JSON.stringify(state))) return notices;
  }
  throw new Error(
    `the alert state of ${lane} kept changing under this worker (${MAX_SWAPS} tries); its notices were not sent`,
  );
}

/**
 * updateAlertState of several lanes at once: every state read at once, decided, and swapped at once
 * (a job's 100 lanes: two round trips, not 200 one after another); a lane whose swap another worker
 * beat reads and decides again on its own. Each lane's notices or failure, in order.
 * Lanes named twice are taken one after another (each decision reads the state the one before stored).
 */
async function updateAlertStates(
  store: KvStore,
  lanes: ReadonlyArray<readonly [string, Decide]>,
): Promise<Array<PromiseSettledResult<Notice[]>>> {
  if (new Set(lanes.map(([lane]) => lane)).size < lanes.length) {
    const out: Array<PromiseSettledResult<Notice[]>> = [];
    for (const [lane, decide] of lanes) out.push(await settled(updateAlertState(store, lane, decide)));
    return out;
  }
  // (each lane's first read is asked in the same turn: one pipeline of reads, then one of swaps)
  return Promise.allSettled(lanes.map(([lane, decide]) => updateAlertState(store, lane, decide)));
}

export async function alertAfterRun(
  store: KvStore,
  config: AlertsConfig,
  target: Target,
  run: RunObservation,
  logger: Logger,
  now = new Date(),
): Promise<Notice[]> {
  const [result] = await alertAfterRuns(store, config, [{ target, run }], logger, now);
  if (result!.status === 'rejected') throw result!.reason;
  return result!.value;
}

/**
 * The rules after several lanes' runs (a job's lanes, in order): their states updated at once
 * (updateAlertStates), then each lane's notices delivered, lane after lane. Each lane's notices, or
 * why its rules could not be checked (one lane's failure leaves the others be).
 */
export async function alertAfterRuns(
  store: KvStore,
  config: AlertsConfig,
  runs: ReadonlyArray<{ target: Target; run: RunObservation }>,
  logger: Logger,
  now = new Date(),
): Promise<Array<PromiseSettledResult<Notice[]>>> {
  const updated = await updateAlertStates(
    store,
    runs.map(({ target, run }) => [
      stateName(target),
      (before: AlertState) => {
        const { state, holding } = afterRun(before, run, config.rules);
        return { ...transitions(state, holding, now, config.rules), store: true };
      },
    ]),
  );
  const out: Array<PromiseSettledResult<Notice[]>> = [];
  for (const [i, result] of updated.entries()) {
    const { target, run } = runs[i]!;
    if (result.status === 'fulfilled')
      out.push(await settled(deliver(config, target, result.value, logger, now, run.runId).then(() => result.value)));
    else out.push(result);
  }
  return out;
}

/** One promise's outcome as Promise.allSettled gives it, awaited on its own. */
async function settled<T>(p: Promise<T>): Promise<PromiseSettledResult<T>> {
  return (await Promise.allSettled([p]))[0]!;
}

/** "No successful sync for staleHours": checked for each lane, alerting and resolving like the rest. */
export async function checkStaleness(
  store: KvStore,
  config: AlertsConfig,
  targets: readonly Target[],
  since: string,
  logger: Logger,
  now = new Date(),
): Promise<Notice[]> {
  const all: Notice[] = [];
  for (const target of targets) {
    const notices = await updateAlertState(store, stateName(target), (before) => {
      const holding = new Map<Condition, string>();
      const stale = staleness(before, config.rules, now, since);
      if (stale) holding.set('stale', stale);
      const next = transitions(before, holding, now, { ...config.rules, only: ['stale'] });
      return { ...next, store: JSON.stringify(next.state) !== JSON.stringify(before) };
    });
    if (!notices.length) continue;
    await deliver(config, target, notices, logger, now);
    all.push(...notices);
  }
  return all;
}

/** findings an alert names one by one (a webhook and /status stay small); the rest are counted */
const MAX_NAMED = 20;

/** The alert state of a feed's dictionary check: apart from its lanes' (a run's transitions would resolve it). */
export const driftAlertLane = (feed: string) => `drift:${feed}`;

/**
 * The `source-drift` alert of a feed from its dictionary check's findings (src/drift/): fires when
 * there are some, again when they change, and resolves when a check finds none (after
 * closeAfterMinutes). Off with `rules.sourceDrift: false`.
 */
export async function alertDrift(
  store: KvStore,
  config: AlertsConfig,
  target: Target,
  findings: readonly string[],
  logger: Logger,
  now = new Date(),
): Promise<Notice[]> {
  const named = findings.slice(0, MAX_NAMED).map((f) => String(excerpt(f, 400)));
  const more = findings.length > MAX_NAMED ? `; and ${findings.length - MAX_NAMED} more` : '';
  const message = findings.length
    ? `the source's dictionary moved away from the mapping: ${named.join('; ')}${more}`
    : undefined;
  const notices = await updateAlertState(store, driftAlertLane(target.feed), (before) => {
    const holding = new Map<Condition, string>();
    if (message && config.rules.sourceDrift) holding.set('source-drift', message);
    const open = before.open['source-drift'];
    // new findings while it is open: announced again, with what is found now
    const { 'source-drift': _announced, ...others } = before.open;
    const from = open && message && open.message !== message ? { ...before, open: others } : before;
    const next = transitions(from, holding, now, { ...config.rules, openAfterRuns: 1, only: ['source-drift'] });
    return { ...next, store: JSON.stringify(next.state) !== JSON.stringify(before) };
  });
  const hint = `Details: feedsync feed drift --feed ${target.feed}; docs/runbook.md, "A source-drift alert".`;
  await deliver(config, { ...target, lane: driftAlertLane(target.feed) }, notices, logger, now, undefined, hint);
  return notices;
}

async function deliver(
  config: AlertsConfig,
  target: Target,
  notices: Notice[],
  logger: Logger,
  now: Date,
  runId?: string,
  hint?: string,
): Promise<void> {
  if (!notices.length) return;
  registerChannelSecrets(config.channels);
  for (const n of notices) {
    const alert: Alert = {
      ...n,
      ...target,
      ...(runId && { runId }),
      at: now.toISOString(),
      hint:
        hint ??
        (runId
          ? `Details: feedsync runs show ${runId}; the worker's /status page.`
          : "Details: the worker's /status page; feedsync runs --feed " + target.feed),
    };
    const log = n.status === 'firing' ? logger.warn.bind(logger) : logger.info.bind(logger);
    log(
      { feed: target.feed, condition: n.condition, status: n.status },
      `alert ${n.status}: ${target.feed} ${n.condition}: ${n.message}`,
    );
    if (config.channels.length) await sendAlert(config.channels, alert, logger);
  }
}
