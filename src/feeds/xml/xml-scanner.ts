// Builds the repeating record elements of an XML document (e.g. `Listings.Listing`) from a stream of
// text, in one pass: each chunk is tokenized with indexOf (the fast way through a JS string) and the
// record's elements are built into plain objects as their tags are seen. Memory holds the record
// being built plus the one construct cut by a chunk boundary; time is linear in the input: a search
// that ran off the end of a chunk resumes where it stopped, never from the construct's start (a start
// tag's too: startTagName, startTagEnd).
//
// Why not saxes driving the builder: saxes is as fast a tokenizer but cannot contain a bad record.
// A stray `&` makes it read an entity name up to the next `;`, records later (or never: an unbounded
// buffer); a wrong close tag pops its whole element stack; both swallow the good records after it.
// Here a record is a unit: a problem inside it (a stray `<` or `&`, a wrong close tag, a DOCTYPE,
// nesting past `maxDepth`, an element named `__proto__`) makes that record an error, the record is
// still built as well as it can be read (so its key can be read and it is not taken for gone), and
// the next record starts clean.
//
// The record's shape is fast-xml-parser's (the shape the presets and the tests were written
// against, and test/feeds/xml-reader.test.ts compares the two on generated records):
//   - an element with neither attributes nor children is its text, trimmed ('' when empty);
//     attribute values are trimmed too;
//   - otherwise an object: attributes as "@_name", child elements by name (a list when repeated),
//     and its own non-blank text under "#text";
//   - every value a string: MLS numbers and ZIP codes keep their leading zeros;
//   - the five predefined entities and character references are decoded; any other `&name;` is left
//     as written (a DOCTYPE entity is never expanded, an external one never fetched); CDATA is text.
// Names are kept as written, namespace prefix included (`commons:City`): the mapping's paths match
// on the local name when the exact name is absent.
import { FeedReadError } from '../../errors.js';
import { ownString } from '../own-string.js';

export interface ScannedRecord {
  /** 1-based line of the record's start tag */
  line: number;
  /** the record; for a record with `error`, what could be read of it */
  data: Record<string, unknown>;
  /** why the record is malformed: its first problem, with the line it is on */
  error?: string;
}

export interface XmlScanner {
  /** feed the next piece of text; returns the records it completed */
  push(text: string): ScannedRecord[];
  /** the document is over: throws FeedReadError when it ended before the root element closed */
  end(): ScannedRecord[];
}

export interface ScannerOptions {
  /** `Listings.Listing`: the last segment is the record element, the earlier ones its ancestors */
  recordPath: string;
  /** name for messages */
  label: string;
  /** a record longer than this is an error of the document (default 32M characters) */
  maxRecordChars?: number;
  /** a tag, DOCTYPE or other markup longer than this is an error of the document (default 4M characters) */
  maxMarkupChars?: number;
  /** elements nested deeper than this inside a record make it malformed (default 100) */
  maxDepth?: number;
  /** elements nested deeper than this outside records make the document malformed (default 1000) */
  maxOuterDepth?: number;
}

/** One open element of the record being built. */
interface Frame {
  name: string;
  /** attributes and children; undefined while it has neither */
  obj: Record<string, unknown> | undefined;
  /** decoded text so far */
  text: string;
  /** raw text of the current text node, decoded and trimmed at the next markup */
  raw: string;
  /** not built: below the depth limit or under a forbidden name */
  skip: boolean;
}

export const LT = 60;
export const GT = 62;
const BANG = 33;
const QMARK = 63;
export const SLASH = 47;
export const DQ = 34;
export const SQ = 39;
export const EQ = 61;

/** what a skipped construct is waiting for, when it runs past the end of the buffered text */
type Pending = 0 | 1 | 2 | 3;
const NONE = 0;
const COMMENT = 1;
const CDATA = 2;
const PI = 3;
const TERMINATOR = ['', '-->', ']]>', '?>'] as const;

const PREDEFINED: Record<string, string> = { amp: '&', lt: '<', gt: '>', quot: '"', apos: "'" };
/** an entity or character reference at a given index (sticky) */
const REFERENCE = /&(?:#x([0-9a-fA-F]+)|#([0-9]+)|([A-Za-z_:][\w.:\u00B7-\uFFFF-]*));/y;

/**
 * Decode the predefined entities and character references of raw XML text; other `&name;` are kept
 * as written. Calls `stray` with the index of an `&` that starts no reference at all.
 */
export function decodeXmlText(value: string, stray?: (at: number) => void): string {
  let amp = value.indexOf('&');
  if (amp < 0) return value;
  let out = '';
  let from = 0;
  while (amp >= 0) {
    REFERENCE.lastIndex = amp;
    const m = REFERENCE.exec(value);
    if (!m) {
      stray?.(amp);
      amp = value.indexOf('&', amp + 1);
      continue;
    }
    const [whole, hex, dec, name] = m;
    let decoded: string | undefined;
    if (name !== undefined) decoded = PREDEFINED[name];
    else {
      const code = hex !== undefined ? parseInt(hex, 16) : Number(dec);
      if (code > 0 && code <= 0x10ffff) decoded = String.fromCodePoint(code);
    }
    if (decoded !== undefined) {
      out += value.slice(from, amp) + decoded;
      from = amp + whole.length;
    }
    amp = value.indexOf('&', amp + whole.length);
  }
  return out + value.slice(from);
}

/** The scanner's state: the buffered text and where it is read, the open elements, the record being built. */
interface Scan {
  recordTag: string;
  ancestors: string[];
  maxRecord: number;
  maxMarkup: number;
  maxDepth: number;
  maxOuterDepth: number;
  file: string;
  /** unconsumed text; buf[0] is at absolute offset `base` of the document */
  buf: string;
  base: number;
  pos: number;
  /** a comment, CDATA section or processing instruction not yet closed when the buffer ran out */
  pending: Pending;
  /** CDATA text of the record collected while `pending === CDATA` */
  cdata: string;
  /** open elements outside records */
  stack: string[];
  /** open elements of the record being built; frames[0] is the record */
  frames: Frame[];
  recordLine: number;
  recordStart: number;
  recordError: string | undefined;
  rootSeen: boolean;
  out: ScannedRecord[];
  /** lines counted up to `lineOff` (absolute); `nlAt` is the next newline at or after it when known */
  lineNo: number;
  lineOff: number;
  nlAt: number;
  /** one string per element name (nameAt) */
  names: string[];
  /**
   * A start tag cut by the end of the buffered text (absolute offsets): its `<`, its name's end (-1:
   * not reached), how far its search got and the quote open there. The next push resumes the search,
   * so a tag cut by many chunks is read once, not again from its `<` at each (linear time).
   */
  tagLt: number;
  tagNameEnd: number;
  tagFrom: number;
  tagQuote: number;
}

export function createXmlScanner(opts: ScannerOptions): XmlScanner {
  const segments = opts.recordPath.split('.');
  const s: Scan = {
    recordTag: segments[segments.length - 1]!,
    ancestors: segments.slice(0, -1),
    maxRecord: opts.maxRecordChars ?? 32 * 1024 * 1024,
    maxMarkup: opts.maxMarkupChars ?? 4 * 1024 * 1024,
    maxDepth: opts.maxDepth ?? 100,
    maxOuterDepth: opts.maxOuterDepth ?? 1000,
    file: opts.label,
    buf: '',
    base: 0,
    pos: 0,
    pending: NONE,
    cdata: '',
    stack: [],
    frames: [],
    recordLine: 0,
    recordStart: 0,
    recordError: undefined,
    rootSeen: false,
    out: [],
    lineNo: 1,
    lineOff: 0,
    nlAt: -1,
    names: new Array<string>(1024).fill(''),
    tagLt: -1,
    tagNameEnd: -1,
    tagFrom: 0,
    tagQuote: 0,
  };
  return {
    push(text) {
      s.buf = s.buf.length ? s.buf + text : text;
      scan(s);
      compact(s);
      const done = s.out;
      s.out = [];
      return done;
    },
    end: () => endOf(s),
  };
}

/** The document is over: the records still to hand on, or FeedReadError when it ended before the root element closed. */
function endOf(s: Scan): ScannedRecord[] {
  const done = s.out;
  s.out = [];
  if (!s.rootSeen) throw new FeedReadError('the document holds no XML elements', { file: s.file }, false);
  const open = s.frames.length ? s.frames[0]!.name : s.stack[0];
  if (open !== undefined || s.pending !== NONE || s.buf.indexOf('<', s.pos) >= 0) {
    const what = open !== undefined ? `</${open}>` : 'its last tag';
    throw new FeedReadError(
      `the document ends before ${what} closes: it is truncated`,
      { file: s.file, line: lineAt(s, s.base + s.buf.length), record: s.frames.length ? 'last' : undefined },
      false,
    );
  }
  return done;
}

// line counting, lazily: lines are counted up to `lineOff` (absolute), `nlAt` is the next newline
// at or after it when known; every newline is found once, whatever asks for lines
function lineAt(s: Scan, abs: number): number {
  for (;;) {
    if (s.nlAt < 0) {
      const i = s.buf.indexOf('\n', s.lineOff - s.base);
      if (i < 0) {
        s.lineOff = Math.max(s.lineOff, s.base + s.buf.length);
        return s.lineNo;
      }
      s.nlAt = s.base + i;
    }
    if (s.nlAt >= abs) {
      s.lineOff = Math.max(s.lineOff, abs);
      return s.lineNo;
    }
    s.lineNo++;
    s.lineOff = s.nlAt + 1;
    s.nlAt = -1;
  }
}

function fail(s: Scan, message: string, at: number) {
  s.recordError ??= `${message} (line ${lineAt(s, s.base + at)})`;
}

function ancestorsMatch(s: Scan) {
  if (s.ancestors.length > s.stack.length) return false;
  const off = s.stack.length - s.ancestors.length;
  for (let i = 0; i < s.ancestors.length; i++) if (s.stack[off + i] !== s.ancestors[i]) return false;
  return true;
}

// Element names repeat: a small cache hands out one string per name, so a start tag costs a
// comparison, not a copy, and property stores get a key V8 has already internalized. Entries are
// copies (Object.keys gives the internalized key), never slices that would keep a chunk alive.
function nameAt(s: Scan, from: number, to: number): string {
  const len = to - from;
  const h = (s.buf.charCodeAt(from) * 31 + s.buf.charCodeAt(to - 1) * 7 + len) & 1023;
  const cached = s.names[h]!;
  if (cached.length === len && s.buf.startsWith(cached, from)) return cached;
  return (s.names[h] = Object.keys({ [s.buf.slice(from, to)]: 0 })[0]!);
}

const newFrame = (name: string, skip: boolean): Frame => ({ name, obj: undefined, text: '', raw: '', skip });

/** Move the frame's raw text into its decoded text: one text node, trimmed (as fast-xml-parser's trimValues). */
function flush(s: Scan, f: Frame, at: number) {
  const piece = ownString(f.raw.trim());
  f.raw = '';
  if (piece) f.text += decodeXmlText(piece, () => fail(s, 'a stray "&" (write &amp;)', at));
}

/** A whole text node, buf[from, to): trimmed, then decoded (fast-xml-parser's order), without copying blank text. */
function textNode(s: Scan, f: Frame, from: number, to: number) {
  let a = from;
  while (a < to && s.buf.charCodeAt(a) <= 32) a++;
  if (a === to) return;
  let b = to;
  while (s.buf.charCodeAt(b - 1) <= 32) b--;
  let piece = ownString(s.buf.slice(a, b));
  if (piece.indexOf('&') >= 0) piece = decodeXmlText(piece, () => fail(s, 'a stray "&" (write &amp;)', a));
  f.text = f.text ? f.text + piece : piece;
}

/** the value an element stands for, once closed */
function valueOf(s: Scan, f: Frame, at: number): unknown {
  if (f.raw) flush(s, f, at);
  const text = f.text;
  if (f.obj === undefined) return text;
  if (text !== '') f.obj['#text'] = text;
  return f.obj;
}

function addChild(parent: Frame, name: string, value: unknown) {
  const obj = (parent.obj ??= {});
  const had = obj[name];
  // `constructor`, `toString`...: a name the prototype has is not a repeat (`__proto__` never gets here)
  if (had === undefined || !Object.hasOwn(obj, name)) obj[name] = value;
  else if (Array.isArray(had)) had.push(value);
  else obj[name] = [had, value];
}

/** Close the top frame of the record; emit the record when it was the record element. */
function closeFrame(s: Scan, at: number) {
  const f = s.frames.pop()!;
  if (s.frames.length === 0) {
    const value = valueOf(s, f, at);
    const data = typeof value === 'string' ? { '#text': value } : (value as Record<string, unknown>);
    s.out.push(
      s.recordError === undefined ? { line: s.recordLine, data } : { line: s.recordLine, data, error: s.recordError },
    );
    s.recordError = undefined;
    return;
  }
  const parent = s.frames[s.frames.length - 1]!;
  if (!f.skip && !parent.skip) addChild(parent, f.name, valueOf(s, f, at));
}

/** Where nextAttribute found an attribute's name and value in the buffer (reused: read before the next call). */
export const lexed = { nameStart: 0, nameEnd: 0, valueStart: 0, valueEnd: 0 };
/** Why nextAttribute found no attribute: none left, or how the one at lexed.nameStart is malformed. */
export type AttributeEnd = 'end' | 'has no value' | 'is not quoted' | 'has no closing quote';

/**
 * Lexes the next attribute of a start tag in buf[i, to) into `lexed`: the index after its closing
 * quote, or why there is none. The XML scanner and the CSDL scan (csdl-scan.ts) share it.
 */
export function nextAttribute(buf: string, i: number, to: number): number | AttributeEnd {
  i = skipSpace(buf, i, to);
  if (i >= to) return 'end';
  lexed.nameStart = i;
  while (i < to) {
    const c = buf.charCodeAt(i);
    if (c <= 32 || c === EQ || c === DQ || c === SQ) break;
    i++;
  }
  lexed.nameEnd = i;
  i = skipSpace(buf, i, to);
  if (i >= to || buf.charCodeAt(i) !== EQ) return 'has no value';
  i++;
  i = skipSpace(buf, i, to);
  const q = buf.charCodeAt(i);
  if (i >= to || (q !== DQ && q !== SQ)) return 'is not quoted';
  const close = buf.indexOf(q === DQ ? '"' : "'", i + 1);
  if (close < 0 || close >= to) return 'has no closing quote';
  lexed.valueStart = i + 1;
  lexed.valueEnd = close;
  return close + 1;
}

/** The first index at or after `i` (before `to`) that is not whitespace. */
function skipSpace(buf: string, i: number, to: number): number {
  while (i < to && buf.charCodeAt(i) <= 32) i++;
  return i;
}

/** Parse the attributes of a start tag, buf[from, to), onto the frame. */
function attributes(s: Scan, f: Frame, from: number, to: number) {
  for (let i = from; ;) {
    const next = nextAttribute(s.buf, i, to);
    if (next === 'end') return;
    const nameStart = lexed.nameStart;
    const name = s.buf.slice(nameStart, lexed.nameEnd);
    if (typeof next === 'string') return fail(s, `attribute ${name} of <${f.name}> ${next}`, nameStart);
    const raw = ownString(s.buf.slice(lexed.valueStart, lexed.valueEnd));
    i = next;
    if (raw.indexOf('<') >= 0) fail(s, `attribute ${name} of <${f.name}> holds a "<"`, nameStart);
    if (f.skip) continue;
    const obj = (f.obj ??= {});
    const key = `@_${name}`;
    if (key in obj) fail(s, `attribute ${name} of <${f.name}> is repeated`, nameStart);
    obj[key] = decodeXmlText(raw, () => fail(s, `a stray "&" in attribute ${name} (write &amp;)`, nameStart)).trim();
  }
}

function openTag(s: Scan, name: string, lt: number, attrsFrom: number, attrsTo: number, selfClosing: boolean) {
  s.rootSeen = true;
  if (s.frames.length) {
    if (name === s.recordTag) {
      // a record element cannot hold one of its own name: the previous one was never closed
      fail(s, `<${s.recordTag}> opens before the record's </${s.recordTag}>`, lt);
      while (s.frames.length) closeFrame(s, lt);
    } else {
      const parent = s.frames[s.frames.length - 1]!;
      let skip = parent.skip;
      if (!skip && s.frames.length >= s.maxDepth) {
        fail(s, `elements nested deeper than ${s.maxDepth} levels`, lt);
        skip = true;
      }
      if (!skip && name === '__proto__') {
        fail(s, 'an element named __proto__', lt);
        skip = true;
      }
      const f = newFrame(name, skip);
      if (attrsTo > attrsFrom) attributes(s, f, attrsFrom, attrsTo);
      s.frames.push(f);
      if (selfClosing) closeFrame(s, lt);
      return;
    }
  }
  if (name === s.recordTag && ancestorsMatch(s)) {
    s.recordLine = lineAt(s, s.base + lt);
    s.recordStart = s.base + lt;
    const f = newFrame(name, false);
    s.frames.push(f);
    if (attrsTo > attrsFrom) attributes(s, f, attrsFrom, attrsTo);
    if (selfClosing) closeFrame(s, lt);
    return;
  }
  if (selfClosing) return;
  if (s.stack.length >= s.maxOuterDepth)
    throw new FeedReadError(
      `elements nested deeper than ${s.maxOuterDepth} levels around line ${lineAt(s, s.base + lt)}: the document is malformed`,
      { file: s.file },
      false,
    );
  s.stack.push(name);
}

function closeTag(s: Scan, name: string, lt: number) {
  if (s.frames.length) {
    let i = s.frames.length - 1;
    while (i >= 0 && s.frames[i]!.name !== name) i--;
    if (i === s.frames.length - 1) return closeFrame(s, lt);
    if (i >= 0) {
      fail(s, `</${name}> closes <${s.frames[s.frames.length - 1]!.name}>`, lt);
      while (s.frames.length > i) closeFrame(s, lt);
      return;
    }
    if (s.stack.lastIndexOf(name) < 0) {
      // most likely a misspelt close tag: it closes the innermost element, and what follows lands where it belongs
      fail(s, `</${name}> where </${s.frames[s.frames.length - 1]!.name}> was expected`, lt);
      return closeFrame(s, lt);
    }
    // an ancestor closes: the record's own close tag is missing
    fail(s, `</${name}> comes before the record's </${s.recordTag}>`, lt);
    while (s.frames.length) closeFrame(s, lt);
  }
  const i = s.stack.lastIndexOf(name);
  // a close tag that closes nothing outside records changes nothing we read
  if (i >= 0) s.stack.length = i;
}

/** Text of the record, raw: decoded at the end of its text node. */
function addText(s: Scan, from: number, to: number) {
  const f = s.frames[s.frames.length - 1];
  if (f !== undefined && !f.skip) f.raw += s.buf.slice(from, to);
}

function cdataText(s: Scan, text: string) {
  const f = s.frames[s.frames.length - 1];
  if (f === undefined || f.skip) return;
  if (f.raw) flush(s, f, s.pos);
  f.text += ownString(text);
}

/** Continue a comment, CDATA section or PI that ran past the buffer; false while it still does. */
function resume(s: Scan): boolean {
  const term = TERMINATOR[s.pending];
  const end = s.buf.indexOf(term, s.pos);
  if (end < 0) {
    // keep the last characters: the terminator may be cut by the chunk boundary
    const keep = Math.max(s.pos, s.buf.length - (term.length - 1));
    if (s.pending === CDATA && s.frames.length) s.cdata += s.buf.slice(s.pos, keep);
    s.pos = keep;
    return false;
  }
  if (s.pending === CDATA && s.frames.length) {
    cdataText(s, s.cdata + s.buf.slice(s.pos, end));
    s.cdata = '';
  }
  s.pos = end + term.length;
  s.pending = NONE;
  return true;
}

/** Enter a construct that ends at a terminator, at `from` (just past its opening). */
function skipTo(s: Scan, kind: Pending, from: number): boolean {
  s.pending = kind;
  s.pos = from;
  return resume(s);
}

/** Tokenize what is buffered; stops at a construct that is not complete yet. */
function scan(s: Scan) {
  for (;;) {
    if (s.pending !== NONE && !resume(s)) return;
    const lt = s.buf.indexOf('<', s.pos);
    textBefore(s, lt);
    if (lt < 0) return void (s.pos = s.buf.length);
    s.pos = lt;
    if (lt + 1 >= s.buf.length) return;
    if (!markupAt(s, lt)) return;
  }
}

/** The record's text from the scan's position up to `lt` (the next `<`, or -1: none buffered). */
function textBefore(s: Scan, lt: number) {
  const f = s.frames[s.frames.length - 1];
  if (f === undefined) return;
  const end = lt < 0 ? s.buf.length : lt;
  // a text node cut by the end of the buffer is collected raw, and finished at the next markup
  if (lt < 0 || f.raw) addText(s, s.pos, end);
  else if (end > s.pos && !f.skip) textNode(s, f, s.pos, end);
  if (lt >= 0 && f.raw) flush(s, f, lt);
}

/** The markup at `lt` (a `<` with a character after it); false when more text is needed. */
function markupAt(s: Scan, lt: number): boolean {
  const c = s.buf.charCodeAt(lt + 1);
  if (c === SLASH) return endTag(s, lt);
  if (c === BANG) return markup(s, lt);
  // processing instructions (the XML declaration among them) carry nothing we read
  if (c === QMARK) return skipTo(s, PI, lt + 2);
  if (isNameStart(c)) return startTag(s, lt);
  // `<` followed by neither a name, `/`, `!` nor `?`: not markup; inside a record a mistake
  if (s.frames.length) {
    fail(s, 'a stray "<" (write &lt;)', lt);
    addText(s, lt, lt + 1);
  }
  s.pos = lt + 1;
  return true;
}

/** `</Name>` at `lt`; false when its `>` is not buffered yet. */
function endTag(s: Scan, lt: number): boolean {
  const gt = s.buf.indexOf('>', lt + 2);
  if (gt < 0) return false;
  s.pos = gt + 1;
  // the usual case without a copy of the name: `</Name>` closing the innermost element
  const top = s.frames[s.frames.length - 1];
  if (top !== undefined && gt - lt - 2 === top.name.length && s.buf.startsWith(top.name, lt + 2)) closeFrame(s, lt);
  else closeTag(s, s.buf.slice(lt + 2, gt).trim(), lt);
  return true;
}

/** The start tag at `lt`; false when its end is not buffered yet. */
function startTag(s: Scan, lt: number): boolean {
  const nameEnd = startTagName(s, lt);
  if (nameEnd < 0) return false;
  if (s.buf.charCodeAt(nameEnd) === GT) {
    // `<Name>`: the usual case, no attributes to look through
    s.pos = nameEnd + 1;
    openTag(s, nameAt(s, lt + 1, nameEnd), lt, nameEnd, nameEnd, false);
    return true;
  }
  const end = startTagEnd(s, lt, nameEnd);
  if (end < 0) return false;
  const broken = s.buf.charCodeAt(end) === LT;
  if (broken && s.frames.length) fail(s, 'a start tag without its ">"', lt);
  s.pos = broken ? end : end + 1;
  const selfClosing = !broken && s.buf.charCodeAt(end - 1) === SLASH;
  openTag(s, nameAt(s, lt + 1, nameEnd), lt, nameEnd, selfClosing ? end - 1 : end, selfClosing);
  return true;
}

/** `<!--`, `<![CDATA[`, `<!DOCTYPE` and other declarations at `lt`; false when more text is needed. */
function markup(s: Scan, lt: number): boolean {
  if (s.buf.startsWith('<!--', lt)) return skipTo(s, COMMENT, lt + 4);
  if (s.buf.startsWith('<![CDATA[', lt)) return skipTo(s, CDATA, lt + 9);
  const head = s.buf.slice(lt, lt + 9);
  if (head.length < 9 && ('<![CDATA['.startsWith(head) || '<!--'.startsWith(head) || '<!DOCTYPE'.startsWith(head)))
    return false;
  const gt = declarationEnd(s.buf, lt);
  if (gt < 0) return false;
  if (s.frames.length) {
    fail(
      s,
      head === '<!DOCTYPE'
        ? 'a DOCTYPE inside the record (entities are never expanded or fetched)'
        : 'a markup declaration inside the record',
      lt,
    );
  }
  s.pos = gt + 1;
  return true;
}

/** Drop what is consumed; refuse constructs and records past their caps. */
function compact(s: Scan) {
  if (s.pos > 0) {
    lineAt(s, s.base + s.pos);
    s.buf = s.buf.slice(s.pos);
    s.base += s.pos;
    s.pos = 0;
  }
  if (s.frames.length && s.base - s.recordStart > s.maxRecord) {
    throw new FeedReadError(
      `the <${s.recordTag}> record starting on line ${s.recordLine} is longer than ${s.maxRecord} characters: the document is malformed`,
      { file: s.file, line: s.recordLine },
      false,
    );
  }
  if (s.buf.length > s.maxMarkup) {
    throw new FeedReadError(
      `markup longer than ${s.maxMarkup} characters starting on line ${lineAt(s, s.base)} (${JSON.stringify(s.buf.slice(0, 40))}…): the document is malformed`,
      { file: s.file, line: lineAt(s, s.base) },
      false,
    );
  }
}

function isNameStart(c: number): boolean {
  // ASCII letters, `_`, `:`, and anything past ASCII (XML allows most of it)
  return (c >= 97 && c <= 122) || (c >= 65 && c <= 90) || c === 95 || c === 58 || c > 127;
}

/** The quote open where tagEnd last ran out of text (0: none). */
let quoteAtEnd = 0;

/**
 * Index of the `>` ending a start tag, skipping `>` inside quoted attribute values; -1 if not
 * buffered yet (the quote open there is left in `quoteAtEnd`, to resume with). A `<` (never allowed
 * in a tag, quoted or not) ends a broken tag: its index is returned, so an unclosed quote cannot run
 * on into the records after it.
 */
export function tagEnd(buf: string, from: number, quote = 0): number {
  let q = quote;
  for (let j = from; j < buf.length; j++) {
    const ch = buf.charCodeAt(j);
    if (ch === LT) return j;
    if (q) {
      if (ch === q) q = 0;
    } else if (ch === GT) return j;
    else if (ch === DQ || ch === SQ) q = ch;
  }
  quoteAtEnd = q;
  return -1;
}

/** The end of the name of the start tag at `lt` (buffer index), or -1 when the buffer ends first (resumed there next push). */
function startTagName(s: Scan, lt: number): number {
  const abs = s.base + lt;
  if (s.tagLt === abs && s.tagNameEnd >= 0) return s.tagNameEnd - s.base;
  let i = s.tagLt === abs ? s.tagFrom - s.base : lt + 2;
  for (; i < s.buf.length; i++) {
    const ch = s.buf.charCodeAt(i);
    if (ch <= 32 || ch === GT || ch === SLASH || ch === LT) return i;
  }
  s.tagLt = abs;
  s.tagNameEnd = -1;
  s.tagFrom = s.base + i;
  return -1;
}

/** tagEnd of the start tag at `lt`, resumed where its last search ran out of buffered text. */
function startTagEnd(s: Scan, lt: number, nameEnd: number): number {
  const abs = s.base + lt;
  const resume = s.tagLt === abs && s.tagNameEnd >= 0;
  const end = tagEnd(s.buf, resume ? s.tagFrom - s.base : nameEnd, resume ? s.tagQuote : 0);
  if (end >= 0) {
    s.tagLt = -1;
    return end;
  }
  s.tagLt = abs;
  s.tagNameEnd = s.base + nameEnd;
  s.tagFrom = s.base + s.buf.length;
  s.tagQuote = quoteAtEnd;
  return -1;
}

/** End of `<!DOCTYPE ... [ internal subset ] >`. */
function declarationEnd(buf: string, lt: number): number {
  const gt = buf.indexOf('>', lt);
  const bracket = buf.indexOf('[', lt);
  if (bracket < 0 || (gt >= 0 && gt < bracket)) return gt;
  const close = buf.indexOf(']', bracket);
  return close < 0 ? -1 : buf.indexOf('>', close);
}
