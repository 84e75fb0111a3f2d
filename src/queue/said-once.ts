// Failures said once. The schedule watch (schedule-watch.ts) tries a failing write again at every
// look, every few seconds to a minute; a warning at each look buries the log in one line. So each
// failure is said when it first happens, again when it changes (other words: another error, another
// state), and again after a long while if it stays (one line an hour, with how many looks it failed
// since), never dropped: an operator reading the log the next day still finds it. One that stops
// failing is forgotten, so its return is said at once.

/** How long a failure that stays the same goes unsaid: an hour. */
export const SAY_AGAIN_MS = 3_600_000;

/** What a failure said again carries: since when it fails, and how many times it failed since then. */
export interface SaidAgain {
  since: string;
  times: number;
}

export interface FailuresSaid {
  /** Whether to say this failure of `what` now, and if it was said before, since when and how often unsaid. */
  toSay(what: string, words: string): { again?: SaidAgain } | undefined;
  /** A look done: forget the failures of every `what` not in `failing` (they stopped failing). */
  keepOnly(failing: ReadonlySet<string>): void;
}

export function failuresSaid(againMs: number = SAY_AGAIN_MS, now: () => number = Date.now): FailuresSaid {
  const said = new Map<string, { words: string; since: number; at: number; times: number }>();
  return {
    toSay(what, words) {
      const t = now();
      const was = said.get(what);
      const same = was?.words === words ? was : undefined;
      if (same && t - same.at < againMs) {
        same.times++;
        return undefined;
      }
      said.set(what, { words, since: same?.since ?? t, at: t, times: (same?.times ?? 0) + 1 });
      return same ? { again: { since: new Date(same.since).toISOString(), times: same.times + 1 } } : {};
    },
    keepOnly(failing) {
      for (const what of said.keys()) if (!failing.has(what)) said.delete(what);
    },
  };
}
