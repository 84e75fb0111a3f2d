// A write merges a changed namespace's bytes with the changes instead of parsing it: the result
// must read back (JSON.parse) exactly as the plain rule's (parse, copy, apply sets then deletes),
// each key once, and a write that changes nothing must leave the bytes as they were.
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { walkMembers } from '../../src/state/json-namespaces.js';
import type { StateChange } from '../../src/state/kv-store.js';
import { StateBytes } from '../../src/state/state-bytes.js';

type Space = Record<string, string>;

/** The plain rule, as the file store applied changes before: each namespace parsed, copied, changed. */
function plain(state: Record<string, Space>, changes: readonly StateChange[]): Record<string, Space> {
  const out: Record<string, Space> = Object.create(null);
  for (const [ns, space] of Object.entries(state)) out[ns] = Object.assign(Object.create(null), space);
  for (const c of changes) {
    const space = (out[c.ns] ??= Object.create(null));
    for (const [k, v] of c.set ?? []) space[k] = v;
    for (const k of c.delete ?? []) delete space[k];
  }
  return out;
}

const sorted = (space: Space | undefined) => Object.entries(space ?? {}).sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0));

/** Few keys, so that members repeat and changes hit them; "__proto__", escapes, non-ASCII among them. */
const key = fc.oneof(fc.constantFrom('__proto__', 'constructor', 'a', 'b', 'ü', '😀', 'a"b', 'a\\b', '1', '10', '', '\u2028', '\ud800'), fc.string({ maxLength: 3 }));
const value = fc.oneof(fc.constantFrom('v', 'w', '', 'ü', '{"AreaUnit":"Square Feet"}'), fc.string({ unit: 'binary', maxLength: 4 }));

/** A string's JSON: JSON.stringify's, or every character as a \u escape. */
const stringJson = (s: string, escaped: boolean) =>
  escaped ? '"' + [...s].map((ch) => [...ch].map((u) => '\\u' + u.charCodeAt(0).toString(16).padStart(4, '0')).join('')).join('') + '"' : JSON.stringify(s);

const space = fc.constantFrom('', ' ', '\n\t', '\r\n ');

/** A namespace's bytes as a hand or another writer may have left them: odd spacing, escapes, a key given twice. */
const namespaceJson = fc
  .array(fc.tuple(key, value, fc.boolean(), space), { maxLength: 8 })
  .map((members) => '{' + members.map(([k, v, escaped, s]) => s + stringJson(k, escaped) + s + ':' + s + stringJson(v, !escaped) + s).join(',') + '}');

const ns = fc.constantFrom('fp:a', 'unlisted:a', 'new:a');
const change: fc.Arbitrary<StateChange> = fc.record(
  { ns, set: fc.array(fc.tuple(key, value), { maxLength: 6 }), delete: fc.array(key, { maxLength: 4 }) },
  { requiredKeys: ['ns'] },
);

const document = fc.tuple(namespaceJson, namespaceJson, space).map(([fp, unlisted, s]) => `${s}{${s}"fp:a"${s}:${s}${fp},"alerts":{"x":"1"},${s}"unlisted:a":${unlisted}${s}}${s}`);

function stateOf(text: string): StateBytes {
  const state = StateBytes.read(Buffer.from(text));
  if (!(state instanceof StateBytes)) throw new Error(`${state.problem} at ${state.offset}: ${text}`);
  return state;
}

function bytesOf(state: StateBytes, ns: string): string | undefined {
  const range = state.ranges.get(ns);
  return range && state.bytes.toString('utf8', range.start, range.end);
}

/** Each namespace's keys as written in the bytes, duplicates included. */
function writtenKeys(state: StateBytes, ns: string): string[] {
  const keys: string[] = [];
  const range = state.ranges.get(ns);
  if (range) walkMembers(state.bytes.subarray(range.start, range.end), (_, k) => keys.push(k));
  return keys;
}

describe('StateBytes.changed: a changed namespace merged from its bytes', () => {
  it('reads back as the plain rule has it, each key once; a write that changes nothing leaves the bytes', () => {
    fc.assert(
      fc.property(document, fc.array(change, { maxLength: 5 }), fc.subarray(['fp:a', 'unlisted:a']), (text, changes, read) => {
        const before = stateOf(text);
        // some namespaces read (indexed) before the write (a run reads fp: and stamp: whole), others not
        expect(read.map((n) => before.entries(n)?.size ?? 0).every((size) => size >= 0)).toBe(true);
        const old = JSON.parse(text) as Record<string, Space>;
        const expected = plain(old, changes);
        const after = before.changed(changes);
        const got = JSON.parse(after.bytes.toString('utf8')) as Record<string, Space>;
        expect(Object.keys(got).sort()).toEqual(Object.keys(expected).sort());
        for (const n of Object.keys(expected)) {
          expect(sorted(got[n]), n).toEqual(sorted(expected[n]));
          const unchanged = n in old && JSON.stringify(sorted(old[n])) === JSON.stringify(sorted(expected[n]));
          if (unchanged) expect(bytesOf(after, n), n).toEqual(bytesOf(before, n));
          else expect(new Set(writtenKeys(after, n)).size, n).toBe(writtenKeys(after, n).length);
          // what the new state answers, parsed or not, is what its bytes say
          for (const [k, v] of sorted(expected[n])) expect(after.value(n, k)).toBe(v);
          // read whole: each key once, with its last value
          const whole = [...(after.entries(n) ?? [])];
          expect(whole.length).toBe(new Set(whole.map(([k]) => k)).size);
          expect(sorted(Object.fromEntries(whole))).toEqual(sorted(expected[n]));
        }
        const same = Object.keys(expected).every((n) => n in old && JSON.stringify(sorted(old[n])) === JSON.stringify(sorted(expected[n])));
        if (same) expect(after).toBe(before);
      }),
      { numRuns: 2000 },
    );
  });

  it('answers a key, and the whole namespace, from its bytes as JSON.parse would (the last of a key given twice)', () => {
    fc.assert(
      fc.property(document, fc.array(key, { maxLength: 10 }), (text, keys) => {
        const state = stateOf(text);
        const old = JSON.parse(text) as Record<string, Space>;
        for (const n of ['fp:a', 'unlisted:a', 'none']) {
          for (const k of keys) expect(state.value(n, k)).toBe(old[n] && Object.hasOwn(old[n], k) ? old[n][k] : undefined);
          // and read whole (getAll): JSON.parse's entries, each key once
          const whole = [...(state.entries(n) ?? [])];
          expect(whole.length).toBe(Object.keys(old[n] ?? {}).length);
          expect(sorted(Object.fromEntries(whole))).toEqual(sorted(old[n]));
        }
      }),
      { numRuns: 1000 },
    );
  });

  it('writes a new namespace named as {} or its entries, and leaves one named with nothing to change unread', () => {
    const text = '{"fp:a":{"K1":"f1"},"unlisted:a":{"K1":"u1"}}';
    const state = stateOf(text);
    const after = state.changed([
      { ns: 'new:a' },
      { ns: 'new:b', set: [['K', 'v']], delete: ['K'] },
      { ns: 'new:c', set: [['K', 'v']] },
      { ns: 'unlisted:a', set: [['K1', 'u1']] },
    ]);
    expect(after.bytes.toString('utf8')).toBe('{"fp:a":{"K1":"f1"},"unlisted:a":{"K1":"u1"},"new:a":{},"new:b":{},"new:c":{"K":"v"}}');
    expect(state.changed([{ ns: 'fp:a', set: [['K1', 'f1']], delete: ['K2'] }, { ns: 'unlisted:a' }])).toBe(state);
  });
});
