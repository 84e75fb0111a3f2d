import { mkdir, readFile, rename, writeFile } from 'node:fs/promises';
import { dirname } from 'node:path';
import type { KvStore } from './kv-store.js';

type StateFile = Record<string, Record<string, string>>;

/**
 * State in one JSON file beside the config, for runs without Redis. Writes go to a temporary file
 * that is renamed over the old one, so a crash mid-write never leaves half a state file.
 */
export async function createFileStore(path: string): Promise<KvStore> {
  const data = await load(path);
  let pending: Promise<void> = Promise.resolve();
  const save = () => {
    // Serialize writes: two renames racing could put an older snapshot last.
    pending = pending.then(async () => {
      await mkdir(dirname(path), { recursive: true });
      const tmp = `${path}.${process.pid}.tmp`;
      await writeFile(tmp, JSON.stringify(data));
      await rename(tmp, path);
    });
    return pending;
  };
  const space = (ns: string) => (data[ns] ??= {});
  return {
    location: path,
    getAll: async (ns) => new Map(Object.entries(space(ns))),
    get: async (ns, key) => space(ns)[key],
    set: async (ns, entries) => {
      const m = space(ns);
      for (const [k, v] of entries) m[k] = v;
      await save();
    },
    delete: async (ns, keys) => {
      const m = space(ns);
      for (const k of keys) delete m[k];
      await save();
    },
    close: () => pending,
  };
}

async function load(path: string): Promise<StateFile> {
  try {
    return JSON.parse(await readFile(path, 'utf8')) as StateFile;
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'ENOENT') return {};
    throw new Error(`state file ${path} cannot be read: ${(err as Error).message}`, { cause: err });
  }
}
