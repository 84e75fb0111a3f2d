// A progress line for long runs on a terminal: rewritten in place on stderr, at most every 250 ms,
// and cleared when the run ends. Nothing at all when stderr is not a TTY (logs, CI, pipes). It shows
// done/total where the total is known (delete batches, writes once the feed is read) and a rate.
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

export function createProgressLine(stream: { isTTY?: boolean } = process.stderr, opts: { everyMs?: number; line?: StatusLine; now?: () => number } = {}): ProgressLine {
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
  const secs = (t - start.at) / 1000;
  const rate = secs >= 0.5 && p.done > start.done ? `, ${Math.round((p.done - start.done) / secs)}/s` : '';
  return `${p.feed}: ${p.done}${total} ${UNITS[p.phase]}${pct}${rate}`;
}
