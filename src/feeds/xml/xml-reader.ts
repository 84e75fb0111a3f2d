// XML feed → one record per repeating element (e.g. Listings.Listing), built as the text streams
// through xml-scanner.ts: memory bounded by the largest record, time linear in the document. The
// declared encoding (<?xml ... encoding="ISO-8859-1"?>, windows-1252, UTF-16 by BOM) is honoured.
// A malformed record is a per-record error at its line, carrying what could be read of it (so the
// mapping can still read its key); the records after it are read as usual. A document the
// recordPath matches nothing in, and that never opens the path's first element, is refused
// naming its root element (record-path-check.ts).
import { StringDecoder } from 'node:string_decoder';
import { FeedReadError, RecordParseError } from '../../errors.js';
import { iconv } from '../iconv.js';
import { itemsOf, type BatchedItems } from '../item-batches.js';
import type { FeedItem } from '../types.js';
import { createXmlScanner, type ScannedRecord } from './xml-scanner.js';
import { recordPathCheck } from './record-path-check.js';

export interface XmlOptions {
  label: string;
  recordPath: string;
  /** overrides the encoding the document declares */
  encoding?: string;
}

export function readXml(bytes: AsyncIterable<Buffer>, opts: XmlOptions): BatchedItems<FeedItem> {
  return itemsOf(readXmlBatches(bytes, opts));
}

async function* readXmlBatches(bytes: AsyncIterable<Buffer>, opts: XmlOptions): AsyncIterable<FeedItem[]> {
  const file = opts.label;
  const recordTag = opts.recordPath.split('.').pop()!;
  const scanner = createXmlScanner({ recordPath: opts.recordPath, label: file });
  let index = 0;

  const toItem = (r: ScannedRecord): FeedItem => {
    const position = { file, line: r.line, index: index++ };
    if (r.error === undefined) return { kind: 'record', position, data: r.data };
    const error = new RecordParseError(`malformed <${recordTag}> record: ${r.error}`, {
      file,
      line: r.line,
      record: position.index,
    });
    // the scanner knows where every record it hands on began and ended: no other record is lost with this one
    return { kind: 'error', position, error, data: r.data, standalone: true };
  };

  const check = recordPathCheck(opts.recordPath, file);
  for await (const text of decodeDeclared(bytes, file, opts.encoding)) {
    check.text(text);
    const records = scanner.push(text);
    if (records.length) yield records.map(toItem);
  }
  let last: ScannedRecord[] = [];
  try {
    last = scanner.end();
  } catch (err) {
    check.end(index, err);
  }
  check.end(index + last.length);
  if (last.length) yield last.map(toItem);
}

/** Decode bytes to text in the document's encoding: BOM, then the XML declaration, else UTF-8. */
export async function* decodeDeclared(
  bytes: AsyncIterable<Buffer>,
  file: string,
  forced?: string,
): AsyncIterable<string> {
  let head: Buffer = Buffer.alloc(0);
  let decode: ((b: Buffer) => string) | undefined;
  let finish: () => string = () => '';

  const choose = async (encoding: string) => {
    if (/^utf-?8$/i.test(encoding)) {
      const d = new StringDecoder('utf8');
      decode = (b) => d.write(b);
      finish = () => d.end();
      return;
    }
    const codecs = await iconv();
    if (!codecs.encodingExists(encoding))
      throw new FeedReadError(`the document's encoding ${JSON.stringify(encoding)} is not supported`, { file }, false);
    const d = codecs.getDecoder(encoding);
    decode = (b) => d.write(b);
    finish = () => d.end() ?? '';
  };

  for await (const chunk of bytes) {
    if (decode) {
      const s = decode(chunk);
      if (s) yield s;
      continue;
    }
    head = head.length ? Buffer.concat([head, chunk]) : chunk;
    if (!headComplete(head)) continue;
    await choose(forced ?? sniffEncoding(head));
    const s = decode!(head);
    if (s) yield s.charCodeAt(0) === 0xfeff ? s.slice(1) : s;
  }
  if (!decode && head.length) {
    await choose(forced ?? sniffEncoding(head));
    const s = decode!(head);
    if (s) yield s.charCodeAt(0) === 0xfeff ? s.slice(1) : s;
  }
  const rest = decode ? finish() : '';
  if (rest) yield rest;
}

/** Enough of the start is buffered to tell the encoding: a BOM, or the whole XML declaration, or neither. */
function headComplete(head: Buffer): boolean {
  if (head.length >= 512) return true;
  if (head[0] === 0xef && head.length < 3) return false;
  const start = head.subarray(0, 5).toString('latin1');
  if (start.length < 5) return !'<?xml'.startsWith(start);
  return start !== '<?xml' || head.indexOf('?>') >= 0;
}

function sniffEncoding(head: Buffer): string {
  if (head[0] === 0xef && head[1] === 0xbb && head[2] === 0xbf) return 'utf8';
  if (head[0] === 0xff && head[1] === 0xfe) return 'utf-16le';
  if (head[0] === 0xfe && head[1] === 0xff) return 'utf-16be';
  const decl = /^<\?xml[^>]*?encoding\s*=\s*["']([A-Za-z0-9._-]+)["']/.exec(head.subarray(0, 512).toString('latin1'));
  return decl?.[1] ?? 'utf8';
}
