// The former state file (`state.json` beside the store's `state.lmdb`: one JSON document, state-json.ts)
// imported once, when the store is opened: its namespaces written in one transaction with the
// store's schema version and the file's identity, then the file renamed `state.json.migrated`. A
// process killed between the two finds the identity recorded and only renames. A state.json that
// turns up beside a store already in use is refused rather than merged: which one holds the truth is
// for a person to say (`feedsync state import`).
import { readFile, rename, stat } from 'node:fs/promises';
import { EnvironmentError } from '../errors.js';
import { isSystemError, systemProblem } from '../system-error.js';
import { parseStateJson, placeIn, type StateDocument, type TextPlace } from './state-json.js';
import { feedsyncCommand } from '../format/invocation.js';

/** What a run without the state's contents does: nothing is lost on the chatbot, some work is done again. */
export const FRESH_STATE_COST =
  'the next run compares every listing by the fields the list returns and rewrites nothing that matches, ' +
  'maps every record once more, pulls incremental RESO feeds in full once, starts grace periods anew and pushes settings again';

/** meta key: size and modification time of the state.json imported */
const IMPORTED_KEY = 'imported';

/** The former state file of a store at `path` (`x.lmdb` → `x.json`); none for a store named otherwise. */
export function legacyStateFile(path: string): string | undefined {
  return path.endsWith('.lmdb') ? path.slice(0, -'.lmdb'.length) + '.json' : undefined;
}

/** The store being opened: its path and its meta keys. */
interface OpeningStore {
  path: string;
  meta: { get(key: string): string | undefined };
}

export async function importLegacyState(
  file: OpeningStore,
  write: (state: StateDocument, extra: { meta: Record<string, string> }) => void,
): Promise<void> {
  const legacy = legacyStateFile(file.path);
  if (legacy === undefined) return;
  const identity = await identityOf(legacy);
  if (identity === undefined) return;
  if (file.meta.get(IMPORTED_KEY) !== identity) {
    if (file.meta.get('schema') !== undefined) {
      throw new EnvironmentError(
        `The state file ${legacy}`,
        `(the former format) lies beside the state store ${file.path}, which is in use`,
        `Import it if it holds the state to keep (${feedsyncCommand()} state import ${legacy}; it replaces the store's), or move it aside (mv ${legacy} ${legacy}.old)`,
      );
    }
    const remedy = `Restore it from a backup, or move it aside (mv ${legacy} ${legacy}.bad) and run again. Moving it aside costs no listing: ${FRESH_STATE_COST}`;
    const refuse = (problem: string, cause?: unknown, at?: TextPlace) =>
      new EnvironmentError(`The state file ${placeIn(legacy, at)}`, problem, remedy, { cause });
    write(parseStateJson(await readLegacy(legacy), refuse), {
      meta: { [IMPORTED_KEY]: identity },
    });
  }
  await rename(legacy, `${legacy}.migrated`);
}

async function identityOf(path: string): Promise<string | undefined> {
  try {
    const s = await stat(path);
    return `${s.size}:${s.mtimeMs}`;
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'ENOENT') return undefined;
    throw unreadable(path, err);
  }
}

async function readLegacy(path: string): Promise<string> {
  try {
    return await readFile(path, 'utf8');
  } catch (err) {
    throw unreadable(path, err);
  }
}

function unreadable(path: string, err: unknown): EnvironmentError {
  const why = isSystemError(err) ? systemProblem(err) : undefined;
  return new EnvironmentError(
    `The state file ${path}`,
    `cannot be read to import it: it ${why?.problem ?? (err as Error).message}`,
    `${why?.remedy ?? 'Make it readable'}, or move it aside`,
    {
      cause: err,
    },
  );
}
