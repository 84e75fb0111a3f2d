// Carries out a plan: creates, updates and delete batches, `concurrency` calls in flight at once
// (the client's token bucket paces them to ratePerSecond). One failed item never stops the others.
// - An update answering 0 found nothing to update (deleted behind our back): it becomes a create.
// - Creates go through createOnce (check before resending, so a lost answer makes no duplicate).
// - Deletes go in batches of `batchSize` through Keys, one KeyType a batch; a batch the service
//   rejects with a per-record 4xx is split in halves until the bad key stands alone and is
//   reported (never on 401/403/5xx: every half would fail alike). SuccessCount reconciles a batch:
//   when the service deleted fewer listings than the batch holds, its keys are reported as not
//   confirmed and keep their fingerprints, not counted as deleted.
// - A circuit breaker: `breakerThreshold` calls in a row failing with a retryable error (after
//   the client's retries) mean the service is down; no new call is made and the run ends
//   'unavailable'. Calls are counted, not keys: a failed batch of 100 is one failure.
// - The first 401/403 ends the run 'failed' at once, the refusal recorded (model/refusal.ts) for the
//   run to word (the config key to fix: util/auth.ts).
// - `signal` aborts the run: no new call is started, calls in flight are waited for (their outcome
//   is known and reported), and the run ends 'aborted'.
// - A successful write's records (its entries for the commit, its change, its acknowledgement told to
//   `acked`) are made once the calls started with it are sent (afterTheWrites); settle() makes what
//   still waits, before the result is read. An update's job (its slot of the pool) ends only once
//   `acked` has its acknowledgement in the store: a run killed then sends again at most the writes
//   holding a slot (settle/acked.ts). A create's does not wait: a rerun finds its listing by key.
import { Entries } from '../model/entries.js';
import type { CallOptions, ChatbotApi } from '../../api/types.js';
import {
  ApiError,
  authStatus,
  causeMessage,
  effectiveStatus,
  isRetryable,
  RedisUnavailableError,
} from '../../errors.js';
import type { Logger } from '../../log.js';
import type { KeyType } from '../../listing/schema.js';
import { refusalOf } from '../model/refusal.js';
import { keptOfListing } from '../../listing/fingerprint.js';
import { unlistedTexts } from '../../listing/whole.js';
import type { BeforeCapture, Captured } from './capture-before.js';
import { ruleOf } from '../model/plan-types.js';
import { stoppedOutcome } from '../model/outcome.js';
import { createChange, deleteChange, updateChange, type ChangeSink, type ListingChange } from '../model/changes.js';
import { createOnce } from './create-once.js';
import { runPool } from './pool.js';
import type { ExecutionResult, Executor, ItemFailure, Job, LaneJob } from '../model/execution.js';
import { chunk, groupBy } from '../util/collections.js';
import type { KeyBy, PlannedCreate, PlannedDelete, PlannedUpdate } from '../model/plan-types.js';

export interface ExecuteDeps {
  api: ChatbotApi;
  /** the calls of this executor's jobs are counted for this scope (the lane's id: CallOptions.scope, call-counter.ts) */
  callScope?: string;
  serialNumber: string;
  keyBy: KeyBy;
  concurrency: number;
  batchSize: number;
  /** the client's retries: createOnce retries as many times */
  retries: number;
  retryBaseDelayMs?: number;
  breakerThreshold?: number;
  logger: Logger;
  /** the feed's name, for the config key an auth failure names (ExecutionResult.refused) */
  feed?: string;
  signal?: AbortSignal;
  onProgress?: (p: { done: number }) => void;
  /** told of each write made and each item that failed (the change log) */
  changes?: ChangeSink;
  /** keeps each listing as it was before an update or delete, for undo (with the change log) */
  before?: BeforeCapture;
  /** told of each write the API acknowledged, as it lands (settle/acked.ts records them before the lane's commit); resolved once recorded, `wait`: an update's job waits for that */
  acked?: { add(key: string, fingerprint: string, unlisted: string, wait: boolean): Promise<void> };
}

export type { ExecutionResult, Executor, ItemFailure, Job, LaneJob } from '../model/execution.js';

/** The write job of a planned create or update (an update names the remote listing it rewrites): the one builder of the run's lane jobs (run/lane-jobs.ts), undo and tests. */
export function writeJob(w: PlannedCreate | PlannedUpdate): Job {
  return 'remoteId' in w ? { kind: 'update', update: w } : { kind: 'create', create: w };
}

/** The write jobs of planned creates and updates, in the order given. */
export function* writeJobs(writes: Iterable<PlannedCreate | PlannedUpdate>): Generator<Job> {
  for (const w of writes) yield writeJob(w);
}

export function* deleteJobs(deletes: readonly PlannedDelete[], batchSize: number): Generator<Job> {
  for (const [keyType, group] of groupBy(deletes, (d) => d.keyType)) {
    for (const batch of chunk(group, batchSize)) yield { kind: 'delete', keyType, batch };
  }
}

export function createExecutor(deps: ExecuteDeps): Executor {
  const result = emptyResult();
  const calls = callOutcomes(deps, result);
  const later = afterTheWrites();
  const writes = listingWrites(deps, result, calls, later);
  const deletes = deleteBatches(deps, result, calls);
  let done = 0;

  const runJob = async (job: Job) =>
    job.kind === 'create'
      ? writes.create(job.create)
      : job.kind === 'update'
        ? writes.update(job.update)
        : deletes.run(job.batch, job.keyType, await deletes.capture(job.batch));

  const executor: Executor = {
    result,
    async runOne(job) {
      await runJob(job);
      deps.onProgress?.({ done: ++done });
    },
    settle() {
      later.flush();
      // The source may have ended because of the abort (a feed reader that heard the signal).
      if (deps.signal?.aborted && !result.stopped) {
        result.stopped = stoppedOutcome(deps.signal.reason);
        result.stopReason = `${stoppedBy(deps.signal.reason)}: calls in flight were finished, nothing new was sent; the next run goes on from what was written`;
      }
    },
    async run(jobs) {
      await runPool(laneJobsOf(jobs, executor), {
        concurrency: deps.concurrency,
        ...(deps.signal && { signal: deps.signal }),
      });
      executor.settle();
    },
  };
  return executor;
}

/**
 * What stopped the run, in its stopper's words where it gave some (`cancelled by ops@host`, a lost
 * lock, a worker's shutdown handing the job back), so the change log and the report say the same as
 * the run history; a process signal (its name: `feedsync sync` on Ctrl-C) or a bare abort is
 * "stopped by a signal".
 */
function stoppedBy(reason: unknown): string {
  const said =
    reason instanceof Error && reason.name !== 'AbortError' ? reason.message : typeof reason === 'string' ? reason : '';
  return said && !/^SIG[A-Z0-9]+$/.test(said) ? said : 'stopped by a signal';
}

/** A result with nothing done yet (the recording executor starts from one too: record.ts). */
export function emptyResult(): ExecutionResult {
  return {
    created: 0,
    updated: 0,
    deleted: 0,
    duplicatesRemoved: 0,
    updatesRecreated: 0,
    createsFound: 0,
    createResends: 0,
    failures: [],
    written: new Entries({ digests: true }),
    stamped: new Entries({ digests: true }),
    listed: new Entries({ digests: true }),
    deletedKeys: [],
    deletedByReason: {},
    unlisted: new Entries(),
  };
}

/** How calls end, for the breaker and the auth stop (they look at calls, not at the keys a call carried), and items that failed. */
interface CallOutcomes {
  succeeded(): void;
  /** one call failed: the breaker counts it, an auth refusal stops the lane */
  callFailed(err: unknown): void;
  /** `quiet`: logged at debug (the run's message says it: a refused credential) */
  itemFailed(key: string, op: ItemFailure['op'], reason: string, retryable: boolean, quiet?: boolean): void;
  /** the item and its call failed */
  failed(key: string, op: ItemFailure['op'], err: unknown): void;
}

function callOutcomes(deps: ExecuteDeps, result: ExecutionResult): CallOutcomes {
  const threshold = deps.breakerThreshold ?? 10;
  let consecutive = 0;
  const o: CallOutcomes = {
    succeeded: () => {
      consecutive = 0;
    },
    callFailed: (err) => {
      const refused = refusalOf(err, deps.feed ?? '?');
      if (refused && result.stopped !== 'failed') {
        // (the refusal is the reason now, whatever stopped the writes before: the caller words it)
        result.stopped = 'failed';
        result.refused = refused;
        delete result.stopReason;
        return;
      }
      // Redis gone from under the run (a request budget, a lock): every other call would wait as long
      if (err instanceof RedisUnavailableError && !result.stopped) {
        result.stopped = 'unavailable';
        result.stopReason = err.message;
        return;
      }
      if (!isRetryable(err)) return;
      if (++consecutive >= threshold && !result.stopped) {
        result.stopped = 'unavailable';
        result.stopReason = `the service looks down: ${consecutive} calls in a row failed after retries (last: ${causeMessage(err)})`;
      }
    },
    itemFailed: (key, op, reason, retryable, quiet = false) => {
      result.failures.push({ key, op, reason, retryable });
      deps.changes?.({ op: 'fail', key, attempted: op, reason, retryable });
      deps.logger[quiet ? 'debug' : 'warn']({ key, op, err: reason }, `${op} ${key} failed`);
    },
    failed: (key, op, err) => {
      // a refused credential is said once, as the run's message (its first line): not a warning per write in flight
      o.itemFailed(key, op, causeMessage(err), isRetryable(err), authStatus(err) !== undefined);
      o.callFailed(err);
    },
  };
  return o;
}

/** The executor's calls counted for its scope (CallOptions.scope); none without one. */
function scopeOf(deps: Pick<ExecuteDeps, 'callScope'>): CallOptions | undefined {
  return deps.callScope === undefined ? undefined : { scope: deps.callScope };
}

/** Creates (through createOnce) and updates (an update that finds nothing becomes a create). */
function listingWrites(deps: ExecuteDeps, result: ExecutionResult, calls: CallOutcomes, later: AfterTheWrites) {
  const record = writeRecorder(deps, result, calls, later);
  /** an update's records, resolved once its acknowledgement is in the store */
  const recordUpdate = (u: PlannedUpdate, change: () => ListingChange) =>
    new Promise<void>((inStore) => record(u, 'update', change, inStore));
  const send = createSender(deps, result);
  return {
    async create(c: PlannedCreate) {
      try {
        await send(c);
      } catch (err) {
        calls.failed(c.key, 'create', err);
        return;
      }
      result.created++;
      calls.succeeded();
      record(c, 'create', () => ({
        ...createChange(c),
        ...(deps.before && { after: c.kept ?? keptOfListing(c.listing) }),
      }));
    },
    async update(u: PlannedUpdate) {
      let recorded: Promise<void>;
      try {
        // (a later record of a key this run wrote has no remote copy of its own: its first change kept the listing)
        const before: Captured | undefined = u.remoteId
          ? await deps.before?.take(u.key, u.remoteId, u.listing, u.withheld)
          : undefined;
        const after = deps.before && { after: u.kept ?? keptOfListing(u.listing) };
        const n = await deps.api.updateListing({ ...u.listing, Key: u.key, KeyType: deps.keyBy }, scopeOf(deps));
        if (n === 0) {
          await send(u);
          result.updatesRecreated++;
          result.created++;
          recorded = recordUpdate(u, () => ({ ...createChange(u), ...after }));
        } else {
          result.updated++;
          recorded = recordUpdate(u, () => ({ ...updateChange(u), ...before, ...after }));
        }
        calls.succeeded();
      } catch (err) {
        calls.failed(u.key, 'update', err);
        return;
      }
      // (the slot stays taken until then: a rerun would send the update again)
      await recorded;
    },
  };
}

/**
 * A write's records, its entries for the commit and its change, made once the turn's calls are
 * written (afterTheWrites); `recorded` (an update's) is given what resolves once `acked` has it in
 * the store. A record that fails is the write's failure.
 */
function writeRecorder(deps: ExecuteDeps, result: ExecutionResult, calls: CallOutcomes, later: AfterTheWrites) {
  const unlistedText = unlistedTexts();
  return (
    w: PlannedCreate,
    op: ItemFailure['op'],
    change: () => ListingChange,
    recorded?: (inStore: Promise<void> | undefined) => void,
  ) =>
    later.add(() => {
      let acked: Promise<void> | undefined;
      try {
        const fields = unlistedText(w.listing);
        result.written.push(w.key, w.fingerprint);
        result.unlisted.push(w.key, fields);
        acked = deps.acked?.add(w.key, w.fingerprint, fields, recorded !== undefined);
        if (w.stamp !== undefined) result.stamped.push(w.key, w.stamp);
        if (w.stamp !== undefined && w.hash !== undefined) result.listed.push(w.key, base64url(w.hash));
        deps.changes?.(change());
      } catch (err) {
        calls.failed(w.key, op, err);
      }
      recorded?.(acked);
    });
}

/** a hash's bytes as base64url (Entries keeps such a string as its 20 bytes) */
const base64url = (bytes: Uint8Array): string =>
  Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength).toString('base64url');

/** A listing created through createOnce (found already there, or sent again, counted in the result). */
function createSender(deps: ExecuteDeps, result: ExecutionResult) {
  return async (c: PlannedCreate) => {
    const how = await createOnce(deps.api, c.listing, {
      keyBy: deps.keyBy,
      key: c.key,
      retries: deps.retries,
      baseDelayMs: deps.retryBaseDelayMs,
      signal: deps.signal,
      ...(deps.callScope !== undefined && { scope: deps.callScope }),
      onResend: () => result.createResends++,
    });
    if (how === 'found') result.createsFound++;
  };
}

/**
 * What can wait until the calls started in this turn of the event loop are written: a timer runs
 * at the start of the next turn, after the HTTP client wrote them (in the check phase: pool.ts
 * readAhead). A successful write's records (its entries for the commit, its change log entry) are
 * made there, in the order the answers came, instead of before the next calls of the same bunch of
 * answers are sent. `flush` makes what waits now (settle: before anything reads the result).
 */
interface AfterTheWrites {
  add(fn: () => void): void;
  flush(): void;
}

function afterTheWrites(): AfterTheWrites {
  let waiting: Array<() => void> = [];
  let timer: NodeJS.Timeout | undefined;
  const flush = () => {
    clearTimeout(timer);
    timer = undefined;
    const now = waiting;
    waiting = [];
    for (const fn of now) fn();
  };
  return {
    add(fn) {
      waiting.push(fn);
      timer ??= setTimeout(flush, 0);
    },
    flush,
  };
}

/** Delete batches: the listings kept before (undo), SuccessCount reconciled, a batch rejected for one key halved until it stands alone. */
function deleteBatches(deps: ExecuteDeps, result: ExecutionResult, calls: CallOutcomes) {
  const label = (d: PlannedDelete) => (d.reason === 'duplicate' ? `${d.key} (ID ${d.deleteKey})` : d.key);
  const batches = {
    /**
     * the listings a batch deletes, as they are before; not duplicate copies, nor listings a display
     * rule removes (the MLS does not allow them shown): undo never recreates them
     */
    async capture(batch: PlannedDelete[]): Promise<Map<string, Captured>> {
      const out = new Map<string, Captured>();
      if (!deps.before) return out;
      for (const d of batch) {
        if (d.reason === 'duplicate' || ruleOf(d.reason) || deps.signal?.aborted) continue;
        out.set(d.key, await deps.before.take(d.key, d.remoteIds[0]));
      }
      return out;
    },
    async run(batch: PlannedDelete[], keyType: KeyType, befores: ReadonlyMap<string, Captured>): Promise<void> {
      try {
        const { SuccessCount } = await deps.api.deleteListings(
          { SerialNumber: deps.serialNumber, Keys: batch.map((d) => d.deleteKey), KeyType: keyType },
          scopeOf(deps),
        );
        calls.succeeded();
        // listings the batch should remove: a key may stand for several copies; a copy counts once
        const expected = batch.reduce((n, d) => n + Math.max(1, d.remoteIds.length), 0);
        if (SuccessCount < expected) {
          // which keys stayed is not said: none of the batch is confirmed (each keeps its fingerprint)
          const reason = `the service answered SuccessCount ${SuccessCount} for ${expected} listing(s) in this batch: not confirmed deleted`;
          for (const d of batch) calls.itemFailed(label(d), 'delete', reason, false);
          return;
        }
        for (const d of batch) {
          deps.changes?.({ ...deleteChange(d), ...befores.get(d.key) });
          if (d.reason === 'duplicate') result.duplicatesRemoved++;
          else {
            result.deleted++;
            result.deletedKeys.push(d.key);
            result.deletedByReason[d.reason] = (result.deletedByReason[d.reason] ?? 0) + 1;
          }
        }
      } catch (err) {
        if (batch.length === 1 || !perRecordRejection(err) || deps.signal?.aborted || result.stopped) {
          for (const d of batch) calls.itemFailed(label(d), 'delete', causeMessage(err), isRetryable(err));
          calls.callFailed(err);
          return;
        }
        // Rejected for good: one bad key spoils the batch. Halve until it stands alone.
        const mid = Math.ceil(batch.length / 2);
        await batches.run(batch.slice(0, mid), keyType, befores);
        await batches.run(batch.slice(mid), keyType, befores);
      }
    },
  };
  return batches;
}

/** Jobs, each with the executor that runs them (the pool's unit: pool.ts). */
export async function* laneJobsOf(
  jobs: AsyncIterable<Job> | Iterable<Job>,
  executor: Executor,
): AsyncGenerator<LaneJob> {
  for await (const job of jobs) yield { executor, job };
}

/** A 4xx that one record of a batch can cause (a bad key): worth isolating by halving the batch. */
function perRecordRejection(err: unknown): boolean {
  if (!(err instanceof ApiError) || err.retryable || authStatus(err) !== undefined) return false;
  const status = effectiveStatus(err.httpStatus, err.apiCode);
  return status >= 400 && status < 500;
}
