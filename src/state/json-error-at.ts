// Where a text stops being JSON, for a person fixing a document by hand: JSON.parse's words name a
// position for some faults and none for others (`Unexpected token 'x', "…" is not valid JSON`,
// `Unexpected end of JSON input`), and they differ between Node versions. This reads the text as
// RFC 8259 does, without building anything, and gives the first offset no JSON document can
// continue with. Iterative: a deeply nested document does not exhaust the stack.

type Want = 'value' | 'firstValue' | 'key' | 'firstKey' | 'colon' | 'after';
/** where the reading stands: the next offset, and what the text must hold there */
type Step = { i: number; want: Want };
/** where the text stops being JSON */
type Fault = { fault: number };
/** a token read: where it ends, or where it goes wrong */
type Scanned = { end: number } | Fault;

/** The offset where `text` stops being JSON (text.length: it ends too soon); undefined when it is JSON. */
export function jsonErrorAt(text: string): number | undefined {
  /** the closing brackets of the objects and arrays open, the innermost last */
  const closers: string[] = [];
  let at: Step = { i: 0, want: 'value' };
  for (;;) {
    let i = at.i;
    while (i < text.length && ' \t\n\r'.includes(text[i]!)) i++;
    if (i >= text.length) return at.want === 'after' && closers.length === 0 ? undefined : i;
    const next = step(text, i, at.want, closers);
    if ('fault' in next) return next.fault;
    at = next;
  }
}

/** One step from `want` at `i` (not whitespace): where the reading stands after it, or the fault. */
function step(text: string, i: number, want: Want, closers: string[]): Step | Fault {
  const c = text[i]!;
  if (want === 'after') return afterValue(c, i, closers);
  if (want === 'colon') return c === ':' ? { i: i + 1, want: 'value' } : { fault: i };
  if ((want === 'firstKey' && c === '}') || (want === 'firstValue' && c === ']')) {
    closers.pop();
    return { i: i + 1, want: 'after' };
  }
  if (want === 'key' || want === 'firstKey') return c === '"' ? then(scanString(text, i), 'colon') : { fault: i };
  if (c === '{' || c === '[') {
    closers.push(c === '{' ? '}' : ']');
    return { i: i + 1, want: c === '{' ? 'firstKey' : 'firstValue' };
  }
  const scalar = c === '"' ? scanString(text, i) : c === '-' || isDigit(c) ? scanNumber(text, i) : scanLiteral(text, i);
  return then(scalar, 'after');
}

/** After a value: the end of the document, a comma, or the innermost closing bracket. */
function afterValue(c: string, i: number, closers: string[]): Step | Fault {
  if (closers.length === 0) return { fault: i }; // something after the document
  if (c === closers.at(-1)) {
    closers.pop();
    return { i: i + 1, want: 'after' };
  }
  if (c === ',') return { i: i + 1, want: closers.at(-1) === '}' ? 'key' : 'value' };
  return { fault: i };
}

const then = (read: Scanned, want: Want): Step | Fault => ('fault' in read ? read : { i: read.end, want });

const isDigit = (c: string | undefined) => c !== undefined && c >= '0' && c <= '9';

/** A number at `at` (RFC 8259: -? int frac? exp?); where it goes wrong: the first character that cannot continue it. */
function scanNumber(text: string, at: number): Scanned {
  let i = at;
  const digits = (): boolean => {
    if (!isDigit(text[i])) return false;
    while (isDigit(text[i])) i++;
    return true;
  };
  if (text[i] === '-') i++;
  if (text[i] === '0') i++;
  else if (!digits()) return { fault: i };
  if (text[i] === '.') {
    i++;
    if (!digits()) return { fault: i };
  }
  if (text[i] === 'e' || text[i] === 'E') {
    i++;
    if (text[i] === '+' || text[i] === '-') i++;
    if (!digits()) return { fault: i };
  }
  return { end: i };
}

/** true, false or null at `at`; where it goes wrong: the first character that is not the word's. */
function scanLiteral(text: string, at: number): Scanned {
  const word = ['true', 'false', 'null'].find((w) => w[0] === text[at]);
  if (!word) return { fault: at };
  for (let k = 1; k < word.length; k++) if (text[at + k] !== word[k]) return { fault: Math.min(at + k, text.length) };
  return { end: at + word.length };
}

/** The string opened at `at`; where it goes wrong: a control character, a bad escape, or the end of the text. */
function scanString(text: string, at: number): Scanned {
  for (let i = at + 1; i < text.length; i++) {
    const c = text[i]!;
    if (c === '"') return { end: i + 1 };
    if (c < ' ') return { fault: i };
    if (c !== '\\') continue;
    // (the place is the escape's first character that cannot be, as JSON.parse names it)
    if (text[i + 1] !== 'u') {
      if (!'"\\/bfnrt'.includes(text[i + 1] ?? '')) return { fault: Math.min(i + 1, text.length) };
      i++;
      continue;
    }
    for (let h = i + 2; h < i + 6; h++)
      if (!/[0-9a-fA-F]/.test(text[h] ?? '')) return { fault: Math.min(h, text.length) };
    i += 5;
  }
  return { fault: text.length };
}

/** `offset` of `text` as a person finds it: 1-based line and column (in characters). */
export function lineColumn(text: string, offset: number): { line: number; column: number } {
  let line = 1;
  let start = 0;
  for (let i = text.indexOf('\n'); i >= 0 && i < offset; i = text.indexOf('\n', i + 1)) {
    line++;
    start = i + 1;
  }
  return { line, column: offset - start + 1 };
}
