// The change log: every write of every run, listing by listing, and every rejected record, with a
// retention so it stays bounded. Kept in Redis (streams and lists, trimmed by length and age) or,
// for runs without Redis, in a JSON-lines file beside the state file. `feedsync history` and
// `runs show` read it; the status page links to it.
import type { FieldChange } from '../listing/canonical.js';
import type { ListingChange } from '../sync/index.js';

export interface ChangeEntry {
  runId: string;
  /** when the change was made (or planned, in a dry run) */
  at: string;
  feed: string;
  chatbot: string;
  dryRun: boolean;
  change: ListingChange;
}

/** One run as the change log knows it: its outcome, counts and how many changes it recorded. */
export interface RunEntry {
  runId: string;
  jobId?: string;
  feed: string;
  chatbot: string;
  dryRun: boolean;
  startedAt: string;
  finishedAt: string;
  durationMs: number;
  outcome: string;
  summary: string;
  message?: string;
  counts: Record<string, number>;
  /** changes recorded for this run */
  recorded: number;
  /** changes past changeLog.maxPerRun or maxBytesPerRun, counted but not kept */
  dropped: number;
  /**
   * whole listings kept for undo (before each update and delete): how many, their packed bytes, and
   * how many changes could not keep theirs (byte budget, read-back failure)
   */
  wholes?: { kept: number; bytes: number; notKept: number };
  /** what `feedsync undo` of this run did: the run it undid */
  undoOf?: string;
  /** what the chat check found, when it ran */
  chat?: { asked: number; answerable: number; missing: string[] };
}

/**
 * One run's record and its first changes, and how many changes the run id holds in all. A worker's
 * job handed back by a shutdown, or taken over after its worker died, runs again under the same
 * run id (BullMQ spends no attempt): the changes of both attempts are the run's, the record the
 * last one's, so `total` may pass `run.recorded`.
 */
export interface RunChanges {
  run?: RunEntry;
  changes: ChangeEntry[];
  total: number;
}

/** Changes recorded under the run id by an attempt before the one its record describes. */
export function earlierAttemptChanges({ run, total }: RunChanges): number {
  return run ? Math.max(0, total - run.recorded) : 0;
}

/** What `runs show` and the status page say of them, when there are any. */
export function earlierAttemptNote(found: RunChanges): string | undefined {
  const n = earlierAttemptChanges(found);
  return n
    ? `${n} of these changes were made by an earlier attempt of this run (its worker shut down, died or lost the job’s lock before it ended); the outcome and counts above are the last attempt’s`
    : undefined;
}

export interface ChangeLogLimits {
  retentionDays: number;
  maxPerFeed: number;
  maxPerRun: number;
  /** bytes of change entries (as JSON, whole listings aside) one run records; past it they are counted, not kept */
  maxBytesPerRun?: number;
  /** bytes of packed whole listings (undo) one run keeps */
  maxWholeBytesPerRun?: number;
  /** bytes of packed whole listings kept per feed across its runs: the oldest runs' go first */
  maxWholeBytesPerFeed?: number;
}

export const DEFAULT_LIMITS: Required<ChangeLogLimits> = {
  retentionDays: 30,
  maxPerFeed: 100_000,
  maxPerRun: 50_000,
  maxBytesPerRun: 6 << 20,
  maxWholeBytesPerRun: 6 << 20,
  maxWholeBytesPerFeed: 64 << 20,
};

/** A value longer than this (as JSON) is kept as an excerpt, its sha1 and its length. */
export const VALUE_CHARS = 200;
/** Characters of a long value's excerpt. */
export const EXCERPT_CHARS = 80;

export interface ChangeLog {
  /** where it lives, for messages: "redis prefix:changes:*" or a file path */
  readonly location: string;
  append(entries: readonly ChangeEntry[]): Promise<void>;
  /** the runs' records, in the order given (the newest last: the lists of runs read newest first), in one write */
  finishRuns(runs: readonly RunEntry[]): Promise<void>;
  /** one run and its changes (the first `limit`), and how many it holds */
  run(runId: string, limit: number): Promise<RunChanges>;
  /** one listing's changes, newest first */
  history(feed: string, key: string, limit: number): Promise<ChangeEntry[]>;
  /** the newest runs, of one feed or of all */
  runs(feed: string | undefined, limit: number): Promise<RunEntry[]>;
  close(): Promise<void>;
}

/**
 * An entry as the reading commands print it: a whole listing kept for undo (packed, up to tens of KB)
 * is named by its size, not printed.
 */
export function shownEntry(
  e: ChangeEntry,
): ChangeEntry | (Omit<ChangeEntry, 'change'> & { change: Omit<ListingChange, 'before'> & { beforeBytes: number } }) {
  const c = e.change;
  if (!('before' in c) || c.before === undefined) return e;
  const { before, ...rest } = c;
  return { ...e, change: { ...rest, beforeBytes: before.length } };
}

/**
 * One listing's entries (newest first) as its last write lets them be shown: when that write
 * withheld fields (its address: `withheldFields`, docs/display-rules.md), no entry shows a value of
 * them, though it was written while they could be shown (nor `after`, the kept form, which holds
 * them unnamed).
 */
export function asShownNow(entries: readonly ChangeEntry[]): ChangeEntry[] {
  const last = entries.find(
    (e) => !e.dryRun && (e.change.op === 'create' || e.change.op === 'update' || e.change.op === 'delete'),
  )?.change;
  const fields = new Set(last && (last.op === 'create' || last.op === 'update') ? (last.withheldFields ?? []) : []);
  if (fields.size === 0) return [...entries];
  const field = (c: FieldChange): FieldChange => {
    if (!fields.has(c.field)) return c;
    const { old: _o, new: _n, cut: _c, oldNotKept: _k, ...rest } = c;
    return {
      ...rest,
      old: undefined,
      new: undefined,
      ...(c.old !== undefined && { oldWithheld: true }),
      ...(c.new !== undefined && { newWithheld: true }),
    };
  };
  return entries.map((e) => {
    if (e.change.op !== 'create' && e.change.op !== 'update') return e;
    const { after: _after, ...c } = e.change;
    const headline = c.headline && Object.fromEntries(Object.entries(c.headline).filter(([k]) => !fields.has(k)));
    const change: ListingChange =
      c.op === 'create'
        ? { ...c, headline: headline ?? {} }
        : { ...c, changes: c.changes.map(field), ...(headline && { headline }) };
    return { ...e, change };
  });
}
