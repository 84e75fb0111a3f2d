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

/** The state file of runs without Redis: `state.file`, else .feedsync/state.json beside the config. */
export function stateFile(loaded: ConfigPlace): string {
  return loaded.config.state?.file ? resolve(loaded.dir, loaded.config.state.file) : join(stateDir(loaded), 'state.json');
}

/** The change log file of runs without Redis: beside the state file. */
export function changeLogFile(stateFilePath: string): string {
  return join(dirname(stateFilePath), 'changes.jsonl');
}
