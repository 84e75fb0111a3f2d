// A progress line for long runs on a terminal: rewritten in place on stderr, at most every 250 ms,
// and cleared when the run ends. Nothing at all when stderr is not a TTY (logs, CI, pipes). It shows
// done/total where the total is known (delete batches, writes once the feed is read), a rate, and
// the time left once both are known. A queued run's progress is the same events followed into a
// RunProgress (createRunProgress), which the worker hands to BullMQ (job.updateProgress) and /status
// and `enqueue --wait` read back (describeProgress).
import { z } from 'zod';
import { stderrLine, type StatusLine } from '../../terminal.js';

/** Where a run is, for the progress line (SyncDeps.onProgress). */
export interface SyncProgress {
  feed: string;
  phase: 'feed' | 'write';
  done: number;
  /** how many there will be, once known (the progress line shows done/total) */
  total?: number;
}

export interface ProgressLine {
  onProgress(p: SyncProgress): void;
  clear(): void;
}

const UNITS: Record<SyncProgress['phase'], string> = { feed: 'records read', write: 'writes done' };

export function createProgressLine(
  stream: { isTTY?: boolean } = process.stderr,
  opts: { everyMs?: number; line?: StatusLine; now?: () => number } = {},
): ProgressLine {
  if (!stream.isTTY) return { onProgress: () => {}, clear: () => {} };
  const everyMs = opts.everyMs ?? 250;
  const line = opts.line ?? stderrLine;
  const now = opts.now ?? Date.now;
  let last = -Infinity;
  /** when each phase was first seen, and its count then: the rate is over the phase so far */
  const started = new Map<string, { at: number; done: number }>();
  return {
    onProgress(p) {
      const t = now();
      const key = `${p.feed}:${p.phase}`;
      if (!started.has(key)) started.set(key, { at: t, done: p.done });
      if (t - last < everyMs) return;
      last = t;
      line.show(progressText(p, started.get(key)!, t));
    },
    clear: () => line.clear(),
  };
}

export function progressText(p: SyncProgress, start: { at: number; done: number }, t: number): string {
  const total = p.total !== undefined && p.total >= p.done ? `/${p.total}` : '';
  const pct = total && p.total ? ` (${Math.floor((p.done / p.total) * 100)}%)` : '';
  const perSecond = ratePerSecond(p.done, start, t);
  const rate = perSecond !== undefined ? `, ${Math.round(perSecond)}/s` : '';
  const eta = total ? secondsLeft(p.done, p.total, perSecond) : undefined;
  return `${p.feed}: ${p.done}${total} ${UNITS[p.phase]}${pct}${rate}${eta !== undefined ? `, ${timeLeft(eta)}` : ''}`;
}

/** Done per second since `start` (the phase's first event), once half a second has passed and something was done. */
function ratePerSecond(done: number, start: { at: number; done: number }, t: number): number | undefined {
  const secs = (t - start.at) / 1000;
  return secs >= 0.5 && done > start.done ? (done - start.done) / secs : undefined;
}

function secondsLeft(done: number, total: number | undefined, perSecond: number | undefined): number | undefined {
  if (total === undefined || perSecond === undefined || total < done) return undefined;
  return Math.ceil((total - done) / perSecond);
}

/** "about 40 s left", "about 3 min left", "about 2 h left" */
export function timeLeft(seconds: number): string {
  if (seconds < 90) return `about ${seconds} s left`;
  if (seconds < 90 * 60) return `about ${Math.round(seconds / 60)} min left`;
  return `about ${Math.round(seconds / 3600)} h left`;
}

/**
 * What a running sync has done, as a queued job's progress holds it (plain JSON in Redis, so read
 * back through this schema): the feed being run, whether its read is still going, records read,
 * writes done of those planned (known once the read is over), and the time left by the write rate.
 */
export const RunProgress = z.object({
  feed: z.string(),
  phase: z.enum(['reading', 'writing']),
  read: z.number().int().nonnegative(),
  written: z.number().int().nonnegative(),
  planned: z.number().int().nonnegative().optional(),
  etaSeconds: z.number().nonnegative().optional(),
  /** when it was taken (ISO), by the worker's clock */
  at: z.string(),
});
export type RunProgress = z.infer<typeof RunProgress>;

/** Follows a run's progress events (SyncDeps.onProgress) into a RunProgress of the feed they are about. */
export function createRunProgress(now: () => number = Date.now): { update(p: SyncProgress): RunProgress } {
  const feeds = new Map<
    string,
    { read: number; written: number; planned?: number; writesFrom?: { at: number; done: number } }
  >();
  return {
    update(p) {
      const t = now();
      const f = feeds.get(p.feed) ?? feeds.set(p.feed, { read: 0, written: 0 }).get(p.feed)!;
      if (p.phase === 'feed') f.read = p.done;
      else {
        f.written = p.done;
        if (p.total !== undefined) f.planned = p.total;
        f.writesFrom ??= { at: t, done: p.done };
      }
      const eta = f.writesFrom && secondsLeft(f.written, f.planned, ratePerSecond(f.written, f.writesFrom, t));
      return {
        feed: p.feed,
        phase: f.planned === undefined ? 'reading' : 'writing',
        read: f.read,
        written: f.written,
        ...(f.planned !== undefined && { planned: f.planned }),
        ...(eta !== undefined && { etaSeconds: eta }),
        at: new Date(t).toISOString(),
      };
    },
  };
}

const count = (n: number) => n.toLocaleString('en-US');

/** "homes: writing 1,200/3,400 (35%), about 2 min left" (enqueue --wait's line) */
export function describeProgress(p: RunProgress): string {
  return `${p.feed}: ${progressWords(p)}`;
}

/** "writing 1,200/3,400 (35%), about 2 min left", "reading, 5,000 records read, 300 writes done" (a feed's row on /status) */
export function progressWords(p: RunProgress): string {
  if (p.phase === 'reading' || p.planned === undefined)
    return `reading, ${count(p.read)} records read, ${count(p.written)} writes done`;
  const pct = p.planned ? ` (${Math.floor((Math.min(p.written, p.planned) / p.planned) * 100)}%)` : '';
  return `writing ${count(p.written)}/${count(p.planned)}${pct}${p.etaSeconds !== undefined ? `, ${timeLeft(p.etaSeconds)}` : ''}`;
}
