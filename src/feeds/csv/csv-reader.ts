// CSV feed → records keyed by the header row. Bytes in other encodings are decoded before parsing
// (windows-1252 differs from latin1 in 0x80–0x9F: € and curly quotes). A row with the wrong number
// of columns, or a quoting error inside one row, is a per-row error with its line (and, for the
// former, the fields it has, so the key can be read); the parser resynchronises and the rest go on.
// A row with the wrong column count stands alone (`standalone`) unless it looks like rows run
// together or the file ends inside it (truncated): those may hide other records. A quote still open at the end (a truncated file) means the
// feed cannot be read whole: FeedReadError. Before any row the file itself is judged (csv-header.ts):
// a file that starts as HTML, XML or JSON, or a header without a column the mapping reads
// (`columns`), is refused whole (FeedReadError.refused: the run ends rejected). A quote that runs
// on past its line is named by the line it opened on, and every line it swallowed is an error of
// its own (with csv-parse's skip_records_with_error, "the parser has no indication to know if a
// record delimiter is one or if it is inside a quoted field": csv.js.org/parse/options/skip_records_with_error).
// csv-parse is the rule; a fast path (csv-scan.ts, several times faster) reads the well-formed rows
// and hands over to csv-parse at the first row it is not sure of (test/feeds/csv-fast-path.test.ts).
import { parse, type CsvError } from 'csv-parse';
import { hash } from 'node:crypto';
import { once } from 'node:events';
import { FeedReadError, RecordParseError } from '../../errors.js';
import { CsvScanner, fastPathReads, MAX_HELD, type Handover } from './csv-scan.js';
import { iconv } from '../iconv.js';
import { itemsOf, type BatchedItems } from '../item-batches.js';
import { CsvRecord, RowShape, rowText } from './csv-record.js';
import type { ColumnNeed, FeedItem } from '../types.js';
import { checkColumns, refuseNotCsv } from './csv-header.js';

export interface CsvOptions {
  label: string;
  delimiter: string;
  quote: string;
  encoding: 'utf8' | 'latin1' | 'windows-1252';
  /** most bytes (characters, decoded from another encoding) of one row: a longer one ends the read with a FeedReadError naming its line */
  maxRecordBytes?: number;
  /** most columns of a row: more end the read with a FeedReadError naming its line */
  maxColumns?: number;
  /** told the header (trimmed, as the records' data are keyed) once it is read, before any record */
  onHeader?: (header: readonly string[]) => void;
  /** the columns the mapping reads (mapping/columns-needed.ts): a header without one refuses the file */
  columns?: readonly ColumnNeed[];
}

/**
 * `fastPath: false`: csv-parse reads every row, the rule the fast path is tested against.
 * `lazy: true`: a record of the joined text form comes as a CsvRecord, its data built when asked
 * for (cheaper for records never mapped, dearer for records mapped), the same items as the plain
 * records built as they are read (test/feeds/csv-fast-path.test.ts).
 */
export function readCsv(
  bytes: AsyncIterable<Buffer>,
  opts: CsvOptions,
  how: { fastPath?: boolean; lazy?: boolean } = {},
): BatchedItems<FeedItem> {
  return itemsOf(readCsvBatches(bytes, opts, how.fastPath ?? true, how.lazy ?? false));
}

/**
 * Rows are read by the fast path (csv-scan.ts) while they are well formed, by csv-parse from the first
 * one that is not (or from the start: `fastPath: false`, the reference the fast path is tested against).
 * Both hand their rows to the one `CsvRows`.
 */
async function* readCsvBatches(
  bytes: AsyncIterable<Buffer>,
  opts: CsvOptions,
  fastPath: boolean,
  lazy: boolean,
): AsyncIterable<FeedItem[]> {
  const file = opts.label;
  const rows = csvRows(opts, lazy);
  const scanner =
    fastPath && fastPathReads(opts.delimiter, opts.quote)
      ? new CsvScanner(opts.delimiter, opts.quote, rows.row)
      : undefined;
  let parser: CsvParser | undefined = scanner ? undefined : csvParser(opts, rows, 0);
  // csv-parse reads on from where the fast path stopped, a piece at a time as the chunks came
  async function* handOver(to: Handover | undefined): AsyncIterable<FeedItem[]> {
    if (!to) return;
    parser = csvParser(opts, rows, to.emptyLinesOffset);
    if (to.lead) await write(parser, to.lead);
    for (const piece of to.rest) {
      yield taken();
      await write(parser, piece);
    }
  }
  // the rows read so far, or the error that ends the file (csv-parse stops at it)
  const taken = () => {
    if (parser?.failed) throw asFatal(parser.failed, file);
    return rows.take();
  };

  const input = opts.encoding === 'utf8' ? bytes : decode(bytes, opts.encoding);
  let endsInLineBreak = true;
  // the file judged by its first line (or 512 characters) before a row is handed on (csv-header.ts):
  // no row is complete before its line ends, so the chunks go on to the parser meanwhile
  let judged = false;
  for await (const chunk of input) {
    if (!judged) judged = judgeStart(rows, chunk, file);
    if (chunk.length) endsInLineBreak = endsInBreak(chunk);
    if (parser) await write(parser, chunk);
    else if (scanner) yield* handOver(scanner.push(chunk));
    yield taken();
  }
  if (!judged) judgeStart(rows, undefined, file);
  if (scanner && !parser) {
    yield* handOver(scanner.drain());
    yield taken();
  }
  // The rows read at the end stay in `rows` (the last may be marked cut short); rows csv-parse reads
  // before its end, when the fast path hands over now, do not.
  if (scanner && !parser) {
    yield* handOver(scanner.end());
    if (parser) yield taken();
  }
  if (parser) await parser.finish();
  yield* rows.end(endsInLineBreak, parser?.failed && asFatal(parser.failed, file));
}

const CSV_LIMIT_DEFAULTS = { maxRecordBytes: 1 << 20, maxColumns: 10_000 } as const;

function csvRows(opts: CsvOptions, lazy: boolean): CsvRows {
  const limits = {
    maxColumns: opts.maxColumns ?? CSV_LIMIT_DEFAULTS.maxColumns,
    maxRecordBytes: opts.maxRecordBytes ?? CSV_LIMIT_DEFAULTS.maxRecordBytes,
  };
  return new CsvRows(opts.label, limits, opts.onHeader, lazy, opts.columns, opts.delimiter);
}

/**
 * Gathers the file's first line (or 512 characters) in `rows.start` and, once it has it (or the file
 * ended: `chunk` undefined), judges the file by it (csv-header.ts): true when judged.
 */
function judgeStart(rows: CsvRows, chunk: Buffer | string | undefined, file: string): boolean {
  if (chunk !== undefined)
    rows.start += typeof chunk === 'string' ? chunk.slice(0, 512) : chunk.toString('utf8', 0, 512);
  if (chunk !== undefined && rows.start.length < 512 && !/[\r\n]/.test(rows.start.replace(/^[\s\uFEFF]+/, '')))
    return false;
  refuseNotCsv(rows.start, file);
  return true;
}

/** Whether a (non-empty) chunk ends in \n or \r. */
function endsInBreak(chunk: Buffer | string): boolean {
  const last = typeof chunk === 'string' ? chunk.charCodeAt(chunk.length - 1) : chunk[chunk.length - 1];
  return last === 0x0a || last === 0x0d;
}

/** csv-parse with the reader's options, handing its rows and errors to `rows`; `emptyLinesOffset`: see Handover */
function csvParser(opts: CsvOptions, rows: CsvRows, emptyLinesOffset: number) {
  const parser = parse({
    bom: true,
    // csv-parse counts a row's characters; past the cap it reports CSV_MAX_RECORD_SIZE through on_skip
    // and leaves the rest of its chunk unread: on_skip throws, which ends the parse with that error
    max_record_size: opts.maxRecordBytes ?? CSV_LIMIT_DEFAULTS.maxRecordBytes,
    delimiter: opts.delimiter,
    quote: opts.quote,
    relax_quotes: false,
    relax_column_count: true,
    // every line ending, mixed as they come: a file whose rows end in \n and then in a bare \r
    // (a feed pasted together) must not read as one long row
    record_delimiter: ['\r\n', '\n', '\r'],
    skip_empty_lines: true,
    skip_records_with_error: true,
    on_record: (fields: string[], info) => {
      rows.row(fields, info.lines, info.empty_lines - emptyLinesOffset);
      return null;
    },
    on_skip: (err: CsvError | undefined) => {
      if (err?.code === 'CSV_MAX_RECORD_SIZE') throw rows.tooLong(undefined, err);
      if (err) rows.skip(err);
      return undefined;
    },
  });
  const state: { failed?: Error } = {};
  parser.on('error', (err) => (state.failed = err));
  // Nothing is pushed to the readable side (on_record returns null); keep it flowing anyway.
  parser.resume();
  return {
    get failed() {
      return state.failed;
    },
    write: (chunk: Buffer | string) => parser.write(chunk),
    once: (event: 'drain') => once(parser, event),
    finish: async () => {
      parser.end();
      await new Promise<void>((resolve) => {
        if (parser.writableFinished) resolve();
        else {
          parser.once('finish', resolve);
          parser.once('error', () => resolve());
        }
      });
    },
  };
}

type CsvParser = ReturnType<typeof csvParser>;

async function write(parser: CsvParser, chunk: Buffer | string): Promise<void> {
  if (!parser.write(chunk)) await parser.once('drain');
}

/** The rows of one file, from the fast path or csv-parse: header, records, per-row errors, the line each starts on. */
class CsvRows {
  private pending: FeedItem[] = [];
  /** the header's: records' data, and its identity, the start of every row's text (rowText) */
  private shape: RowShape | undefined;
  private headerId = '';
  private index = 0;
  // the line a record starts on: csv-parse reports the line it ends on, and counts skipped empty lines
  private lastEnd = 0;
  private lastEmpty = 0;
  // csv-parse counts a CRLF inside a quoted field as two lines; `drift` takes the extra ones back out
  private drift = 0;
  private fatal: FeedReadError | undefined;
  /** the file's first characters (the header check's message quotes its first line) */
  start = '';

  /**
   * Rows longer than the fast path holds reach csv-parse, which enforces maxRecordBytes; a smaller
   * cap is checked here, on the rows the fast path read whole.
   */
  private readonly checkSize: boolean;

  constructor(
    private readonly file: string,
    private readonly caps: { maxColumns: number; maxRecordBytes: number },
    private readonly onHeader: ((header: readonly string[]) => void) | undefined,
    /** records of the joined text form as CsvRecords, their data built when asked for */
    private readonly lazy: boolean,
    private readonly columns: readonly ColumnNeed[] | undefined,
    /** source.delimiter: a header of one column is checked for another separator (csv-header.ts) */
    private readonly delimiter: string,
  ) {
    this.checkSize = caps.maxRecordBytes < MAX_HELD;
  }

  /** a row read, with csv-parse's `lines` and `empty_lines` where it ends */
  readonly row = (fields: string[], lines: number, emptyLines: number, noUnit = false): void => {
    const { file } = this;
    const line = this.startLine(lines, emptyLines, fields);
    if (fields.length > this.caps.maxColumns) {
      throw new FeedReadError(
        `line ${line} has ${fields.length} columns, more than source.maxColumns (${this.caps.maxColumns}): the file is not the feed's CSV, or raise the cap`,
        { file, line },
        false,
      );
    }
    if (this.checkSize) {
      let size = 0;
      for (const f of fields) size += f.length;
      if (size > this.caps.maxRecordBytes) throw this.tooLong(line);
    }
    const shape = this.shape;
    if (!shape) {
      const header = fields.map((h) => h.trim());
      checkHeader(header, file);
      if (this.columns) checkColumns(header, this.columns, file, this.start, this.delimiter);
      this.shape = new RowShape(header);
      this.headerId = headerIdentity(header);
      this.onHeader?.(header);
      return;
    }
    const { header } = shape;
    const position = { file, line, index: this.index++ };
    if (fields.length !== header.length) {
      // The fields read still name the key, so its listing is kept. The row stands alone when a
      // line ending closed it and it is not rows run together (those have about twice the
      // columns); the last row of a file that ends mid-row was cut short (see the end).
      const error = new RecordParseError(`expected ${header.length} columns as in the header, got ${fields.length}`, {
        file,
        line,
        record: position.index,
      });
      const data = shape.build(header.map((_, i) => fields[i] ?? ''));
      const standalone = fields.length < 2 * header.length - 1;
      this.pending.push({ kind: 'error', position, error, data, ...(standalone && { standalone }) });
      return;
    }
    const text = rowText(this.headerId, fields, noUnit);
    // the joined form gives the fields back: the data waits until asked for (csv-record.ts)
    this.pending.push(
      this.lazy && text.charCodeAt(0) === 0x63 /* c */
        ? new CsvRecord(position, text, shape)
        : { kind: 'record', position, data: shape.build(fields), text },
    );
  };

  /** a row csv-parse could not read */
  skip(err: CsvError): void {
    const { file } = this;
    if (err.code === 'CSV_QUOTE_NOT_CLOSED') {
      const end = typeof err.lines === 'number' ? err.lines - this.drift : undefined;
      this.fatal ??= new FeedReadError(
        `a quote opened in the row starting on line ${this.lastEnd + 1} is never closed${end !== undefined && end > this.lastEnd + 1 ? `, so lines ${this.lastEnd + 1}–${end} (the file's end) could not be read` : ''}: the file is truncated or misquoted there`,
        { file, line: this.lastEnd + 1 },
        false,
      );
      return;
    }
    const line = this.lastEnd + 1;
    const end = typeof err.lines === 'number' ? Math.max(line, err.lines - this.drift) : line;
    this.lastEnd = end;
    const error = (at: number, message: string) => {
      const position = { file, line: at, index: this.index++ };
      this.pending.push({
        kind: 'error',
        position,
        error: new RecordParseError(message, { file, line: at, record: position.index }),
      });
    };
    if (err.code !== 'CSV_INVALID_CLOSING_QUOTE') return error(line, err.message.replace(/^Invalid [^:]*: /, ''));
    const got = /got ("[^"]*"|\S+)/.exec(err.message)?.[1] ?? 'a character';
    const fix = 'a " inside a field is written ""';
    if (end === line)
      return error(line, `a quote in this row is followed by ${got}, not by a delimiter or the line's end: ${fix}`);
    // the quote ran on over the next lines: each of them is said, none is lost without a word
    error(
      line,
      `a quote opened on this line is not closed on it: the field runs on to line ${end}, where ${got} follows a quote; lines ${line}–${end} could not be read; ${fix}`,
    );
    for (let at = line + 1; at <= end; at++)
      error(at, `read inside the quote opened on line ${line}: this line could not be read`);
  }

  /** a row (by default the one after the last read) is longer than the cap: the read ends, naming its line */
  tooLong(line = this.lastEnd + 1, err?: CsvError): FeedReadError {
    return new FeedReadError(
      `the row starting on line ${line} is longer than source.maxRecordBytes (${this.caps.maxRecordBytes} bytes): a quote never closed, or rows without line endings`,
      { file: this.file, line },
      false,
      err && { cause: err },
    );
  }

  take(): FeedItem[] {
    const out = this.pending;
    this.pending = [];
    return out;
  }

  /** the items still held, then the error that ends the file, if any (`failed`: csv-parse's, first) */
  *end(endsInLineBreak: boolean, failed: FeedReadError | undefined): Iterable<FeedItem[]> {
    const { file } = this;
    // A file that stops mid-row was cut (a truncated download): its last row is not a row of the feed.
    const lastItem = this.pending.at(-1);
    if (!endsInLineBreak && lastItem?.kind === 'error') {
      lastItem.error = new RecordParseError(
        `${lastItem.error.message.replace(/^.*?: /, '')}: the file ends in this row (truncated?)`,
        lastItem.error.place,
      );
      delete lastItem.standalone;
    }
    if (this.pending.length) yield this.take();
    if (failed) throw failed;
    if (this.fatal) throw this.fatal;
    if (!this.shape) throw new FeedReadError('the file is empty: no header row', { file }, false);
  }

  private startLine(lines: number, emptyLines: number, fields: string[]): number {
    const start = this.lastEnd + 1 + (emptyLines - this.lastEmpty);
    if (lines - this.drift > start) {
      for (const f of fields) if (f.includes('\r\n')) this.drift += f.split('\r\n').length - 1;
    }
    this.lastEnd = lines - this.drift;
    this.lastEmpty = emptyLines;
    return start;
  }
}

/** Two columns of one name would make one silently overwrite the other: the whole file is refused. */
function checkHeader(header: string[], file: string): void {
  const seen = new Map<string, number>();
  header.forEach((name, i) => {
    const first = seen.get(name);
    if (first !== undefined) {
      throw new FeedReadError(
        `the header names column ${JSON.stringify(name)} twice (columns ${first + 1} and ${i + 1}); rename one so each column has its own name`,
        { file, line: 1 },
        false,
      );
    }
    seen.set(name, i);
  });
}

/** The header as the rows' data are built from it (trimmed), as a short string: sha1 of its JSON. */
export function headerIdentity(header: readonly string[]): string {
  return hash('sha1', JSON.stringify(header), 'base64url');
}

function asFatal(err: Error, file: string): FeedReadError {
  if (err instanceof FeedReadError) return err; // ours, thrown from on_record (a duplicate column name)
  const lines: unknown = (err as CsvError).lines;
  const line = typeof lines === 'number' ? lines : undefined;
  return new FeedReadError(`CSV cannot be parsed: ${err.message}`, { file, line }, false, { cause: err });
}

async function* decode(bytes: AsyncIterable<Buffer>, encoding: string): AsyncIterable<string> {
  const decoder = (await iconv()).getDecoder(encoding);
  for await (const chunk of bytes) {
    const s = decoder.write(chunk);
    if (s) yield s;
  }
  const rest = decoder.end();
  if (rest) yield rest;
}
