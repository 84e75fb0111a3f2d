// The CSV reader's fast path: well-formed rows read by indexOf scanning, as csv-parse would read
// them with the reader's options (every line ending, empty lines skipped, `""` for a quote inside a
// quoted field). At the first row it is not sure of — a quote inside an unquoted field, a closing
// quote not followed by a delimiter or a line ending, a quote left open at the end, a byte that is
// not UTF-8, a row longer than MAX_HELD — it stops and hands the input from that row on to csv-parse,
// which then reads the rest: every error message and odd edge still comes from csv-parse.
// Lines are counted as csv-parse counts them (`lines`: a line ending between rows counts one, each
// \r or \n inside a quoted field one; `emptyLines`), so a row's place is worked out by the same rule
// on either path, and csv-parse picks up the count where the fast path left it.
import { isUtf8 } from 'node:buffer';
import { UNIT } from './csv-record.js';

const LF = 10;
const CR = 13;
/** csv-parse's escape character inside quoted fields, whatever the quote */
const ESC = 34;
/** a row still unfinished past this many bytes (or characters) goes to csv-parse: bounded memory, no rescans */
export const MAX_HELD = 1 << 20;

/**
 * a row read: its fields, and csv-parse's `lines` and `empty_lines` counts when it ends; `noUnit`:
 * no field holds U+001F (csv-record.ts rowText's separator), the text they were cut from having none
 */
export type RowSink = (fields: string[], lines: number, emptyLines: number, noUnit?: boolean) => void;

/**
 * Where the fast path stopped: csv-parse reads `lead`, then the pieces of `rest` (the input from the
 * first row the fast path leaves to it, cut as the chunks came: csv-parse hands on its rows and errors
 * chunk by chunk, and stops at an error that ends the file) and whatever input follows. `lead` brings
 * csv-parse's counts to where the fast path left them without touching its state: one \n per line read
 * (csv-parse counts them as empty lines, `emptyLinesOffset` of them too many), or, when no line was
 * read, the BOM the fast path dropped.
 */
export interface Handover {
  lead: string;
  rest: (Buffer | string)[];
  emptyLinesOffset: number;
}

/** Whether the fast path reads a file of these options: one plain character each, apart from line endings and csv-parse's escape. */
export function fastPathReads(delimiter: string, quote: string): boolean {
  const plain = (s: string) => s.length === 1 && s !== '\n' && s !== '\r' && !/[\ud800-\udfff]/.test(s);
  return plain(delimiter) && plain(quote) && delimiter !== quote && delimiter.charCodeAt(0) !== ESC;
}

/**
 * Reads the input a chunk at a time: `push` and `end` hand each row to the sink and return undefined
 * while the fast path keeps up, the handover when it stops (it is not used after that). Buffers are
 * UTF-8; strings were decoded from another encoding before.
 */
export class CsvScanner {
  private readonly scan: RowScan;
  /** the input from the first row not read yet, as the chunks came: raw bytes, or text */
  private pieces: (Buffer | string)[] = [];
  /** of which this much came after the last read (`held` before it) */
  private fresh = 0;
  private held = 0;
  private started = false;
  private bom = false;

  /**
   * csv-parse reads a byte only with this many bytes after it, until the end: a row whose line ending
   * is closer to the end of the input so far than that, it reads at the end. The reader marks an error
   * row read at the end as cut short, so the fast path holds such a row back too.
   */
  private readonly lookahead: number;

  constructor(
    delimiter: string,
    quote: string,
    private readonly sink: RowSink,
  ) {
    this.scan = new RowScan(delimiter.charCodeAt(0), quote.charCodeAt(0));
    this.lookahead = Math.max(2, Buffer.byteLength(delimiter), Buffer.byteLength(quote));
  }

  push(chunk: Buffer | string): Handover | undefined {
    this.pieces.push(chunk);
    this.fresh += chunk.length;
    // A row longer than the chunks is read again from its start with each: wait until as much has
    // come as is held, so that the text of a long row is scanned a few times, not once a chunk.
    return this.fresh < this.held ? undefined : this.read(false);
  }

  /** The input is over: what waited is read as it came (csv-parse reads it before its end), with `push`'s rows; then `end`. */
  drain(): Handover | undefined {
    return this.fresh ? this.read(false) : undefined;
  }

  /** After `drain`: the rows csv-parse reads at its end. */
  end(): Handover | undefined {
    return this.pieces.length ? this.read(true) : undefined;
  }

  private read(atEnd: boolean): Handover | undefined {
    const data = joined(this.pieces);
    let stop: number;
    let at: number;
    if (typeof data === 'string') {
      stop = this.rows(data, atEnd, 0);
      at = stop < 0 ? -stop - 1 : stop;
    } else {
      // whole characters only: the rest waits for the next chunk; bytes that are not UTF-8 go to csv-parse as they are
      const cut = atEnd ? data.length : utf8End(data);
      if (!isUtf8(data.subarray(0, cut))) return this.handover();
      const text = data.toString('utf8', 0, cut);
      stop = this.rows(text, atEnd, data.length - cut);
      // valid UTF-8: the unread text re-encodes to the very bytes it came from
      at = cut - Buffer.byteLength(text.slice(stop < 0 ? -stop - 1 : stop));
    }
    this.pieces = dropped(this.pieces, at);
    this.held = data.length - at;
    this.fresh = 0;
    return stop < 0 || this.held > MAX_HELD ? this.handover() : undefined;
  }

  /**
   * Rows of `text` (`after`: bytes still to decode after it) read; returns where the unread rest starts,
   * or -(start + 1) of a row left to csv-parse. At the end, the rows are handed on only when none is
   * left to csv-parse: it then reads them all, as it would have at the end.
   */
  private rows(text: string, atEnd: boolean, after: number): number {
    let pos = 0;
    if (!this.started) {
      if (!text.length) return 0;
      // csv-parse drops a BOM only at the very start of the file
      this.started = true;
      this.bom = text.charCodeAt(0) === 0xfeff;
      if (this.bom) pos = 1;
    }
    if (!atEnd) return this.scan.rows(text, pos, this.limit(text, after), this.sink);
    const { lines, emptyLines } = this.scan;
    const last: Parameters<RowSink>[] = [];
    const stop = this.scan.rows(text, pos, Infinity, (...row) => void last.push(row));
    if (stop >= 0) for (const row of last) this.sink(...row);
    else {
      this.scan.lines = lines;
      this.scan.emptyLines = emptyLines;
    }
    return stop < 0 ? -(pos + 1) : stop;
  }

  /** Where in `text` a row's line ending has `lookahead` bytes after it (`after` more follow the text): before that index. */
  private limit(text: string, after: number): number {
    let bytes = after;
    let j = text.length;
    while (bytes < this.lookahead && j > 0) {
      const c = text.charCodeAt(--j);
      // a surrogate is half of a 4-byte character
      bytes += c < 0x80 ? 1 : c < 0x800 ? 2 : c >= 0xd800 && c < 0xe000 ? 2 : 3;
    }
    return j;
  }

  private handover(): Handover {
    const { lines, emptyLines } = this.scan;
    const rest = this.pieces;
    // no line read: csv-parse starts at the start, BOM and all
    if (lines === 1) return { lead: this.bom ? '\ufeff' : '', rest, emptyLinesOffset: 0 };
    return { lead: '\n'.repeat(lines - 1), rest, emptyLinesOffset: lines - 1 - emptyLines };
  }
}

/** the pieces as one */
function joined(pieces: (Buffer | string)[]): Buffer | string {
  if (pieces.length === 1) return pieces[0]!;
  const texts = pieces.filter((p) => typeof p === 'string');
  return texts.length ? texts.join('') : Buffer.concat(pieces.filter((p) => typeof p !== 'string'));
}

/** the pieces without their first `n` bytes (or characters) */
function dropped(pieces: (Buffer | string)[], n: number): (Buffer | string)[] {
  let i = 0;
  while (i < pieces.length && n >= pieces[i]!.length) n -= pieces[i++]!.length;
  const rest = pieces.slice(i);
  const first = rest[0];
  if (n && first !== undefined) rest[0] = typeof first === 'string' ? first.slice(n) : first.subarray(n);
  return rest;
}

/** The end of the last whole UTF-8 character in `data` (a character cut by the chunk's end waits for the next). */
function utf8End(data: Buffer): number {
  const n = data.length;
  for (let i = n - 1; i >= 0 && i >= n - 4; i--) {
    const b = data[i]!;
    if ((b & 0xc0) === 0x80) continue; // a continuation byte
    const need = b >= 0xf0 ? 4 : b >= 0xe0 ? 3 : b >= 0xc0 ? 2 : 1;
    return n - i < need ? i : n;
  }
  return n;
}

/**
 * The row-by-row scan over decoded text. It finds the next delimiter, quote, \n and \r with indexOf
 * (native, several times faster than a loop over the characters) and keeps each until it is passed.
 */
class RowScan {
  lines = 1;
  emptyLines = 0;
  private readonly delimiterChar: string;
  private readonly quoteChar: string;
  // the next delimiter, quote, \n, \r and escape (`"`, when the quote is another character) at or after
  // where the scan is: their index, or the text's length when there is none
  private nextDelimiter = -1;
  private nextQuote = -1;
  private nextLf = -1;
  private nextCr = -1;
  private nextEsc = -1;
  // what the field just read holds, and the line breaks inside the row's quoted fields so far
  private value = '';
  private inner = 0;
  /** the text being read holds no U+001F (RowSink) */
  private noUnit = false;

  constructor(
    private readonly delimiter: number,
    private readonly quote: number,
  ) {
    this.delimiterChar = String.fromCharCode(delimiter);
    this.quoteChar = String.fromCharCode(quote);
  }

  /**
   * Reads the rows of `text` from `pos`; returns where the first row it could not finish starts (all
   * of `text` when it ends between rows), or -(start + 1) of a row it leaves to csv-parse. A row is
   * unfinished when its line ending is at or after `limit` (Infinity: the end of the file).
   */
  rows(text: string, pos: number, limit: number, sink: RowSink): number {
    const atEnd = limit === Infinity;
    const len = text.length;
    this.nextDelimiter = this.nextQuote = this.nextLf = this.nextCr = this.nextEsc = -1;
    // (a field is cut from the text, a quoted one joined of its pieces: none holds what the text does not)
    this.noUnit = text.indexOf(UNIT, pos) < 0;
    while (pos < len) {
      const c = text.charCodeAt(pos);
      if (c === LF || c === CR) {
        // an empty line: skipped and counted, as csv-parse does
        if (c === CR && pos + 1 >= len && !atEnd) return pos;
        pos += c === CR && text.charCodeAt(pos + 1) === LF ? 2 : 1;
        this.lines++;
        this.emptyLines++;
        continue;
      }
      const end = this.row(text, pos, limit, sink);
      if (end === MORE) return pos;
      if (end === ODD) return -(pos + 1);
      pos = end;
    }
    return pos;
  }

  /** One row from `start`: its end (after its line ending), MORE when the text stops inside it, ODD when csv-parse must read it. */
  private row(text: string, start: number, limit: number, sink: RowSink): number {
    const atEnd = limit === Infinity;
    const len = text.length;
    const fields: string[] = [];
    // \r and \n inside quoted fields: csv-parse counts each as a line
    this.inner = 0;
    let p = start;
    for (;;) {
      if (this.nextQuote < p) this.nextQuote = after(text, this.quoteChar, p);
      const end = this.nextQuote === p ? this.quoted(text, p, atEnd) : this.unquoted(text, p, atEnd);
      if (end < 0) return end;
      fields.push(this.value);
      p = end;
      if (p >= len) {
        if (!atEnd) return MORE;
        // the file ends in this row, without a line ending
        sink(fields, this.lines + this.inner, this.emptyLines, this.noUnit);
        this.lines += this.inner;
        return p;
      }
      const c = text.charCodeAt(p);
      if (c === this.delimiter) {
        p++;
        continue;
      }
      if (p >= limit) return MORE;
      sink(fields, this.lines + this.inner, this.emptyLines, this.noUnit);
      this.lines += this.inner + 1;
      return p + (c === CR && text.charCodeAt(p + 1) === LF ? 2 : 1);
    }
  }

  /** An unquoted field from `p` (in `value`): where it ends, MORE or ODD. */
  private unquoted(text: string, p: number, atEnd: boolean): number {
    if (this.nextDelimiter < p) this.nextDelimiter = after(text, this.delimiterChar, p);
    if (this.nextLf < p) this.nextLf = after(text, '\n', p);
    if (this.nextCr < p) this.nextCr = after(text, '\r', p);
    const end = Math.min(this.nextDelimiter, this.nextLf, this.nextCr);
    if (this.nextQuote < end) return ODD; // a quote inside an unquoted field
    if (end >= text.length && !atEnd) return MORE;
    this.value = text.slice(p, end);
    return end;
  }

  /** A quoted field whose opening quote is at `p` (in `value`): the index after its closing quote, MORE or ODD. */
  private quoted(text: string, p: number, atEnd: boolean): number {
    const { delimiter, quote } = this;
    const len = text.length;
    let value = '';
    let from = p + 1;
    for (;;) {
      if (this.nextQuote < from) this.nextQuote = after(text, this.quoteChar, from);
      const i = this.nextQuote;
      // csv-parse's escape, when the quote is another character: left to csv-parse
      if (quote !== ESC && this.escapeBefore(text, from, i)) return ODD;
      this.countBreaks(text, from, i);
      if (i >= len) return atEnd ? ODD : MORE;
      if (i + 1 >= len) {
        if (!atEnd) return MORE;
        this.value = value + text.slice(from, i);
        return i + 1;
      }
      const next = text.charCodeAt(i + 1);
      if (quote === ESC && next === ESC) {
        value += text.slice(from, i + 1);
        from = i + 2;
        continue;
      }
      if (next !== delimiter && next !== LF && next !== CR) return ODD;
      this.value = value + text.slice(from, i);
      return i + 1;
    }
  }

  /** Whether a `"` (csv-parse's escape) comes between `from` and `to`. */
  private escapeBefore(text: string, from: number, to: number): boolean {
    if (this.nextEsc < from) this.nextEsc = after(text, '"', from);
    return this.nextEsc < to;
  }

  /** Counts the \n and \r between `from` and `to` (inside a quoted field) into `inner`. */
  private countBreaks(text: string, from: number, to: number): void {
    if (this.nextLf < from) this.nextLf = after(text, '\n', from);
    while (this.nextLf < to) {
      this.inner++;
      this.nextLf = after(text, '\n', this.nextLf + 1);
    }
    if (this.nextCr < from) this.nextCr = after(text, '\r', from);
    while (this.nextCr < to) {
      this.inner++;
      this.nextCr = after(text, '\r', this.nextCr + 1);
    }
  }
}

/** the index of the first `char` in `text` at or after `from`, or the text's length */
function after(text: string, char: string, from: number): number {
  const i = text.indexOf(char, from);
  return i < 0 ? text.length : i;
}

const MORE = -1;
const ODD = -2;
