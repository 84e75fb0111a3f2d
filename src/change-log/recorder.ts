// Feeds a change log from a running sync: the sync calls the sink for each change (synchronously),
// the recorder buffers them and appends in batches, at most maxPerRun changes and maxBytesPerRun
// bytes a run (the rest are counted). A value longer than VALUE_CHARS is kept as an excerpt, its
// sha1 and its length (boundChange): enough to show and detect a change, never the 20,000
// characters of a description twice. Whole listings (undo) are bounded where they are taken
// (capture-before.ts) and counted here. A failing change log never fails the sync: the error is
// logged and the run record says so. A change kept in the buffer keeps its own strings
// (own-string.ts): a listing's values are cut from the feed's text, and changes one a chunk of it
// (a rerun where few listings changed) would each hold a chunk of the file until their batch is written.
import { createHash } from 'node:crypto';
import { ownStrings } from '../feeds/own-string.js';
import type { Logger } from '../log.js';
import type { CanonicalValue, FieldChange } from '../listing/canonical.js';
import type { ChangeSink, ListingChange } from '../sync/index.js';
import { EXCERPT_CHARS, VALUE_CHARS, type ChangeEntry, type ChangeLog, type RunEntry } from './change-log.js';

const BATCH = 500;

export interface RunMeta {
  runId: string;
  jobId?: string;
  feed: string;
  chatbot: string;
  dryRun: boolean;
  /** an undo run: the run it undid */
  undoOf?: string;
}

/** What a run's record says beside what its recorder knows. */
export type RunPart = Omit<RunEntry, keyof RunMeta | 'recorded' | 'dropped' | 'wholes'>;

export interface ChangeRecorder {
  sink: ChangeSink;
  /** what the change log could not keep of this run (after finish): for the run's report, or undefined */
  unrecorded(): string | undefined;
  /** flushes what is buffered and records the run (finishRuns of this one alone) */
  finish(run: RunPart): Promise<RunEntry>;
  /** flushes what is buffered: the run's record, to write (finishRuns) */
  entry(run: RunPart): Promise<RunEntry>;
  /** the run's record written, or why not */
  recorded(refused: string | undefined): void;
}

/**
 * Several runs' recorders of one change log finished: each one's changes flushed, one after
 * another (each feed's stream gets them in the runs' order), then every run's record in one write
 * (ChangeLog.finishRuns), in the order given, as each finished alone would leave them.
 */
export async function finishRuns(
  log: ChangeLog,
  runs: ReadonlyArray<readonly [ChangeRecorder, RunPart]>,
): Promise<RunEntry[]> {
  const entries: RunEntry[] = [];
  for (const [recorder, run] of runs) entries.push(await recorder.entry(run));
  const refused = await recordRuns(log, entries);
  for (const [recorder] of runs) recorder.recorded(refused);
  return entries;
}

export function createChangeRecorder(
  log: ChangeLog,
  meta: RunMeta,
  opts: { maxPerRun: number; maxBytesPerRun?: number; logger: Logger },
): ChangeRecorder {
  let buffer: ChangeEntry[] = [];
  const budget = runBudget(opts.maxPerRun, opts.maxBytesPerRun ?? Infinity);
  const { wholes } = budget;
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
        opts.logger.warn(
          { err: err.message, changeLog: log.location, kept: batch.length },
          'the change log could not be written; the changes are kept and written again at the end of the run',
        );
      }),
    );
  };

  const recorder: ChangeRecorder = {
    sink(raw) {
      const change = ownStrings(boundChange(raw));
      if (!budget.admit(change)) return;
      buffer.push({
        runId: meta.runId,
        at: new Date().toISOString(),
        feed: meta.feed,
        chatbot: meta.chatbot,
        dryRun: meta.dryRun,
        change,
      });
      if (buffer.length >= BATCH) flush();
    },
    finish: async (run) => (await finishRuns(log, [[recorder, run]]))[0]!,
    async entry(run) {
      flush();
      await pending;
      lost = await writeAgain(log, unwritten, (err) => (failed = err.message));
      unwritten = [];
      return {
        ...meta,
        ...run,
        recorded: budget.recorded - lost,
        dropped: budget.dropped,
        ...(wholes.kept + wholes.notKept > 0 && { wholes }),
        ...(lost > 0 && {
          message: [run.message, `change log incomplete: ${lost} change(s) not recorded (${failed})`]
            .filter(Boolean)
            .join('; '),
        }),
      };
    },
    recorded(refused) {
      if (refused !== undefined) {
        failed = refused;
        opts.logger.warn({ err: failed, runId: meta.runId }, 'the run could not be recorded in the change log');
      }
      runNotRecorded = refused !== undefined;
    },
    unrecorded() {
      const parts = [lost > 0 && `${lost} change(s) not recorded`, runNotRecorded && 'the run not recorded'].filter(
        Boolean,
      );
      return parts.length ? `change log incomplete: ${parts.join(', ')} (${failed})` : undefined;
    },
  };
  return recorder;
}

/** What a run keeps: at most maxPerRun changes and maxBytes bytes; the whole listings (undo) counted apart. */
function runBudget(maxPerRun: number, maxBytes: number) {
  let bytes = 0;
  const budget = {
    recorded: 0,
    dropped: 0,
    wholes: { kept: 0, bytes: 0, notKept: 0 },
    /** counts the change; false when it is over the budget (dropped) */
    admit(change: ListingChange): boolean {
      const { wholes } = budget;
      const before = 'before' in change ? change.before : undefined;
      if ('beforeMissing' in change && change.beforeMissing) wholes.notKept++;
      // (whole listings are bounded by their own budget: only the entry's own bytes count here)
      const size = JSON.stringify(change).length - (before?.length ?? 0);
      if (budget.recorded >= maxPerRun || bytes + size > maxBytes) {
        budget.dropped++;
        if (before) wholes.notKept++;
        return false;
      }
      budget.recorded++;
      bytes += size;
      if (before) {
        wholes.kept++;
        wholes.bytes += before.length;
      }
      return true;
    },
  };
  return budget;
}

const RETRY_MS = 1000;

/** The runs' entries written; once more after a moment (a failover in progress is usually over by then). Why not, when not. */
async function recordRuns(log: ChangeLog, entries: readonly RunEntry[]): Promise<string | undefined> {
  try {
    await log.finishRuns(entries);
    return undefined;
  } catch {
    await new Promise((r) => setTimeout(r, RETRY_MS));
    return log.finishRuns(entries).then(
      () => undefined,
      (err: Error) => err.message,
    );
  }
}

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
  const t = new Date()
    .toISOString()
    .replace(/[-:]/g, '')
    .replace(/\.\d+Z$/, 'Z');
  return `${t}-${Math.random().toString(36).slice(2, 6)}`;
}

/** A change with every value longer than VALUE_CHARS (as JSON) cut to an excerpt, its sha1 and length. */
function boundChange(change: ListingChange): ListingChange {
  if (change.op !== 'update' || !change.changes.some(isLong)) return change;
  return { ...change, changes: change.changes.map(boundFieldChange) };
}

const tooLong = (v: CanonicalValue) =>
  v !== undefined && (typeof v === 'number' ? false : JSON.stringify(v).length > VALUE_CHARS);
const isLong = (c: FieldChange) => tooLong(c.old) || tooLong(c.new);

function boundFieldChange(c: FieldChange): FieldChange {
  if (!isLong(c)) return c;
  const out: FieldChange = { ...c };
  if (tooLong(c.old)) {
    const cut = cutValue(c.old);
    out.old = cut.excerpt;
    out.cut = { ...out.cut, old: cut.of };
  }
  if (tooLong(c.new)) {
    const cut = cutValue(c.new);
    out.new = cut.excerpt;
    out.cut = { ...out.cut, new: cut.of };
  }
  return out;
}

function cutValue(v: CanonicalValue): { excerpt: string; of: { sha1: string; length: number } } {
  const text = typeof v === 'string' ? v : JSON.stringify(v);
  return {
    excerpt: `${text.slice(0, EXCERPT_CHARS)}…`,
    of: { sha1: createHash('sha1').update(text).digest('base64url'), length: text.length },
  };
}
