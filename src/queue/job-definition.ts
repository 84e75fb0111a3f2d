// What a job in jobs/ looks like: a name, its queue, a zod payload schema and a thin processor.
// The processor's return value is the run report; src/queue decides retry or not from it.
import type { z } from 'zod';
import type { CallCounter } from '../api/call-counter.js';
import type { ChatbotApi } from '../api/types.js';
import type { Budgets } from '../budget/budget.js';
import type { LoadedConfig } from '../config/schema.js';
import type { Logger } from '../log.js';
import type { KvStore } from '../state/kv-store.js';
import type { ChangeLog } from '../change-log/change-log.js';
import type { JobKind } from './names.js';
import type { RedisClient } from '../redis/connection.js';

/** The common face of the sync, settings and smoke reports. */
export interface RunReport {
  outcome: string;
  summary: string;
  /** a rerun of the same work may succeed (transient failure) */
  retryable?: boolean;
  /** ISO time before which a rerun cannot succeed (a spent request budget resets then) */
  retryAt?: string;
}

/** What a run is about, for logs and run history. */
export interface RunTarget {
  feed?: string;
  chatbot?: string;
  /** a job of several feeds (a scheduler's group): logs name them; its history is one row per feed (historyRows) */
  feeds?: string[];
}

export interface JobRuntime {
  api: ChatbotApi;
  store: KvStore;
  /** request budgets per credential (runtime.ts): feed sources' limits */
  budgets?: Budgets;
  /** the per-listing change log (the worker's runtime has one) */
  changeLog?: ChangeLog;
  /** the Redis the state lives in (the worker's): pushed events wait there (push-events.ts) */
  redis?: RedisClient;
}

export interface JobContext {
  config: LoadedConfig;
  runtime: JobRuntime;
  logger: Logger;
  /** aborted when the job is cancelled, its job lock or a chatbot lock is lost, or its worker shuts down (the reason says which: errors.ts; sync/model/outcome.ts stoppedOutcome) */
  signal: AbortSignal;
  jobId: string;
  attempt: { made: number; max: number };
  /** counts this job's API calls (fed through call-scope.ts) */
  calls: CallCounter;
  /** the run's progress now (plain JSON): BullMQ's job progress, at most once a second (job-progress.ts) */
  progress?(data: object): void;
}

export interface JobDefinition<P = unknown, R extends RunReport = RunReport> {
  name: string;
  kind: JobKind;
  payload: z.ZodType<P>;
  /** the feed/chatbot a payload is about (history key, log fields, per-feed lock) */
  target(payload: P, config: LoadedConfig): RunTarget;
  /** at most one run per target at a time, across every worker */
  exclusive?: boolean;
  /**
   * with exclusive: the chatbots the job writes into (a routed feed: each of its chatbots), whose
   * locks it takes, all of them, before it runs; default the target's lock alone
   */
  chatbots?(payload: P, config: LoadedConfig): string[];
  /** with exclusive: the kind whose lock it shares (an undo takes the chatbot's sync lock); default its own */
  lockKind?: JobKind;
  /**
   * a scheduled job of several feeds, each paused on its own (control.ts): `feeds` are the payload's,
   * `without` the payload of the unpaused ones; all paused, the run is skipped as a paused feed's is
   */
  pausable?: { feeds(payload: P): string[]; without(payload: P, paused: readonly string[]): P };
  /**
   * the run history's rows of a run, each under its own target, and one metrics observation each
   * (a job of several feeds: one per feed); default one row under the job's target
   */
  historyRows?(payload: P, report: RunReport, config: LoadedConfig): Array<{ target: RunTarget; report: RunReport }>;
  /**
   * a job failed without running (processor.ts stalledTooOften: its workers stopped running it, or
   * lost it, too often), after its history is recorded: what its own run would also have told, the
   * alert rules of a sync's lanes (its attempts taken over counted for none of them)
   */
  failedUnrun?(
    payload: P,
    report: RunReport,
    ctx: Pick<JobContext, 'config' | 'runtime' | 'logger' | 'jobId' | 'attempt'>,
  ): Promise<void>;
  /** the processor logs the run's summary line itself (the queue then logs only a retry/fail decision) */
  logsSummary?: boolean;
  process(payload: P, ctx: JobContext): Promise<R>;
}
