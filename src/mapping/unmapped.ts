// Lookup values no `map` of a feed's mapping covers (a new status, a new property type), counted for
// the report and the `unmapped values` alert. Bounded: at most MAX distinct values are kept, each
// as an excerpt (a 200 KB value is kept as its first 80 characters and its length).
import { EXCERPT_CHARS } from '../errors.js';
import type { UnmappedValue } from './compile.js';

const MAX = 50;

export function createUnmappedTally() {
  const seen = new Map<string, { field: string; value: string; count: number }>();
  return {
    add: (u: UnmappedValue) => {
      const value = clip(u.value);
      const k = `${u.field}\u0000${value}`;
      const hit = seen.get(k);
      if (hit) hit.count++;
      else if (seen.size < MAX) seen.set(k, { field: clip(u.field), value, count: 1 });
    },
    list: () => [...seen.values()].sort((a, b) => b.count - a.count),
  };
}

function clip(text: string): string {
  return text.length > EXCERPT_CHARS ? `${text.slice(0, EXCERPT_CHARS)}… (${text.length} chars)` : text;
}
