// Where the state of runs without Redis lives on disk, from the config's place (for runtime.ts,
// which opens it, and the commands and the change log reader, which name it).
import { dirname, join, resolve } from 'node:path';

/** Of a loaded config (config/schema.ts LoadedConfig): its folder and its `state` section. */
export interface ConfigPlace {
  dir: string;
  config: { state?: { file?: string } };
}

/** Folder beside the config where the embedded emulator and the state file keep their data. */
export function stateDir(loaded: ConfigPlace): string {
  return join(loaded.dir, '.feedsync');
}

/**
 * The state store of runs without Redis (file-store.ts): `state.file`, else .feedsync/state.lmdb
 * beside the config. A `state.file` ending in `.json` (the former format's file) names the store
 * beside it ending in `.lmdb`, into which that file is imported once.
 */
export function stateFile(loaded: ConfigPlace): string {
  const file = loaded.config.state?.file;
  if (!file) return join(stateDir(loaded), 'state.lmdb');
  const path = resolve(loaded.dir, file);
  return path.endsWith('.json') ? `${path.slice(0, -'.json'.length)}.lmdb` : path;
}

/** The change log file of runs without Redis: beside the state file. */
export function changeLogFile(stateFilePath: string): string {
  return join(dirname(stateFilePath), 'changes.jsonl');
}
