// What a lane's writes are made of and what they come to (write/execute.ts carries them out):
// the jobs, the executor's face, its result. Kernel types: the read routes jobs to executors,
// the settle and report steps read the result.
import type { Entries } from './entries.js';
import type { KeyType } from '../../listing/schema.js';
import type { DeleteReason, PlannedCreate, PlannedDelete, PlannedUpdate } from './plan-types.js';
import type { StoppedOutcome } from './outcome.js';
import type { Refusal } from './refusal.js';

export interface ItemFailure {
  key: string;
  op: 'create' | 'update' | 'delete';
  reason: string;
  retryable: boolean;
}

export interface ExecutionResult {
  created: number;
  updated: number;
  /** listings deleted because the feed no longer has them (or marks them removed) */
  deleted: number;
  duplicatesRemoved: number;
  /** updates that answered 0 and were created instead */
  updatesRecreated: number;
  /** creates whose answer was lost and that the list showed had been made */
  createsFound: number;
  /** creates sent again after a lost answer or a 429 (sent with retry: false, so not the client's retries) */
  createResends: number;
  failures: ItemFailure[];
  /** key → fingerprint of every successful write */
  written: Entries;
  /** key → stamp of every successful write planned with one (record-stamp.ts) */
  stamped: Entries;
  /**
   * key → the comparison hash (base64url; kept as its 20 bytes) of every such write: what the
   * chatbot's list shows of it once written (a seal's list, settle/seal.ts)
   */
  listed: Entries;
  /** feed keys deleted (their fingerprints go) */
  deletedKeys: string[];
  /** the deleted ones by why they went (absent, off-market, removed, moved, …) */
  deletedByReason: Partial<Record<DeleteReason, number>>;
  /** key → the unlisted fields (JSON) of every successful write: what undo completes a listing with */
  unlisted: Entries;
  stopped?: StoppedOutcome | 'unavailable' | 'failed';
  /** why the writes stopped, said for a person; none when a credential was refused */
  stopReason?: string;
  /** the credential the API refused (stopped 'failed'): a value, worded by whoever reports the run (util/auth.ts) */
  refused?: Refusal;
}

/** One unit of work: a create, an update, or a batch of deletes of one KeyType. */
export type Job =
  | { kind: 'create'; create: PlannedCreate }
  | { kind: 'update'; update: PlannedUpdate }
  | { kind: 'delete'; keyType: KeyType; batch: PlannedDelete[] };

/** One lane's writes (sync-run.ts): its results, its breaker, its auth stop. */
export interface Executor {
  /** Runs the jobs, `concurrency` at a time; resolves when all started ones are done or the run stops. */
  run(jobs: AsyncIterable<Job> | Iterable<Job>): Promise<void>;
  /** One job, now (the caller's pool keeps `concurrency` of them in flight: runPool, pool.ts) */
  runOne(job: Job): Promise<void>;
  /** After a pool ended, before the result is read: the writes' records that still wait are made; a run whose signal was aborted ends 'aborted', 'cancelled' by an operator's cancel, 'taken-over' by a worker job's lost job or chatbot lock, or 'handed-back' by its worker's shutdown (stoppedOutcome; unless it stopped otherwise). */
  settle(): void;
  result: ExecutionResult;
}

/** A job and the lane's executor that runs it (the write pool: write/pool.ts). */
export interface LaneJob {
  executor: Executor;
  job: Job;
}
