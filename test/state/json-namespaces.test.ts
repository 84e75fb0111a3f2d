// The state file's scanner judges a document as JSON.parse(bytes.toString('utf8')) does, and finds
// each top-level member's value where JSON.parse would take it from.
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { scanMembers } from '../../src/state/json-namespaces.js';

/** JSON.parse's verdict on the bytes: the value, or undefined when they are not JSON. */
function parsed(bytes: Buffer): { value: unknown } | undefined {
  try {
    return { value: JSON.parse(bytes.toString('utf8')) };
  } catch {
    return undefined;
  }
}

const isObject = (v: unknown): v is Record<string, unknown> => v !== null && typeof v === 'object' && !Array.isArray(v);

/**
 * The scan agrees with JSON.parse: valid exactly when it parses to an object, each member's range
 * parsing to its value; a member said to be strings only is an object of strings (the converse
 * fails only where a key is given twice, a later string replacing an earlier other value).
 */
function expectAgreement(bytes: Buffer): void {
  const scan = scanMembers(bytes);
  const expected = parsed(bytes);
  const object = expected !== undefined && isObject(expected.value) ? expected.value : undefined;
  expect(scan.ok, `${bytes.toString('utf8')} ${scan.ok ? '' : `${scan.problem} at ${scan.offset}`}`).toBe(object !== undefined);
  if (!scan.ok || object === undefined) return;
  expect(new Set(scan.members.keys())).toEqual(new Set(Object.keys(object)));
  for (const [key, range] of scan.members) {
    const value = object[key];
    expect(JSON.parse(bytes.toString('utf8', range.start, range.end))).toEqual(value);
    if (range.stringsOnly) expect(isObject(value) && Object.values(value).every((v) => typeof v === 'string')).toBe(true);
  }
}

/** Whitespace JSON allows, in odd amounts, and sometimes none. */
const space = fc.stringMatching(/^[ \t\n\r]{0,3}$/);

/** A string's JSON: JSON.stringify's, or with some characters written as \u escapes (either case of hex). */
const stringJson = fc.tuple(fc.string({ unit: 'binary' }), fc.boolean(), fc.boolean()).map(([s, escape, upper]) => {
  const json = JSON.stringify(s);
  if (!escape) return json;
  const hex = (code: number) => code.toString(16).padStart(4, '0')[upper ? 'toUpperCase' : 'toLowerCase']();
  return '"' + [...s].map((ch) => (ch.length === 1 && ch.charCodeAt(0) % 3 === 0 ? '\\u' + hex(ch.charCodeAt(0)) : JSON.stringify(ch).slice(1, -1))).join('') + '"';
});

/** Keys the state file meets and ones meant to trip a scanner: "__proto__", escapes, non-ASCII, repeats. */
const key = fc.oneof(
  fc.constantFrom('__proto__', 'constructor', 'fp:a', 'stamp:a', 'alerts', '', 'ü', '😀', 'a"b', 'a\\b', '1', '10'),
  fc.string({ unit: 'binary', maxLength: 8 }),
);

/** Any JSON value written with odd whitespace (objects, arrays, numbers in their forms, literals, strings with escapes). */
const { value: valueJson } = fc.letrec<{ value: string }>((tie) => ({
  value: fc.oneof(
    { depthSize: 'small' },
    stringJson,
    fc.jsonValue({ maxDepth: 0 }).map((v) => JSON.stringify(v)),
    fc.constantFrom('0', '-0', '1e5', '1E+2', '-3.25e-7', '0.5', 'true', 'false', 'null'),
    fc.array(fc.tuple(space, tie('value'), space), { maxLength: 4 }).map((items) => '[' + (items.map(([a, v, b]) => a + v + b).join(',') || ' ') + ']'),
    fc
      .array(fc.tuple(space, key, space, tie('value')), { maxLength: 4 })
      .map((members) => '{' + members.map(([a, k, b, v]) => a + JSON.stringify(k) + b + ':' + v).join(',') + '}'),
  ),
}));

/** A namespace as the state file holds it: an object of strings. */
const namespaceJson = fc
  .array(fc.tuple(key, stringJson, space), { maxLength: 5 })
  .map((members) => '{' + members.map(([k, v, s]) => JSON.stringify(k) + s + ':' + s + v).join(',') + '}');

/** A document whose top level is an object, of namespaces and of any values, keys given more than once now and then. */
const document = fc
  .tuple(space, fc.array(fc.tuple(key, space, fc.oneof(namespaceJson, valueJson), space), { maxLength: 6 }), space)
  .map(([before, members, after]) => before + '{' + members.map(([k, a, v, b]) => a + JSON.stringify(k) + a + ':' + b + v + b).join(',') + '}' + after);

describe('scanMembers: as JSON.parse judges and reads', () => {
  it('agrees on generated documents: validity, each member and its value', () => {
    fc.assert(
      fc.property(document, (text) => expectAgreement(Buffer.from(text))),
      { numRuns: 2000 },
    );
  });

  it('finds a namespace as the state file holds it (an object of strings) to be strings only', () => {
    const namespaces = fc.array(fc.tuple(key, space, namespaceJson), { maxLength: 4 });
    fc.assert(
      fc.property(namespaces, (members) => {
        const scan = scanMembers(Buffer.from('{' + members.map(([k, s, v]) => JSON.stringify(k) + s + ':' + s + v).join(',') + '}'));
        expect(scan.ok && [...scan.members.values()].every((r) => r.stringsOnly)).toBe(true);
      }),
    );
  });

  it('agrees on any JSON value as the whole document (an object or not)', () => {
    fc.assert(fc.property(fc.jsonValue(), valueJson, (v, text) => (expectAgreement(Buffer.from(JSON.stringify(v))), expectAgreement(Buffer.from(text)))));
  });

  it('agrees on validity of broken documents: truncated, a byte inserted, replaced or removed', () => {
    const edit = fc.tuple(fc.constantFrom('cut', 'insert', 'replace', 'remove'), fc.nat(), fc.integer({ min: 0, max: 255 }));
    fc.assert(
      fc.property(document, edit, (text, [how, where, byte]) => {
        const b = Buffer.from(text);
        const i = where % (b.length + 1);
        const one = Buffer.from([byte]);
        const edited = {
          cut: () => b.subarray(0, i),
          insert: () => Buffer.concat([b.subarray(0, i), one, b.subarray(i)]),
          replace: () => Buffer.concat([b.subarray(0, i), one, b.subarray(i + 1)]),
          remove: () => Buffer.concat([b.subarray(0, i), b.subarray(i + 1)]),
        }[how]();
        expectAgreement(edited);
      }),
      { numRuns: 5000 },
    );
  });

  it('agrees on hand-picked edge cases', () => {
    const cases = [
      '',
      ' ',
      '{}',
      ' {} ',
      '\ufeff{}', // a BOM is not whitespace to JSON.parse
      '{}x',
      '{} {}',
      '[]',
      '"a"',
      '{"a":1,}',
      '{"a" 1}',
      '{,}',
      '{"a":01}',
      '{"a":1.}',
      '{"a":.5}',
      '{"a":-}',
      '{"a":1e}',
      '{"a":+1}',
      '{"a":tru}',
      '{"a":nul}',
      '{"a":"\\x"}',
      '{"a":"\\u12G4"}',
      '{"a":"\\u00e9"}',
      '{"a":"tab\there"}',
      '{"a\\u0000b":"c"}',
      '{"\\ud800":"lone surrogate"}',
      '{"a":{"b":[1,{"c":[[]]}]}}',
      '{"a":[1,]}',
      '{"a":[,1]}',
      '{"a":"x","a":{"b":"y"}}',
      '{"__proto__":{"x":"y"}}',
      '{\u00a0"a":"b"}', // a no-break space is not JSON whitespace
      '{"a":"b"\f}',
      '['.repeat(1_000) + ']'.repeat(1_000),
      '{"a":' + '['.repeat(1_000) + ']'.repeat(1_000) + '}',
    ];
    for (const text of cases) expectAgreement(Buffer.from(text));
    // invalid UTF-8 inside strings decodes to U+FFFD, which JSON.parse accepts; outside, it is an error
    expectAgreement(Buffer.from([0x7b, 0x22, 0xff, 0xe2, 0x22, 0x3a, 0x22, 0xc3, 0x22, 0x7d]));
    expectAgreement(Buffer.from([0x7b, 0xff, 0x7d]));
  });

  it('follows nesting deeper than a call stack would', () => {
    const deep = (n: number) => Buffer.from('{"a":' + '[{"b":'.repeat(n) + '1' + '}]'.repeat(n) + '}');
    expect(scanMembers(deep(200_000)).ok).toBe(true);
    expect(scanMembers(deep(200_000).subarray(1)).ok).toBe(false);
  });

  it('says where a document goes wrong', () => {
    expect(scanMembers(Buffer.from('{"fp:a":{"K1":"abc'))).toEqual({ ok: false, offset: 18, problem: 'the file ends inside the string that starts at byte 14' });
    expect(scanMembers(Buffer.from('{"a": {"b": "c",}}'))).toEqual({ ok: false, offset: 16, problem: "'}' where a member name (a string in double quotes) was expected" });
    expect(scanMembers(Buffer.from('[1]'))).toMatchObject({ ok: false, offset: 0 });
  });

  it('takes the last value of a key given twice, in the place of the first', () => {
    const scan = scanMembers(Buffer.from('{"a":"1","b":"2","a":"3"}'));
    expect(scan.ok && [...scan.members].map(([k, r]) => [k, r.start])).toEqual([
      ['a', 21],
      ['b', 13],
    ]);
  });
});
