// CSV feed → records keyed by the header row. Bytes in other encodings are decoded before parsing
// (windows-1252 differs from latin1 in 0x80–0x9F: € and curly quotes). A row with the wrong number
// of columns, or a quoting error inside one row, is a per-row error with its line (and, for the
// former, the fields it has, so the key can be read); the parser resynchronises and the rest go on.
// A row with the wrong column count stands alone (`standalone`) unless it looks like rows run
// together or the file ends inside it (truncated): those may hide other records. A quote still open at the end (a truncated file) means the
// feed cannot be read whole: FeedReadError.
import { parse, type CsvError, type Info } from 'csv-parse';
import iconv from 'iconv-lite';
import { once } from 'node:events';
import { FeedReadError, RecordParseError } from '../errors.js';
import { itemsOf } from './item-batches.js';
import type { FeedItem } from './types.js';

export interface CsvOptions {
  label: string;
  delimiter: string;
  quote: string;
  encoding: 'utf8' | 'latin1' | 'windows-1252';
}

export function readCsv(bytes: AsyncIterable<Buffer>, opts: CsvOptions): AsyncIterable<FeedItem> {
  return itemsOf(readCsvBatches(bytes, opts));
}

async function* readCsvBatches(bytes: AsyncIterable<Buffer>, opts: CsvOptions): AsyncIterable<FeedItem[]> {
  const file = opts.label;
  let pending: FeedItem[] = [];
  let header: string[] | undefined;
  let build: (fields: string[]) => Record<string, string> = () => ({});
  let index = 0;
  // the line a record starts on: csv-parse reports the line it ends on, and counts skipped empty lines
  let lastEnd = 0;
  let lastEmpty = 0;
  let fatal: FeedReadError | undefined;

  // csv-parse counts a CRLF inside a quoted field as two lines; `drift` takes the extra ones back out
  let drift = 0;

  const startLine = (info: Info, fields: string[]) => {
    const start = lastEnd + 1 + (info.empty_lines - lastEmpty);
    if (info.lines - drift > start) {
      for (const f of fields) if (f.includes('\r\n')) drift += f.split('\r\n').length - 1;
    }
    lastEnd = info.lines - drift;
    lastEmpty = info.empty_lines;
    return start;
  };

  const parser = parse({
    bom: true,
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
      const line = startLine(info, fields);
      if (!header) {
        header = fields.map((h) => h.trim());
        checkHeader(header, file);
        build = recordBuilder(header);
        return null;
      }
      const position = { file, line, index: index++ };
      if (fields.length !== header.length) {
        // The fields read still name the key, so its listing is kept. The row stands alone when a
        // line ending closed it and it is not rows run together (those have about twice the
        // columns); the last row of a file that ends mid-row was cut short (see the end).
        const error = new RecordParseError(`expected ${header.length} columns as in the header, got ${fields.length}`, { file, line, record: position.index });
        const data = build(header.map((_, i) => fields[i] ?? ''));
        const standalone = fields.length < 2 * header.length - 1;
        pending.push({ kind: 'error', position, error, data, ...(standalone && { standalone }) });
        return null;
      }
      pending.push({ kind: 'record', position, data: build(fields) });
      return null;
    },
    on_skip: (err: CsvError | undefined) => {
      if (!err) return undefined;
      if (err.code === 'CSV_QUOTE_NOT_CLOSED') {
        fatal ??= new FeedReadError(`a quoted field opened on or after line ${lastEnd + 1} is never closed: the file is truncated or misquoted`, { file, line: lastEnd + 1 }, false);
        return undefined;
      }
      const line = lastEnd + 1;
      lastEnd = typeof err.lines === 'number' ? err.lines - drift : line;
      const position = { file, line, index: index++ };
      pending.push({ kind: 'error', position, error: new RecordParseError(err.message.replace(/^Invalid [^:]*: /, ''), { file, line, record: position.index }) });
      return undefined;
    },
  });
  let parseError: Error | undefined;
  parser.on('error', (err) => (parseError = err));
  // Nothing is pushed to the readable side (on_record returns null); keep it flowing anyway.
  parser.resume();

  const input = opts.encoding === 'utf8' ? bytes : decode(bytes, opts.encoding);
  let endsInLineBreak = true;
  for await (const chunk of input) {
    if (chunk.length) {
      const last = typeof chunk === 'string' ? chunk.charCodeAt(chunk.length - 1) : chunk[chunk.length - 1];
      endsInLineBreak = last === 0x0a || last === 0x0d;
    }
    if (!parser.write(chunk)) await once(parser, 'drain');
    if (parseError) throw asFatal(parseError, file);
    if (pending.length) {
      const out = pending;
      pending = [];
      yield out;
    }
  }
  parser.end();
  await new Promise<void>((resolve) => {
    if (parser.writableFinished) resolve();
    else {
      parser.once('finish', resolve);
      parser.once('error', () => resolve());
    }
  });
  // A file that stops mid-row was cut (a truncated download): its last row is not a row of the feed.
  const lastItem = pending.at(-1);
  if (!endsInLineBreak && lastItem?.kind === 'error') {
    lastItem.error = new RecordParseError(`${lastItem.error.message.replace(/^.*?: /, '')}: the file ends in this row (truncated?)`, lastItem.error.place);
    delete lastItem.standalone;
  }
  if (pending.length) yield pending;
  if (parseError) throw asFatal(parseError, file);
  if (fatal) throw fatal;
  if (!header) throw new FeedReadError('the file is empty: no header row', { file }, false);
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

/**
 * fields → record object. Generated as one object literal from the header, so every record of the
 * feed shares one hidden class with in-object properties, and the mapping's property reads stay
 * monomorphic (a record built key by key ends up a dictionary: several times slower to read).
 * Keys are JSON-quoted; a header naming __proto__ takes the plain loop (a literal would set the prototype).
 */
export function recordBuilder(header: string[]): (fields: string[]) => Record<string, string> {
  if (header.includes('__proto__')) {
    return (fields) => {
      const data: Record<string, string> = Object.create(null);
      for (let i = 0; i < header.length; i++) data[header[i]!] = fields[i]!;
      return data;
    };
  }
  const body = header.map((h, i) => `${JSON.stringify(h)}: f[${i}]`).join(', ');
  return new Function('f', `return { ${body} };`) as (fields: string[]) => Record<string, string>;
}

function asFatal(err: Error, file: string): FeedReadError {
  if (err instanceof FeedReadError) return err; // ours, thrown from on_record (a duplicate column name)
  const lines: unknown = (err as CsvError).lines;
  const line = typeof lines === 'number' ? lines : undefined;
  return new FeedReadError(`CSV cannot be parsed: ${err.message}`, { file, line }, false, { cause: err });
}

async function* decode(bytes: AsyncIterable<Buffer>, encoding: string): AsyncIterable<string> {
  const decoder = iconv.getDecoder(encoding);
  for await (const chunk of bytes) {
    const s = decoder.write(chunk);
    if (s) yield s;
  }
  const rest = decoder.end();
  if (rest) yield rest;
}
