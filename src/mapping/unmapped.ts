// Lookup values no `map` of a feed's mapping covers (a new status, a new property type), counted for
// the report and the `unmapped values` alert. Bounded: at most MAX distinct values are kept.
import type { UnmappedValue } from './compile.js';

const MAX = 50;

export function createUnmappedTally() {
  const seen = new Map<string, { field: string; value: string; count: number }>();
  return {
    add: (u: UnmappedValue) => {
      const k = `${u.field}\u0000${u.value}`;
      const hit = seen.get(k);
      if (hit) hit.count++;
      else if (seen.size < MAX) seen.set(k, { field: u.field, value: u.value, count: 1 });
    },
    list: () => [...seen.values()].sort((a, b) => b.count - a.count),
  };
}
