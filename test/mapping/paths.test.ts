// The fast getter of a nested path (`Location.City` as code of its own) agrees with the reference
// walk it speeds up (`fastPath: false`), on generated records: exact and prefixed names
// (`commons:City`), lists, `#text` objects, dotted CSV headers, names the prototype has, an index (`0`), and names
// that are awkward in generated code.
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { compilePath } from '../../src/mapping/paths.js';

const NAMES = [
  'a',
  'b',
  '0',
  'City',
  'commons:City',
  'x:a',
  'a.b',
  '#text',
  '@_id',
  'constructor',
  'toString',
  '__proto__',
  '"',
  '\\',
  '\u2028',
  '',
];

/** records whose names are mostly the path's own, so that walks go deep */
function recordFor(segments: string[]): fc.Arbitrary<Record<string, unknown>> {
  const name = fc.oneof(
    { weight: 3, arbitrary: fc.constantFrom(...segments) },
    { weight: 1, arbitrary: fc.constantFrom(...NAMES) },
  );
  return fc.letrec((tie) => ({
    value: fc.oneof(
      { weight: 4, arbitrary: fc.constantFrom('text', ' padded ', '', '0') },
      { weight: 1, arbitrary: fc.constantFrom(undefined, null, 7) },
      { weight: 3, arbitrary: tie('object') },
      { weight: 2, arbitrary: fc.array(tie('value'), { maxLength: 3 }) },
    ),
    // own properties whatever the name (`__proto__` included), as a reader builds them
    object: fc
      .array(fc.tuple(name, tie('value')), { maxLength: 5, depthIdentifier: 'record' })
      .map((entries) => Object.fromEntries(entries) as Record<string, unknown>),
  })).object;
}

const pathAndRecord = fc
  .array(fc.constantFrom(...NAMES), { minLength: 2, maxLength: 4 })
  .chain((segments) => fc.tuple(fc.constant(segments.join('.')), recordFor(segments)));

describe('compilePath', () => {
  it("a nested path's fast getter gives what the reference walk gives", () => {
    fc.assert(
      fc.property(pathAndRecord, ([p, r]) => {
        expect(compilePath(p)(r)).toEqual(compilePath(p, { fastPath: false })(r));
      }),
      { numRuns: 5000 },
    );
  });

  it('reads the usual record the fast way and the odd ones by the walk', () => {
    const city = compilePath('Location.City');
    expect(city({ Location: { City: 'Austin' } })).toBe('Austin');
    expect(city({ Location: { 'commons:City': 'Austin' } })).toBe('Austin');
    expect(city({ Location: { City: { '@_lang': 'en', '#text': 'Austin' } } })).toBe('Austin');
    expect(city({ Location: [{ City: 'Austin' }, { City: 'Round Rock' }] })).toEqual(['Austin', 'Round Rock']);
    expect(city({ 'Location.City': 'Dotted', Location: { City: 'Austin' } })).toBe('Dotted');
    expect(city({ Location: 'nowhere' })).toBeUndefined();
  });
});
