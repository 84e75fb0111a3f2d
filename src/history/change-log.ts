// The change log: every write of every run, listing by listing, and every rejected record, with a
// retention so it stays bounded. Kept in Redis (streams and lists, trimmed by length and age) or,
// for runs without Redis, in a JSON-lines file beside the state file. `feedsync history` and
// `runs show` read it; the status page links to it.
import type { ListingChange } from '../sync/changes.js';

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
  /** changes past changeLog.maxPerRun, counted but not kept */
  dropped: number;
  /** what the chat check found, when it ran */
  chat?: { asked: number; answerable: number; missing: string[] };
}

export interface ChangeLogLimits {
  retentionDays: number;
  maxPerFeed: number;
  maxPerRun: number;
}

export const DEFAULT_LIMITS: ChangeLogLimits = { retentionDays: 30, maxPerFeed: 100_000, maxPerRun: 50_000 };

export interface ChangeLog {
  /** where it lives, for messages: "redis prefix:changes:*" or a file path */
  readonly location: string;
  append(entries: readonly ChangeEntry[]): Promise<void>;
  finishRun(run: RunEntry): Promise<void>;
  /** one run and its changes (the first `limit`) */
  run(runId: string, limit: number): Promise<{ run?: RunEntry; changes: ChangeEntry[] }>;
  /** one listing's changes, newest first */
  history(feed: string, key: string, limit: number): Promise<ChangeEntry[]>;
  /** the newest runs, of one feed or of all */
  runs(feed: string | undefined, limit: number): Promise<RunEntry[]>;
  close(): Promise<void>;
}

export function keyOfChange(c: ListingChange): string | undefined {
  return c.key;
}
