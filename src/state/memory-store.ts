import { refuseLongKey, refuseLongKeys, type KvStore, type StateChange } from './kv-store.js';

/** Keeps state in memory only: for tests and `--dry-run` previews that must not persist anything. */
export function createMemoryStore(location = 'memory'): KvStore {
  const spaces = new Map<string, Map<string, string>>();
  const space = (ns: string) => {
    let m = spaces.get(ns);
    if (!m) spaces.set(ns, (m = new Map()));
    return m;
  };
  const apply = async (changes: readonly StateChange[]) => {
    // materialize first: an iterable that throws leaves nothing half applied
    const ready = changes.map((c) => ({
      m: space(c.ns),
      set: [...refuseLongKeys(c.ns, c.set ?? [])],
      del: [...(c.delete ?? [])],
    }));
    for (const { m, set, del } of ready) {
      for (const [k, v] of set) m.set(k, v);
      for (const k of del) m.delete(k);
    }
  };
  return {
    location,
    getAll: async (ns) => new Map(space(ns)),
    get: async (ns, key) => space(ns).get(key),
    set: (ns, entries) => apply([{ ns, set: entries }]),
    delete: (ns, keys) => apply([{ ns, delete: keys }]),
    apply,
    applyInBackground: apply,
    swap: async (ns, key, expected, next) => {
      const m = space(ns);
      refuseLongKey(ns, key);
      if (m.get(key) !== expected) return false;
      m.set(key, next);
      return true;
    },
    close: async () => {},
  };
}
