// The members of a JSON object document, found in its bytes without building it: the state file
// holds a few namespaces of up to a million entries each, and a run needs only some of them parsed
// (JSON.parse of the whole 133 MB file held the text and ~300 MB of objects). The verdict on the
// document is JSON.parse(bytes.toString('utf8'))'s: every byte is checked, nested values too. Bytes
// of 0x80 and up are only ever inside strings (outside, any is an error); as UTF-8 decoding never
// swallows an ASCII byte, invalid UTF-8 there decodes to U+FFFD and JSON.parse accepts it, as here.

/** Where a member's value lies in the document. */
export interface ValueRange {
  /** offset of the value's first byte */
  readonly start: number;
  /** offset just past its last byte */
  readonly end: number;
  /** the value is an object whose every member's value is a string (a namespace as the state file holds it) */
  readonly stringsOnly: boolean;
}

export type MembersScan = { readonly ok: true; readonly members: ReadonlyMap<string, ValueRange> } | { readonly ok: false; readonly offset: number; readonly problem: string };

/**
 * Each member of the top-level object, by its key as JSON.parse decodes it, in the order
 * JSON.parse's object would list them but for integer-like keys (which it puts first); of a key
 * given twice, the last value counts, as in JSON.parse. Or what makes the document not JSON, or not
 * an object, and at which byte.
 */
export function scanMembers(bytes: Buffer): MembersScan {
  try {
    return { ok: true, members: topMembers(bytes) };
  } catch (err) {
    if (err instanceof JsonProblem) return { ok: false, offset: err.offset, problem: err.message };
    throw err;
  }
}

/**
 * Each member of one object, given as its bytes (a namespace's range: from its '{' to its '}'),
 * already judged valid by scanMembers, so nothing is checked again: where the member starts (its
 * key's opening quote), its key as JSON.parse decodes it, and its value's range. A key given twice
 * is visited twice, in the order written.
 */
export function walkMembers(b: Buffer, visit: (memberStart: number, key: string, valueStart: number, valueEnd: number) => void): void {
  let i = skipSpace(b, 1);
  if (at(b, i) === CLOSE_OBJECT) return;
  for (;;) {
    const keyEnd = skipString(b, i);
    const start = skipSpace(b, skipColon(b, keyEnd));
    const end = skipValue(b, start);
    visit(i, decodeString(b, i, keyEnd), start, end);
    i = skipSpace(b, end);
    if (at(b, i) === CLOSE_OBJECT) return;
    i = skipSpace(b, i + 1);
  }
}

/** The key of the member that starts at `memberStart` (its opening quote), in bytes valid as walkMembers takes them. */
export function memberKey(b: Buffer, memberStart: number): string {
  return decodeString(b, memberStart, skipString(b, memberStart));
}

/** The range of the value of the member that starts at `memberStart`, in bytes valid as walkMembers takes them. */
export function memberValue(b: Buffer, memberStart: number): { start: number; end: number } {
  const start = skipSpace(b, skipColon(b, skipString(b, memberStart)));
  return { start, end: skipValue(b, start) };
}

class JsonProblem extends Error {
  constructor(
    readonly offset: number,
    problem: string,
  ) {
    super(problem);
  }
}

const QUOTE = 0x22;
const BACKSLASH = 0x5c;
const COMMA = 0x2c;
const COLON = 0x3a;
const OPEN_OBJECT = 0x7b;
const CLOSE_OBJECT = 0x7d;
const OPEN_ARRAY = 0x5b;
const CLOSE_ARRAY = 0x5d;

function topMembers(b: Buffer): Map<string, ValueRange> {
  const members = new Map<string, ValueRange>();
  let i = skipSpace(b, 0);
  if (i >= b.length) throw new JsonProblem(i, 'the file is empty (or only whitespace) where a JSON object was expected');
  if (b[i] !== OPEN_OBJECT) throw unexpected(b, i, "'{' (the state is one JSON object)");
  i = skipSpace(b, i + 1);
  if (at(b, i) === CLOSE_OBJECT) return afterDocument(b, i + 1, members);
  for (;;) {
    if (at(b, i) !== QUOTE) throw unexpected(b, i, 'a member name (a string in double quotes)');
    const keyEnd = skipString(b, i);
    const key = decodeString(b, i, keyEnd);
    const start = skipSpace(b, skipColon(b, keyEnd));
    const value = skipNamespace(b, start);
    // a key given twice keeps its first place and takes the last value, as in JSON.parse (and a Map)
    members.set(key, { start, end: value.end, stringsOnly: value.stringsOnly });
    i = skipSpace(b, value.end);
    const c = at(b, i);
    if (c === CLOSE_OBJECT) return afterDocument(b, i + 1, members);
    if (c !== COMMA) throw unexpected(b, i, "',' or '}' after a member of the top-level object");
    i = skipSpace(b, i + 1);
  }
}

function afterDocument(b: Buffer, i: number, members: Map<string, ValueRange>): Map<string, ValueRange> {
  i = skipSpace(b, i);
  if (i < b.length) throw unexpected(b, i, 'the end of the file after the top-level object');
  return members;
}

/** The byte at i, or -1 past the end (a Uint8Array read out of bounds would be undefined, and slow). */
function at(b: Buffer, i: number): number {
  return i < b.length ? b[i]! : -1;
}

function skipSpace(b: Buffer, i: number): number {
  const n = b.length;
  while (i < n) {
    const c = b[i];
    if (c !== 0x20 && c !== 0x0a && c !== 0x0d && c !== 0x09) break;
    i++;
  }
  return i;
}

/**
 * A namespace's value: the common case, an object of strings, in one flat loop; anything else
 * (another value, or a member that is not a string) again from its start as any value.
 */
function skipNamespace(b: Buffer, start: number): { end: number; stringsOnly: boolean } {
  if (at(b, start) !== OPEN_OBJECT) return { end: skipValue(b, start), stringsOnly: false };
  let i = skipSpace(b, start + 1);
  if (at(b, i) === CLOSE_OBJECT) return { end: i + 1, stringsOnly: true };
  for (;;) {
    i = skipSpace(b, skipMemberName(b, i));
    if (at(b, i) !== QUOTE) return { end: skipValue(b, start), stringsOnly: false };
    i = skipSpace(b, skipString(b, i));
    const c = at(b, i);
    if (c === CLOSE_OBJECT) return { end: i + 1, stringsOnly: true };
    if (c !== COMMA) throw unexpected(b, i, "',' or '}' after a member of an object");
    i = skipSpace(b, i + 1);
  }
}

const IN_OBJECT = 1;
const IN_ARRAY = 2;

/**
 * Any JSON value from i (whitespace skipped before it, not after): offset just past it. Nesting is
 * followed on a stack of its own, not by recursion, so no depth overflows the call stack (V8's
 * JSON.parse has no depth limit either).
 */
function skipValue(b: Buffer, i: number): number {
  const open: number[] = [];
  for (;;) {
    i = skipSpace(b, i);
    const c = at(b, i);
    if (c === OPEN_OBJECT || c === OPEN_ARRAY) {
      const close = c === OPEN_OBJECT ? CLOSE_OBJECT : CLOSE_ARRAY;
      const first = skipSpace(b, i + 1);
      if (at(b, first) !== close) {
        open.push(c === OPEN_OBJECT ? IN_OBJECT : IN_ARRAY);
        i = c === OPEN_OBJECT ? skipMemberName(b, first) : first;
        continue;
      }
      i = first + 1;
    } else {
      i = skipScalar(b, i);
    }
    // a value ends at i: the containers it completes close
    for (;;) {
      const inside = open.at(-1);
      if (inside === undefined) return i;
      i = skipSpace(b, i);
      const next = at(b, i);
      if (next === COMMA) {
        i = inside === IN_OBJECT ? skipMemberName(b, skipSpace(b, i + 1)) : i + 1;
        break;
      }
      if (next !== (inside === IN_OBJECT ? CLOSE_OBJECT : CLOSE_ARRAY)) {
        throw unexpected(b, i, inside === IN_OBJECT ? "',' or '}' after a member of an object" : "',' or ']' after an element of an array");
      }
      open.pop();
      i++;
    }
  }
}

/** A member's name and its colon, from i (whitespace skipped): offset just past the colon. */
function skipMemberName(b: Buffer, i: number): number {
  if (at(b, i) !== QUOTE) throw unexpected(b, i, 'a member name (a string in double quotes)');
  return skipColon(b, skipString(b, i));
}

/** The colon after a member name that ends at i: offset just past it. */
function skipColon(b: Buffer, i: number): number {
  i = skipSpace(b, i);
  if (at(b, i) !== COLON) throw unexpected(b, i, "':' after a member name");
  return i + 1;
}

function skipScalar(b: Buffer, i: number): number {
  const c = at(b, i);
  if (c === QUOTE) return skipString(b, i);
  if (c === 0x2d || isDigit(c)) return skipNumber(b, i);
  if (c === 0x74) return skipWord(b, i, 'true');
  if (c === 0x66) return skipWord(b, i, 'false');
  if (c === 0x6e) return skipWord(b, i, 'null');
  throw unexpected(b, i, 'a value');
}

/** A string from its opening quote at i: offset just past its closing quote. */
function skipString(b: Buffer, i: number): number {
  const n = b.length;
  const start = i;
  i++;
  for (;;) {
    if (i >= n) throw new JsonProblem(n, `the file ends inside the string that starts at byte ${start}`);
    const c = b[i]!;
    if (c === QUOTE) return i + 1;
    if (c === BACKSLASH) i = skipEscape(b, i);
    else if (c < 0x20) throw new JsonProblem(i, `a control character (${hexByte(c)}) inside a string; it must be written as an escape`);
    else i++;
  }
}

const SIMPLE_ESCAPES = new Set([...'"\\/bfnrt'].map((ch) => ch.charCodeAt(0)));

function skipEscape(b: Buffer, i: number): number {
  const c = at(b, i + 1);
  if (SIMPLE_ESCAPES.has(c)) return i + 2;
  if (c !== 0x75) throw new JsonProblem(i, c === -1 ? 'the file ends inside an escape' : `an escape JSON does not have: \\${describe(c)}`);
  for (let k = i + 2; k < i + 6; k++) if (!isHexDigit(at(b, k))) throw new JsonProblem(i, 'a \\u escape without four hex digits');
  return i + 6;
}

function skipNumber(b: Buffer, i: number): number {
  if (b[i] === 0x2d) i++;
  if (at(b, i) === 0x30) i++;
  else if (isDigit(at(b, i))) i = skipDigits(b, i);
  else throw unexpected(b, i, "a digit (after '-')");
  if (at(b, i) === 0x2e) {
    if (!isDigit(at(b, i + 1))) throw unexpected(b, i + 1, "a digit after a number's '.'");
    i = skipDigits(b, i + 1);
  }
  if ((at(b, i) | 0x20) === 0x65) {
    i++;
    if (at(b, i) === 0x2b || at(b, i) === 0x2d) i++;
    if (!isDigit(at(b, i))) throw unexpected(b, i, "a digit in a number's exponent");
    i = skipDigits(b, i);
  }
  return i;
}

function skipDigits(b: Buffer, i: number): number {
  while (isDigit(at(b, i))) i++;
  return i;
}

function skipWord(b: Buffer, i: number, word: string): number {
  for (let k = 0; k < word.length; k++) if (at(b, i + k) !== word.charCodeAt(k)) throw unexpected(b, i + k, `'${word}'`);
  return i + word.length;
}

function isDigit(c: number): boolean {
  return c >= 0x30 && c <= 0x39;
}

function isHexDigit(c: number): boolean {
  return isDigit(c) || ((c | 0x20) >= 0x61 && (c | 0x20) <= 0x66);
}

/**
 * A string (a key, or a namespace's value) as JSON.parse decodes it, from its opening quote to just
 * past its closing one: a range between ASCII quotes decodes as it does within the whole.
 */
export function decodeString(b: Buffer, start: number, end: number): string {
  const text = b.toString('utf8', start, end);
  // escapes are rare; JSON.parse decodes them (\u surrogates included) exactly as it would
  return text.includes('\\') ? (JSON.parse(text) as string) : text.slice(1, -1);
}

function unexpected(b: Buffer, i: number, expected: string): JsonProblem {
  if (i >= b.length) return new JsonProblem(i, `the file ends where ${expected} was expected`);
  return new JsonProblem(i, `${describe(b[i]!)} where ${expected} was expected`);
}

function describe(c: number): string {
  return c > 0x20 && c < 0x7f ? `'${String.fromCharCode(c)}'` : `byte ${hexByte(c)}`;
}

function hexByte(c: number): string {
  return '0x' + c.toString(16).padStart(2, '0');
}
