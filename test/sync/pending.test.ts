// The pending window (pending.ts) against the rule it implements, written plainly with a Map as its
// queue (as it was before the list with a moving head): for any sequence of keys, the same records
// leave in the same order, the same are held, drained and called recurring (a key's later record that
// is no listing withdraws what waits of it).
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { createPendingWindow, type PendingWindow } from '../../src/sync/plan/pending.js';

interface E {
  key: string;
  n: number;
}

function reference(opts: { size: number; maxHeld: number; knownRecurring: ReadonlySet<string> }): PendingWindow<E> {
  const window = new Map<string, E>();
  const late = new Map<string, E>();
  const left = new Set<string>();
  const recurring = new Set<string>();
  return {
    recurring,
    planned: (key) => left.has(key),
    push(entry) {
      const { key } = entry;
      if (window.delete(key) || late.has(key) || left.has(key)) recurring.add(key);
      if (late.has(key) || ((left.has(key) || opts.knownRecurring.has(key)) && late.size < opts.maxHeld)) {
        late.set(key, entry);
        return undefined;
      }
      window.set(key, entry);
      if (window.size <= opts.size) return undefined;
      const [key0, oldest] = window.entries().next().value!;
      window.delete(key0);
      left.add(key0);
      return oldest;
    },
    withdraw(key) {
      const waited = window.delete(key);
      if (late.delete(key) || waited || left.has(key)) recurring.add(key);
    },
    drain() {
      const out = [...window.values()];
      window.clear();
      return out;
    },
    held() {
      const out = [...late.values()];
      late.clear();
      return out;
    },
  };
}

describe('pending window', () => {
  it('plans, holds and drains as the plain rule does', () => {
    fc.assert(
      fc.property(
        // a negative number: a record of that key that is no listing (withdraw)
        fc.array(fc.integer({ min: -40, max: 40 }), { maxLength: 3000 }),
        fc.integer({ min: 1, max: 12 }),
        fc.integer({ min: 0, max: 6 }),
        fc.uniqueArray(fc.integer({ min: 0, max: 40 }), { maxLength: 5 }),
        (keys, size, maxHeld, known) => {
          const opts = { size, maxHeld, knownRecurring: new Set(known.map(String)) };
          const ours = createPendingWindow<E>(opts);
          const rule = reference(opts);
          keys.forEach((k, n) => {
            if (k < 0) {
              ours.withdraw(String(-k));
              rule.withdraw(String(-k));
              return;
            }
            const entry = { key: String(k), n };
            expect(ours.push(entry)).toEqual(rule.push(entry));
          });
          expect(ours.drain()).toEqual(rule.drain());
          for (let k = 0; k <= 40; k++) expect(ours.planned(String(k))).toBe(rule.planned(String(k)));
          expect(ours.held()).toEqual(rule.held());
          expect([...ours.recurring].sort()).toEqual([...rule.recurring].sort());
        },
      ),
      { numRuns: 500 },
    );
  });

  it('lets a million distinct keys through a window of 1000 in order', () => {
    const w = createPendingWindow<E>({ size: 1000, maxHeld: 10, knownRecurring: new Set() });
    let out = 0;
    for (let n = 0; n < 1_000_000; n++) if (w.push({ key: `K${n}`, n })?.n === out) out++;
    expect(out).toBe(999_000);
    expect(w.drain().map((e) => e.n)).toEqual(Array.from({ length: 1000 }, (_, i) => 999_000 + i));
  });
});
