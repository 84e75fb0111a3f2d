// What a job processor is given by the worker that runs it (cli/worker.ts builds one per job kind).
import type { LoadedConfig } from '../config/schema.js';
import type { Logger } from '../log.js';
import type { RedisClient } from '../redis/connection.js';
import type { CancelWatcher } from './control.js';
import type { JobRuntime, RunReport, RunTarget } from './job-definition.js';

export interface ProcessorDeps {
  config: LoadedConfig;
  runtime: JobRuntime;
  redis: RedisClient;
  prefix: string;
  logger: Logger;
  historySize: number;
  /** TTL of the per-target lock; a crashed worker's lock frees itself after this */
  lockTtlMs: number;
  /**
   * how long a job waits (delayed) before trying again when its target is busy, unless the release
   * wakes it first (the usual case): a backstop for a holder that died
   */
  busyDelayMs: number;
  /** operator cancels reach the running job through this (control.ts); none: no cancel */
  cancels?: CancelWatcher;
  /** one line per finished run (metrics) */
  onRun?: (run: { job: string; target: RunTarget; report: RunReport; jobId: string }) => void;
}
