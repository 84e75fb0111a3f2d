// Exit status (docs/contracts.md, "Exit statuses"), the same for `sync`, `enqueue --wait` and `undo`:
//   0 ok; 1 failed (the feed or the service could not be used; nothing or little was written);
//   2 usage or config error; 3 a delete guard held deletes back; 4 partial (the feed was not read
//   whole or some writes failed; deletes withheld); 6 rejected (the feed was read and what it holds
//   cannot be used: not the feed's file, a mapped column missing, no valid record or far fewer than
//   the last good run; nothing deleted). 5 is `feed drift`'s (drift found).
// Several runs in one command: the most serious wins, in the order of SEVERITY below. A cron job
// acts on the one number it gets: 2 and 1 need someone (nothing useful ran, or a feed or the
// service could not be used); 6 needs someone to look at the feed or its mapping (a rerun reads the
// same file); 4 means listings may be stale (part of the feed or some writes did
// not get through: look at the feed or rerun); 3 means everything was written and only deletes
// wait for a decision (--force or a fix at the source).
import { ConfigError, FeedsyncError, GuardError } from '../errors.js';
import { maskDeep, maskSecrets as redactSecrets } from '../secrets.js';
import { isSystemError, systemProblem, systemSubject } from '../system-error.js';

export const EXIT = { ok: 0, failed: 1, usage: 2, guard: 3, partial: 4, rejected: 6 } as const;
export type ExitStatus = (typeof EXIT)[keyof typeof EXIT];

/** Most serious first: the status a command with several runs ends with is the first one any run has. */
export const SEVERITY: readonly ExitStatus[] = [
  EXIT.usage,
  EXIT.failed,
  EXIT.rejected,
  EXIT.partial,
  EXIT.guard,
  EXIT.ok,
];

/** The table `--help` and the README show (test/cli/exit.test.ts holds the README's to this one). */
export const EXIT_TABLE: readonly { status: ExitStatus; meaning: string }[] = [
  { status: EXIT.ok, meaning: 'ok: every feed read whole, every write done' },
  { status: EXIT.failed, meaning: 'failed: a feed or the service could not be used; nothing or little was written' },
  { status: EXIT.usage, meaning: 'usage or config error: nothing ran' },
  { status: EXIT.guard, meaning: 'a delete guard held deletes back; creates and updates were written' },
  { status: EXIT.partial, meaning: 'partial: a feed was not read whole or some writes failed; deletes withheld' },
  {
    status: EXIT.rejected,
    meaning:
      "rejected: a feed was read but cannot be used (not the feed's file, a mapped column missing, no valid record, or fewer than minValidFraction of the last good run); nothing deleted",
  },
];

export function exitCodeFor(err: unknown): ExitStatus {
  if (err instanceof GuardError) return EXIT.guard;
  if (err instanceof ConfigError) return EXIT.usage;
  return EXIT.failed;
}

/** The exit status of a finished run by its report's outcome. `unavailable`, `aborted`, `failed` and anything unknown: 1. */
export function exitForOutcome(outcome: unknown): ExitStatus {
  if (outcome === 'ok') return EXIT.ok;
  if (outcome === 'guard') return EXIT.guard;
  if (outcome === 'partial') return EXIT.partial;
  if (outcome === 'rejected') return EXIT.rejected;
  return EXIT.failed;
}

/** The exit status of a command that ran several things: the most serious of theirs (0 for none). */
export function worstExit(statuses: Iterable<number>): ExitStatus {
  const known = new Set<number>(SEVERITY);
  const seen = new Set([...statuses].map((s) => (known.has(s) ? s : EXIT.failed)));
  return SEVERITY.find((s) => seen.has(s)) ?? EXIT.ok;
}

/** The exit-status table as `--help` prints it. */
export function exitHelp(): string {
  return [
    `Exit status (several feeds: the most serious wins, in the order ${SEVERITY.join(', ')}):`,
    ...EXIT_TABLE.map((e) => `  ${e.status}  ${e.meaning}`),
  ].join('\n');
}

/**
 * Print an error for a person on stderr: its message, code and whether a rerun can help. A stack
 * trace only for what is a defect of the code: an error of the operating system (a file, a disk, a
 * port) is said in words, with what to do.
 */
export function printError(err: unknown): void {
  process.stderr.write(redactSecrets(`feedsync: ${errorText(err)}\n`));
}

function errorText(err: unknown): string {
  if (err instanceof FeedsyncError) return `${err.message}${err.retryable ? ' (transient: a rerun may succeed)' : ''}`;
  const missing = missingModule(err);
  if (missing) return missing;
  const why = isSystemError(err) ? systemProblem(err) : undefined;
  if (isSystemError(err) && why)
    return `${systemSubject(err) ?? `a ${err.syscall ?? 'system'} call`} ${why.problem}. ${why.remedy}. (${err.message})`;
  return err instanceof Error ? (err.stack ?? err.message) : String(err);
}

/**
 * A module of the installation not found (a command's lazily loaded part, a dependency): the
 * installation is incomplete or changed while it ran (`npm ci` or `npm run build` meanwhile). One
 * line saying so, not a stack (bin/feedsync.js says the same of the entry).
 */
function missingModule(err: unknown): string | undefined {
  const code = err instanceof Error ? (err as { code?: unknown }).code : undefined;
  if (code !== 'ERR_MODULE_NOT_FOUND' && code !== 'MODULE_NOT_FOUND') return undefined;
  const what = (err as Error).message.split('\n')[0];
  return `a module of this installation is missing (${what}): it is incomplete or changed while it ran; in a clone \`npm ci\` reinstalls the dependencies and builds dist/, else reinstall the package`;
}

/**
 * --json prints exactly one JSON document on stdout, its values masked (never the serialized text).
 * `scope`: whose secrets (secrets.ts); '' the configured ones only, for a document whose parts were
 * masked by feed already. Default: every secret.
 */
export function printJson(value: unknown, scope?: string): void {
  process.stdout.write(JSON.stringify(maskDeep(value, scope), null, 2) + '\n');
}

/** An error as the one JSON document of a failed --json command: its message, code and whether a rerun can help. */
export function errorJson(err: unknown): Record<string, unknown> {
  if (err instanceof FeedsyncError) return err.toJSON();
  return { code: 'INTERNAL', message: err instanceof Error ? err.message : String(err), retryable: false };
}
