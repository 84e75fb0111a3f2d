// Feeds a change log from a running sync: the sync calls the sink for each change (synchronously),
// the recorder buffers them and appends in batches, at most maxPerRun a run (the rest are counted).
// A failing change log never fails the sync: the error is logged and the run record says so.
import type { Logger } from '../log.js';
import type { ChangeSink } from '../sync/changes.js';
import type { ChangeEntry, ChangeLog, RunEntry } from './change-log.js';

const BATCH = 500;

export interface RunMeta {
  runId: string;
  jobId?: string;
  feed: string;
  chatbot: string;
  dryRun: boolean;
}

export interface ChangeRecorder {
  sink: ChangeSink;
  /** what the change log could not keep of this run (after finish): for the run's report, or undefined */
  unrecorded(): string | undefined;
  /** flushes what is buffered and records the run */
  finish(run: Omit<RunEntry, keyof RunMeta | 'recorded' | 'dropped'>): Promise<RunEntry>;
}

export function createChangeRecorder(log: ChangeLog, meta: RunMeta, opts: { maxPerRun: number; logger: Logger }): ChangeRecorder {
  let buffer: ChangeEntry[] = [];
  let recorded = 0;
  let dropped = 0;
  let failed: string | undefined;
  let pending: Promise<void> = Promise.resolve();
  // batches the change log refused (Redis away, a failover): kept, and written again at the end
  let unwritten: ChangeEntry[][] = [];
  let lost = 0;
  let runNotRecorded = false;

  const flush = () => {
    const batch = buffer;
    buffer = [];
    if (!batch.length) return;
    pending = pending.then(() =>
      log.append(batch).catch((err: Error) => {
        failed ??= err.message;
        unwritten.push(batch);
        opts.logger.warn({ err: err.message, changeLog: log.location, kept: batch.length }, 'the change log could not be written; the changes are kept and written again at the end of the run');
      }),
    );
  };

  return {
    sink(change) {
      if (recorded >= opts.maxPerRun) {
        dropped++;
        return;
      }
      recorded++;
      buffer.push({ runId: meta.runId, at: new Date().toISOString(), feed: meta.feed, chatbot: meta.chatbot, dryRun: meta.dryRun, change });
      if (buffer.length >= BATCH) flush();
    },
    async finish(run) {
      flush();
      await pending;
      lost = await writeAgain(log, unwritten, (err) => (failed = err.message));
      unwritten = [];
      const entry: RunEntry = {
        ...meta,
        ...run,
        recorded: recorded - lost,
        dropped,
        ...(lost > 0 && { message: [run.message, `change log incomplete: ${lost} change(s) not recorded (${failed})`].filter(Boolean).join('; ') }),
      };
      const saved = await log.finishRun(entry).then(
        () => true,
        // once more: a failover in progress is usually over after a moment
        () => new Promise((r) => setTimeout(r, RETRY_MS)).then(() => log.finishRun(entry)).then(() => true, (err: Error) => (failed = err.message, false)),
      );
      if (!saved) opts.logger.warn({ err: failed, runId: meta.runId }, 'the run could not be recorded in the change log');
      runNotRecorded = !saved;
      return entry;
    },
    unrecorded() {
      const parts = [lost > 0 && `${lost} change(s) not recorded`, runNotRecorded && 'the run not recorded'].filter(Boolean);
      return parts.length ? `change log incomplete: ${parts.join(', ')} (${failed})` : undefined;
    },
  };
}

const RETRY_MS = 1000;

/** Append the kept batches again, in order; the number of changes that still could not be written. */
async function writeAgain(log: ChangeLog, batches: ChangeEntry[][], onError: (err: Error) => void): Promise<number> {
  let lost = 0;
  for (const batch of batches) {
    await log.append(batch).catch((err: Error) => {
      onError(err);
      lost += batch.length;
    });
  }
  return lost;
}

/** A run id a person can type: the job's id and attempt, or the time of a command-line run. */
export function newRunId(job?: { jobId: string; attempt: number }): string {
  if (job) return `${job.jobId}.${job.attempt}`;
  const t = new Date().toISOString().replace(/[-:]/g, '').replace(/\.\d+Z$/, 'Z');
  return `${t}-${Math.random().toString(36).slice(2, 6)}`;
}
