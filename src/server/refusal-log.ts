// Refused pushes, logged without letting a flood of them flood the log: one warn line per address a
// minute at most, the refusals in between counted into its next line. The addresses remembered are
// bounded (the oldest forgotten first), so a spray from many addresses costs a fixed amount of memory.
import type { Logger } from '../log.js';

const EVERY_MS = 60_000;
const MAX_ADDRESSES = 10_000;

interface Seen {
  loggedAt: number;
  /** refusals since that line */
  since: number;
}

/** A refusal of a push from `address` (for feed `feed`, as asked), logged or counted. */
export function refusalLog(
  logger: Logger,
  now: () => number = Date.now,
): (address: string | undefined, feed: string) => void {
  const seen = new Map<string, Seen>();
  return (address, feed) => {
    const from = address ?? 'unknown';
    const t = now();
    const s = seen.get(from);
    if (s && t - s.loggedAt < EVERY_MS) {
      s.since++;
      return;
    }
    const before = s?.since ?? 0;
    seen.delete(from);
    seen.set(from, { loggedAt: t, since: 0 });
    if (seen.size > MAX_ADDRESSES) seen.delete(seen.keys().next().value!);
    logger.warn(
      { feed, from, ...(before > 0 && { refusedSince: before }) },
      `push refused: no such push feed, or not its bearer token${before > 0 ? ` (and ${before} more from this address since the last such line; at most one a minute is logged)` : ''}`,
    );
  };
}
