// XML feed → one record per repeating element (e.g. Listings.Listing), memory bounded by the largest
// record. The declared encoding (<?xml ... encoding="ISO-8859-1"?>, windows-1252, UTF-16 by BOM) is
// honoured. Each record is checked by XMLValidator and parsed by fast-xml-parser with:
//   - attributes kept under "@_name" and element text beside them under "#text";
//   - every value a string (parseTagValue off): MLS numbers and ZIP codes keep their leading zeros;
//     the mapping decides what is a number;
//   - processEntities off: no DOCTYPE entity is ever expanded (entity-expansion attacks); the five
//     predefined entities and numeric character references are decoded here, any other `&name;`
//     is left as written.
import { XMLParser, XMLValidator } from 'fast-xml-parser';
import iconv from 'iconv-lite';
import { StringDecoder } from 'node:string_decoder';
import { FeedReadError, RecordParseError } from '../errors.js';
import { itemsOf } from './item-batches.js';
import type { FeedItem } from './types.js';
import { createXmlScanner } from './xml-scanner.js';

export interface XmlOptions {
  label: string;
  recordPath: string;
  /** overrides the encoding the document declares */
  encoding?: string;
}

const PREDEFINED: Record<string, string> = { amp: '&', lt: '<', gt: '>', quot: '"', apos: "'" };
const ENTITY = /&(?:#x([0-9a-fA-F]+)|#([0-9]+)|(amp|lt|gt|quot|apos));/g;

export function decodeXmlText(value: string): string {
  if (value.indexOf('&') < 0) return value;
  return value.replace(ENTITY, (m, hex: string | undefined, dec: string | undefined, name: string | undefined) => {
    if (name) return PREDEFINED[name]!;
    const code = hex ? parseInt(hex, 16) : Number(dec);
    return code > 0 && code <= 0x10ffff ? String.fromCodePoint(code) : m;
  });
}

export function createRecordParser(): XMLParser {
  return new XMLParser({
    ignoreAttributes: false,
    attributeNamePrefix: '@_',
    textNodeName: '#text',
    parseTagValue: false,
    parseAttributeValue: false,
    processEntities: false,
    htmlEntities: false,
    trimValues: true,
    ignoreDeclaration: true,
    ignorePiTags: true,
    tagValueProcessor: (_name: string, value: string) => decodeXmlText(value),
    attributeValueProcessor: (_name: string, value: string) => decodeXmlText(value),
  });
}

export function readXml(bytes: AsyncIterable<Buffer>, opts: XmlOptions): AsyncIterable<FeedItem> {
  return itemsOf(readXmlBatches(bytes, opts));
}

async function* readXmlBatches(bytes: AsyncIterable<Buffer>, opts: XmlOptions): AsyncIterable<FeedItem[]> {
  const file = opts.label;
  const recordTag = opts.recordPath.split('.').pop()!;
  const scanner = createXmlScanner({ recordPath: opts.recordPath, label: file });
  const parser = createRecordParser();
  let index = 0;

  const toItem = (snippet: string): FeedItem => {
    const position = { file, index: index++ };
    const valid = XMLValidator.validate(snippet);
    if (valid !== true) {
      const { msg, line } = valid.err;
      return { kind: 'error', position, error: new RecordParseError(`malformed <${recordTag}> record: ${msg}${line > 1 ? ` (line ${line} of the record)` : ''}`, { file, record: position.index }) };
    }
    const parsed = parser.parse(snippet) as Record<string, unknown>;
    const data = parsed[recordTag];
    return { kind: 'record', position, data: data !== null && typeof data === 'object' ? (data as Record<string, unknown>) : { '#text': data } };
  };

  for await (const text of decodeDeclared(bytes, file, opts.encoding)) {
    const records = scanner.push(text);
    if (records.length) yield records.map(toItem);
  }
  const last = scanner.end();
  if (last.length) yield last.map(toItem);
}

/** Decode bytes to text in the document's encoding: BOM, then the XML declaration, else UTF-8. */
async function* decodeDeclared(bytes: AsyncIterable<Buffer>, file: string, forced?: string): AsyncIterable<string> {
  let head: Buffer = Buffer.alloc(0);
  let decode: ((b: Buffer) => string) | undefined;
  let finish: () => string = () => '';

  const choose = (encoding: string) => {
    if (/^utf-?8$/i.test(encoding)) {
      const d = new StringDecoder('utf8');
      decode = (b) => d.write(b);
      finish = () => d.end();
      return;
    }
    if (!iconv.encodingExists(encoding)) throw new FeedReadError(`the document's encoding ${JSON.stringify(encoding)} is not supported`, { file }, false);
    const d = iconv.getDecoder(encoding);
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
    choose(forced ?? sniffEncoding(head));
    const s = decode!(head);
    if (s) yield s.charCodeAt(0) === 0xfeff ? s.slice(1) : s;
  }
  if (!decode && head.length) {
    choose(forced ?? sniffEncoding(head));
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
