import type { KvStore } from './kv-store.js';

/** Keeps state in memory only: for tests and `--dry-run` previews that must not persist anything. */
export function createMemoryStore(location = 'memory'): KvStore {
  const spaces = new Map<string, Map<string, string>>();
  const space = (ns: string) => {
    let m = spaces.get(ns);
    if (!m) spaces.set(ns, (m = new Map()));
    return m;
  };
  return {
    location,
    getAll: async (ns) => new Map(space(ns)),
    get: async (ns, key) => space(ns).get(key),
    set: async (ns, entries) => {
      const m = space(ns);
      for (const [k, v] of entries) m.set(k, v);
    },
    delete: async (ns, keys) => {
      const m = space(ns);
      for (const k of keys) m.delete(k);
    },
    close: async () => {},
  };
}
