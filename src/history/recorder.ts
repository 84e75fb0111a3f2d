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
  /** flushes what is buffered and records the run */
  finish(run: Omit<RunEntry, keyof RunMeta | 'recorded' | 'dropped'>): Promise<RunEntry>;
}

export function createChangeRecorder(log: ChangeLog, meta: RunMeta, opts: { maxPerRun: number; logger: Logger }): ChangeRecorder {
  let buffer: ChangeEntry[] = [];
  let recorded = 0;
  let dropped = 0;
  let failed: string | undefined;
  let pending: Promise<void> = Promise.resolve();

  const flush = () => {
    const batch = buffer;
    buffer = [];
    if (!batch.length) return;
    pending = pending.then(() =>
      log.append(batch).catch((err: Error) => {
        failed ??= err.message;
        opts.logger.warn({ err: err.message, changeLog: log.location }, 'the change log could not be written; the sync goes on');
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
      const entry: RunEntry = {
        ...meta,
        ...run,
        recorded,
        dropped,
        ...(failed && { message: [run.message, `change log incomplete: ${failed}`].filter(Boolean).join('; ') }),
      };
      await log.finishRun(entry).catch((err: Error) => opts.logger.warn({ err: err.message }, 'the run could not be recorded in the change log'));
      return entry;
    },
  };
}

/** A run id a person can type: the job's id and attempt, or the time of a command-line run. */
export function newRunId(job?: { jobId: string; attempt: number }): string {
  if (job) return `${job.jobId}.${job.attempt}`;
  const t = new Date().toISOString().replace(/[-:]/g, '').replace(/\.\d+Z$/, 'Z');
  return `${t}-${Math.random().toString(36).slice(2, 6)}`;
}
