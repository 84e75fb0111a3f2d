// The state at rest is the owner's alone: the folders feedsync keeps it in (the state file's, the
// page echo's, the change log's) are 0700, the files in them 0600 — the state file and its lock
// file, the change log (`changes.jsonl`, whose run records `runs` reads), the page echo files. A
// folder or file found more open is narrowed when it is opened. A state file or change log that is
// a symbolic link is refused, not followed: a link planted in the folder would make feedsync write
// its state, or read a damaged one, somewhere else.
import { chmodSync, lstatSync, mkdirSync, readlinkSync, type Stats } from 'node:fs';
import { EnvironmentError } from '../errors.js';
import { isSystemError, systemProblem } from '../system-error.js';

export const PRIVATE_DIR_MODE = 0o700;
export const PRIVATE_FILE_MODE = 0o600;

/** `dir` made (with its parents) or narrowed to 0700; an error a person can act on when it cannot be. */
export function privateDir(dir: string, what: string): void {
  try {
    mkdirSync(dir, { recursive: true, mode: PRIVATE_DIR_MODE });
    narrow(dir, lstatSync(dir), PRIVATE_DIR_MODE);
  } catch (err) {
    throw unreachable(`${what} ${dir}`, err);
  }
}

/**
 * The file at `path` (`what` names it: "The state file") refused when it is a symbolic link and
 * narrowed to 0600 when it exists; nothing when it does not (it is made 0600 where it is written).
 */
export function privateFile(path: string, what: string): void {
  let stats: Stats;
  try {
    stats = lstatSync(path);
  } catch (err) {
    if (isSystemError(err) && err.code === 'ENOENT') return;
    throw unreachable(`${what} ${path}`, err);
  }
  if (stats.isSymbolicLink()) throw symlinked(path, what);
  try {
    narrow(path, stats, PRIVATE_FILE_MODE);
  } catch (err) {
    throw unreachable(`${what} ${path}`, err);
  }
}

/** The refusal of a symbolic link in the place of `what` at `path`. */
export function symlinked(path: string, what: string): EnvironmentError {
  let target = 'elsewhere';
  try {
    target = readlinkSync(path);
  } catch {
    // (gone since: the message says where it is, not where it pointed)
  }
  return new EnvironmentError(
    `${what} ${path}`,
    `is a symbolic link (to ${target}): feedsync does not follow one, so that a link put in the state folder cannot make it write or read its state elsewhere`,
    `Put the file itself in its place (mv ${target} ${path}), or point state.file at the real place`,
  );
}

function narrow(path: string, stats: Stats, mode: number): void {
  // (only ever narrowed: a file that is already private keeps its mode, a read-only one stays so)
  if ((stats.mode & 0o777 & ~mode) !== 0) chmodSync(path, stats.mode & mode & 0o777);
}

function unreachable(subject: string, err: unknown): unknown {
  if (err instanceof EnvironmentError) return err;
  const why = isSystemError(err) ? systemProblem(err) : undefined;
  return new EnvironmentError(
    subject,
    `cannot be made private to its owner: it ${why?.problem ?? (err as Error).message}`,
    why?.remedy ?? 'Fix its ownership or permissions',
    {
      cause: err,
    },
  );
}
