// A progress line for long runs on a terminal: rewritten in place on stderr, at most every 250 ms,
// and cleared when the run ends. Nothing at all when stderr is not a TTY (logs, CI, pipes).
import type { SyncProgress } from './sync-feed.js';

export interface ProgressLine {
  onProgress(p: SyncProgress): void;
  clear(): void;
}

export function createProgressLine(stream: NodeJS.WriteStream = process.stderr, everyMs = 250): ProgressLine {
  if (!stream.isTTY) return { onProgress: () => {}, clear: () => {} };
  let last = 0;
  let shown = false;
  return {
    onProgress(p) {
      const t = Date.now();
      if (t - last < everyMs) return;
      last = t;
      const what = p.phase === 'feed' ? `${p.done} records read` : `${p.done} calls done`;
      stream.write(`\r\x1b[K${p.feed}: ${what}`);
      shown = true;
    },
    clear() {
      if (shown) stream.write('\r\x1b[K');
      shown = false;
    },
  };
}
