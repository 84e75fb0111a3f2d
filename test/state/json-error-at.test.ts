// Where a document stops being JSON (src/state/json-error-at.ts), for `state import`'s message: the
// same verdict as JSON.parse on any text, and the same offset wherever JSON.parse's words name one.
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { jsonErrorAt, lineColumn } from '../../src/state/json-error-at.js';

/** JSON.parse's verdict: undefined (JSON), or the offset its words name (NaN when they name none). */
function parsed(text: string): number | undefined {
  try {
    JSON.parse(text);
    return undefined;
  } catch (err) {
    const at = /at position (\d+)/.exec((err as Error).message)?.[1];
    return at === undefined ? Number.NaN : Number(at);
  }
}

/** JSON documents, and the same with a character cut, added or changed somewhere. */
const texts = fc.oneof(
  fc.json(),
  fc
    .tuple(fc.json(), fc.nat(), fc.constantFrom('', ',', '}', ']', '"', ':', 'x', '\\', '\n', '0', '-', '\u0001'))
    .map(([json, n, c]) => {
      const at = n % (json.length + 1);
      return json.slice(0, at) + c + json.slice(at + (n % 2));
    }),
);

describe('jsonErrorAt', () => {
  it('agrees with JSON.parse: none for JSON, its offset where it names one', () => {
    fc.assert(
      fc.property(texts, (text) => {
        const theirs = parsed(text);
        const ours = jsonErrorAt(text);
        if (theirs === undefined) expect(ours).toBeUndefined();
        else {
          expect(ours).toBeDefined();
          if (!Number.isNaN(theirs)) expect(ours).toBe(theirs);
        }
      }),
      { numRuns: 3000 },
    );
  });

  it('names the faults JSON.parse gives no place for: a bad token, the end', () => {
    expect(jsonErrorAt('{\n  "a": x\n}')).toBe(9);
    expect(lineColumn('{\n  "a": x\n}', 9)).toEqual({ line: 2, column: 8 });
    expect(jsonErrorAt('{"a": "b"')).toBe(9);
    expect(jsonErrorAt('')).toBe(0);
    expect(jsonErrorAt('[1, 2')).toBe(5);
  });

  it('reads a deeply nested document without exhausting the stack', () => {
    expect(jsonErrorAt('['.repeat(200_000) + ']'.repeat(200_000))).toBeUndefined();
    expect(jsonErrorAt('['.repeat(200_000))).toBe(200_000);
  });
});
