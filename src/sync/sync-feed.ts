// One listing sync of one feed (DESIGN.md, "The flow of one listing sync"): read and map the feed
// while the chatbot's listings are paged, plan, guard, then (unless a dry run) execute, remember
// what was written, and report. State lives in the KvStore: `fp:<feed>` (key → fingerprint of the
// last write), `missing:<feed>` (key → first time it was missing, for the grace period) and
// `owner:<chatbot>` (which feed wrote each listing).
import type { CallCounter } from '../api/call-counter.js';
import type { ChatbotApi } from '../api/types.js';
import type { ApiConfig, FeedConfig } from '../config/schema.js';
import { AbortedError, causeMessage, isRetryable } from '../errors.js';
import { openFeed } from '../feeds/index.js';
import type { Logger } from '../log.js';
import { mapFeed } from '../mapping/map-feed.js';
import type { KvStore } from '../state/kv-store.js';
import { collectDesired } from './desired.js';
import { executePlan, type ExecutionResult } from './execute.js';
import { evaluateGuards, type GuardDecision } from './guards.js';
import { planSync } from './plan.js';
import type { RemoteListing, RemoteSide, SyncPlan } from './plan-types.js';
import { fetchRemote } from './remote.js';
import { callsBetween, summaryLine, type PlanView, type SyncOutcome, type SyncReport } from './report.js';

export interface SyncProgress {
  feed: string;
  phase: 'feed' | 'write';
  done: number;
  total?: number;
}

export interface SyncDeps {
  api: ChatbotApi;
  store: KvStore;
  logger: Logger;
  /** folder relative feed paths resolve against (the config file's) */
  baseDir: string;
  apiConfig: ApiConfig;
  signal?: AbortSignal;
  /** counts this run's API calls for the report (fed by the client's onCall) */
  calls?: CallCounter;
  onProgress?: (p: SyncProgress) => void;
}

export interface SyncOptions {
  dryRun?: boolean;
  force?: boolean;
  /** RESO: a full pull instead of an incremental one */
  full?: boolean;
  attempt?: { made: number; max: number };
  /** for tests of the grace period */
  now?: () => Date;
}

export const fingerprintNamespace = (feed: string) => `fp:${feed}`;
export const missingNamespace = (feed: string) => `missing:${feed}`;
/** Which feed wrote each listing of a chatbot (`MLSNumber:<n>` or `URL:<u>` → feed name): several
 * feeds may fill one chatbot, and one feed's mirror deletes must not take the others' listings. */
export const ownerNamespace = (chatbot: string) => `owner:${chatbot}`;
const ownerKey = (keyBy: 'MLSNumber' | 'URL', key: unknown) => `${keyBy}:${String(key ?? '')}`;

export async function syncFeed(feed: FeedConfig, deps: SyncDeps, opts: SyncOptions = {}): Promise<SyncReport> {
  const startedAt = new Date();
  const t0 = performance.now();
  const now = opts.now ?? (() => new Date());
  const logger = deps.logger.child({ feed: feed.name, chatbot: feed.chatbot });
  const callsBefore = deps.calls?.snapshot();
  const { api, store, apiConfig, signal } = deps;
  const progress = (phase: SyncProgress['phase'], done: number, total?: number) =>
    deps.onProgress?.({ feed: feed.name, phase, done, ...(total !== undefined && { total }) });

  const opened = openFeed(feed.name, feed.source, { baseDir: deps.baseDir, store, logger, signal, full: opts.full });
  // The remote side is paged while the feed is read: neither waits for the other.
  const remotePromise = fetchRemote(api, {
    serialNumber: feed.chatbot,
    keyBy: feed.keyBy,
    pageSize: apiConfig.pageSize,
    concurrency: apiConfig.concurrency,
    signal,
  });
  remotePromise.catch(() => {}); // awaited below; this only keeps an early failure from going unhandled
  const desired = await collectDesired(mapFeed(opened.items, feed.mapping, { serialNumber: feed.chatbot, keyBy: feed.keyBy }), opened.mode, (n) => {
    if (n % 1000 === 0) progress('feed', n);
  });
  let remote: RemoteSide;
  try {
    remote = await remotePromise;
  } catch (err) {
    if (!isRetryable(err) && !(err instanceof AbortedError)) throw err;
    const outcome: SyncOutcome = err instanceof AbortedError ? 'aborted' : 'unavailable';
    const message = `the chatbot's listings could not be paged: ${causeMessage(err)}; nothing was written`;
    return finish({ outcome, message, remote: { complete: false, pages: 0, rounds: 0, virtualCount: 0, problem: causeMessage(err) }, count: 0 });
  }
  if (signal?.aborted) {
    return finish({ outcome: 'aborted', message: 'stopped by a signal before anything was written', remote: remoteInfo(remote), count: remote.count });
  }

  const fpNs = fingerprintNamespace(feed.name);
  const missingNs = missingNamespace(feed.name);
  const fingerprints = await store.getAll(fpNs);
  const missingSince = feed.deletes.graceHours > 0 ? await store.getAll(missingNs) : new Map<string, string>();
  const ownerNs = ownerNamespace(feed.chatbot);
  const owners = await store.getAll(ownerNs);
  const ownedElsewhere = (r: RemoteListing) =>
    [ownerKey('MLSNumber', r.canonical.MLSNumber), ownerKey('URL', r.canonical.Url)].some((k) => {
      const owner = owners.get(k);
      return owner !== undefined && owner !== feed.name;
    });
  const plan = planSync(desired, remote, { keyBy: feed.keyBy, deletesMode: feed.deletes.mode, ignore: feed.ignore, fingerprints, ownedElsewhere });
  fingerprints.clear(); // 100k entries are not needed past planning
  const guard = evaluateGuards({
    plan,
    deletes: feed.deletes,
    remote: { count: remote.count, complete: remote.complete, problem: remote.problem },
    feed: { complete: desired.complete, readError: desired.readError, mode: desired.mode, valid: desired.counts.valid },
    force: Boolean(opts.force),
    now: now(),
    missingSince,
  });

  if (opts.dryRun) {
    return finish({ outcome: guard.outcome === 'tripped' ? 'guard' : 'ok', message: guard.message, remote: remoteInfo(remote), count: remote.count, plan, guard, dry: true });
  }

  const exec = await executePlan(
    { creates: plan.creates, updates: plan.updates, deletes: guard.allowed },
    {
      api,
      serialNumber: feed.chatbot,
      keyBy: feed.keyBy,
      concurrency: apiConfig.concurrency,
      batchSize: feed.deletes.batchSize,
      retries: apiConfig.retries,
      logger,
      signal,
      onProgress: ({ done, total }) => progress('write', done, total),
    },
  );

  await store.set(fpNs, [...plan.recordFingerprints, ...exec.written]);
  if (exec.deletedKeys.length) await store.delete(fpNs, exec.deletedKeys);
  const claimed = [...plan.recordFingerprints, ...exec.written]
    .map(([key]) => ownerKey(feed.keyBy, key))
    .filter((k) => owners.get(k) !== feed.name);
  if (claimed.length) await store.set(ownerNs, claimed.map((k) => [k, feed.name] as const));
  if (exec.deletedKeys.length) await store.delete(ownerNs, exec.deletedKeys.map((key) => ownerKey(feed.keyBy, key)));
  owners.clear();
  if (guard.marks.set.length) await store.set(missingNs, guard.marks.set);
  const cleared = [...guard.marks.clear, ...exec.deletedKeys.filter((k) => missingSince.has(k))];
  if (cleared.length) await store.delete(missingNs, cleared);

  const outcome: SyncOutcome =
    exec.stopped ?? (guard.outcome === 'tripped' ? 'guard' : exec.failures.length || !desired.complete ? 'partial' : 'ok');
  const message = exec.stopReason ?? guard.message ?? (desired.readError && `the feed was not read whole: ${desired.readError}`);
  if (outcome === 'ok') await opened.commit();
  return finish({ outcome, message, remote: remoteInfo(remote), count: remote.count, plan, guard, exec });

  function finish(r: {
    outcome: SyncOutcome;
    message?: string;
    remote: SyncReport['remote'];
    count: number;
    plan?: SyncPlan;
    guard?: GuardDecision;
    exec?: ExecutionResult;
    dry?: boolean;
  }): SyncReport {
    const { plan: p, exec: e, guard: g } = r;
    const { calls, retries } = callsBetween(callsBefore, deps.calls?.snapshot());
    const deletes = r.dry ? (g?.allowed ?? []) : [];
    const failures = e?.failures ?? [];
    const retryable =
      r.outcome === 'unavailable' || (r.outcome !== 'aborted' && (failures.some((f) => f.retryable) || Boolean(desired.readErrorRetryable)));
    const base: Omit<SyncReport, 'summary'> = {
      feed: feed.name,
      chatbot: feed.chatbot,
      outcome: r.outcome,
      retryable,
      dryRun: Boolean(r.dry),
      ...(r.message && { message: r.message }),
      counts: {
        feedRecords: desired.counts.records,
        valid: desired.counts.valid,
        rejected: desired.counts.rejected,
        skipped: desired.counts.skipped,
        removed: desired.counts.removed,
        feedDuplicates: desired.feedDuplicates.length,
        remote: r.count,
        created: r.dry ? (p?.creates.length ?? 0) : (e?.created ?? 0),
        updated: r.dry ? (p?.updates.length ?? 0) : (e?.updated ?? 0),
        deleted: r.dry ? deletes.filter((d) => d.reason !== 'duplicate').length : (e?.deleted ?? 0),
        unchanged: p?.unchanged ?? 0,
        duplicatesRemoved: r.dry ? deletes.filter((d) => d.reason === 'duplicate').length : (e?.duplicatesRemoved ?? 0),
        failed: failures.length,
        protected: p?.protectedKeys.length ?? 0,
        otherFeeds: p?.otherFeeds ?? 0,
        waitingGrace: g?.waiting.length ?? 0,
      },
      calls,
      retries: retries + (e?.createResends ?? 0),
      failures,
      rejected: desired.rejected,
      feedDuplicates: desired.feedDuplicates,
      guard: {
        outcome: g?.outcome ?? 'none',
        reasons: g?.reasons ?? [],
        ...(g?.message && { message: g.message }),
        withheld: g?.withheld.length ?? 0,
        waiting: g?.waiting.length ?? 0,
      },
      source: { mode: desired.mode, complete: desired.complete, ...(desired.readError && { error: desired.readError }) },
      remote: r.remote,
      ...(r.dry && p && { plan: planView(p, [...deletes, ...(g?.withheld ?? [])]) }),
      stateLocation: store.location,
      durationMs: Math.round(performance.now() - t0),
      startedAt: startedAt.toISOString(),
      finishedAt: new Date().toISOString(),
    };
    const report: SyncReport = { ...base, summary: summaryLine(base, opts.attempt) };
    // info even when not ok: the report carries the detail, and the CLI prints it as a table
    logger.info({ outcome: r.outcome, ...(r.message && { detail: r.message }) }, report.summary);
    return report;
  }
}

function remoteInfo(remote: RemoteSide): SyncReport['remote'] {
  return {
    complete: remote.complete,
    pages: remote.pages,
    rounds: remote.rounds,
    virtualCount: remote.virtualCount,
    ...(remote.problem && { problem: remote.problem }),
  };
}

function planView(plan: SyncPlan, deletes: SyncPlan['deletes']): PlanView {
  return {
    creates: plan.creates.map((c) => c.key),
    updates: plan.updates.map((u) => ({ key: u.key, reason: u.reason, changes: u.changes })),
    deletes: deletes.map((d) => ({ key: d.key, reason: d.reason, keyType: d.keyType, deleteKey: d.deleteKey })),
  };
}
