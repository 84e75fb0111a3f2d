// Exit status (DESIGN.md): 0 done; 1 the run finished with failed items; 2 bad usage or config;
// 3 a safety guard stopped it.
import { ConfigError, FeedsyncError, GuardError } from '../errors.js';
import { redactSecrets } from '../log.js';
import { maskDeep } from '../secrets.js';

export const EXIT = { ok: 0, failed: 1, usage: 2, guard: 3 } as const;

export function exitCodeFor(err: unknown): number {
  if (err instanceof GuardError) return EXIT.guard;
  if (err instanceof ConfigError) return EXIT.usage;
  return EXIT.failed;
}

/** The exit status of a finished run by its report's outcome: 3 a guard held deletes back, 1 anything else not ok. */
export function exitForOutcome(outcome: unknown): number {
  if (outcome === 'ok') return EXIT.ok;
  if (outcome === 'guard') return EXIT.guard;
  return EXIT.failed;
}

/** Print an error for a person on stderr: its message, code and whether a rerun can help. */
export function printError(err: unknown): void {
  if (err instanceof FeedsyncError) {
    const hint = err.retryable ? ' (transient: a rerun may succeed)' : '';
    process.stderr.write(redactSecrets(`feedsync: ${err.message}${hint}\n`));
  } else {
    const e = err as Error;
    process.stderr.write(redactSecrets(`feedsync: ${e?.stack ?? String(err)}\n`));
  }
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
