// Finds the repeating record elements of an XML document in a stream of text, so a 1 GB feed is
// parsed one record at a time and memory holds one record plus one chunk. It tracks the element
// stack (to match `Listings.Listing` and to see a document cut short) and skips comments, CDATA,
// processing instructions and the DOCTYPE, so a `<Listing` inside them is not taken for a record.
// Well-formedness inside a record is not its business: the record's parser and validator judge that.
// A record element cannot contain an element of its own name: a second open tag ends the first
// record (as broken), which keeps one bad close tag from swallowing the rest of the file.
import { FeedReadError } from '../errors.js';

export interface XmlScanner {
  /** feed the next piece of text; returns the records completed by it (their full element text) */
  push(text: string): string[];
  /** the document is over: throws FeedReadError when it ended before the root element closed */
  end(): string[];
}

export interface ScannerOptions {
  /** `Listings.Listing`: the last segment is the record element, the earlier ones its ancestors */
  recordPath: string;
  /** name for messages */
  label: string;
  /** a record larger than this is an error of the document (default 32M characters) */
  maxRecordChars?: number;
}

const GT = 62;
const BANG = 33;
const QMARK = 63;
const SLASH = 47;

export function createXmlScanner(opts: ScannerOptions): XmlScanner {
  const segments = opts.recordPath.split('.');
  const recordTag = segments[segments.length - 1]!;
  const ancestors = segments.slice(0, -1);
  const maxRecord = opts.maxRecordChars ?? 32 * 1024 * 1024;
  const place = { file: opts.label };

  let buf = '';
  let pos = 0;
  const stack: string[] = [];
  let recordStart = -1;
  let recordDepth = 0;
  let rootSeen = false;
  let out: string[] = [];

  const ancestorsMatch = () => {
    if (ancestors.length > stack.length) return false;
    const off = stack.length - ancestors.length;
    for (let i = 0; i < ancestors.length; i++) if (stack[off + i] !== ancestors[i]) return false;
    return true;
  };

  const open = (name: string, lt: number, selfClosing: boolean) => {
    rootSeen = true;
    if (name === recordTag) {
      if (recordStart >= 0) {
        // an unclosed record: hand it on as it is (its parser reports it) and start the new one
        out.push(buf.slice(recordStart, lt));
        stack.length = recordDepth;
        recordStart = -1;
      }
      if (ancestorsMatch()) {
        if (selfClosing) return void out.push(buf.slice(lt, pos));
        recordStart = lt;
        recordDepth = stack.length;
      }
    }
    if (!selfClosing) stack.push(name);
  };

  const close = (name: string, lt: number) => {
    let i = stack.length - 1;
    while (i >= 0 && stack[i] !== name) i--;
    // a close tag that closes nothing: inside a record its parser reports it; outside, ignore it
    if (i < 0) return;
    if (recordStart >= 0 && i < recordDepth) {
      // the record's own close tag is missing; it ends here, broken
      out.push(buf.slice(recordStart, lt));
      recordStart = -1;
    }
    stack.length = i;
    if (recordStart >= 0 && stack.length <= recordDepth) {
      out.push(buf.slice(recordStart, pos));
      recordStart = -1;
    }
  };

  /** Scan what is buffered; stops at a construct that is not complete yet. */
  const scan = () => {
    for (;;) {
      const lt = buf.indexOf('<', pos);
      if (lt < 0) return void (pos = buf.length);
      if (lt + 1 >= buf.length) return void (pos = lt);
      const c = buf.charCodeAt(lt + 1);
      let end: number;
      if (c === BANG) {
        if (buf.length - lt < 9) return void (pos = lt);
        if (buf.startsWith('<!--', lt)) {
          end = buf.indexOf('-->', lt + 4);
          if (end < 0) return void (pos = lt);
          pos = end + 3;
        } else if (buf.startsWith('<![CDATA[', lt)) {
          end = buf.indexOf(']]>', lt + 9);
          if (end < 0) return void (pos = lt);
          pos = end + 3;
        } else {
          end = declarationEnd(buf, lt);
          if (end < 0) return void (pos = lt);
          pos = end + 1;
        }
      } else if (c === QMARK) {
        end = buf.indexOf('?>', lt + 2);
        if (end < 0) return void (pos = lt);
        pos = end + 2;
      } else if (c === SLASH) {
        end = buf.indexOf('>', lt + 2);
        if (end < 0) return void (pos = lt);
        pos = end + 1;
        close(buf.slice(lt + 2, end).trim(), lt);
      } else {
        end = tagEnd(buf, lt + 1);
        if (end < 0) return void (pos = lt);
        pos = end + 1;
        open(tagName(buf, lt + 1, end), lt, buf.charCodeAt(end - 1) === SLASH);
      }
    }
  };

  const compact = () => {
    const keep = recordStart >= 0 ? recordStart : pos;
    if (keep > 0) {
      buf = buf.slice(keep);
      pos -= keep;
      if (recordStart >= 0) recordStart = 0;
    }
    if (recordStart >= 0 && buf.length > maxRecord) {
      throw new FeedReadError(`a <${recordTag}> record is longer than ${maxRecord} characters: the document is malformed`, place, false);
    }
  };

  return {
    push(text) {
      buf += text;
      scan();
      compact();
      const done = out;
      out = [];
      return done;
    },
    end() {
      const done = out;
      out = [];
      if (!rootSeen) throw new FeedReadError('the document holds no XML elements', place, false);
      if (stack.length || buf.slice(pos).includes('<')) {
        const open = stack.length ? `</${stack[0]}>` : 'its last tag';
        throw new FeedReadError(`the document ends before ${open} closes: it is truncated`, { ...place, record: recordStart >= 0 ? 'last' : undefined }, false);
      }
      return done;
    },
  };
}

/** Index of the `>` ending a start tag, skipping `>` inside quoted attribute values; -1 if not buffered yet. */
function tagEnd(buf: string, from: number): number {
  const gt = buf.indexOf('>', from);
  if (gt < 0) return -1;
  const dq = buf.indexOf('"', from);
  const sq = buf.indexOf("'", from);
  if ((dq < 0 || dq > gt) && (sq < 0 || sq > gt)) return gt;
  let q = 0;
  for (let j = from; j < buf.length; j++) {
    const ch = buf.charCodeAt(j);
    if (q) {
      if (ch === q) q = 0;
    } else if (ch === 34 || ch === 39) q = ch;
    else if (ch === GT) return j;
  }
  return -1;
}

function tagName(buf: string, from: number, end: number): string {
  let j = from;
  while (j < end) {
    const ch = buf.charCodeAt(j);
    if (ch <= 32 || ch === SLASH || ch === GT) break;
    j++;
  }
  return buf.slice(from, j);
}

/** End of `<!DOCTYPE ... [ internal subset ] >`. */
function declarationEnd(buf: string, lt: number): number {
  const gt = buf.indexOf('>', lt);
  const bracket = buf.indexOf('[', lt);
  if (bracket < 0 || (gt >= 0 && gt < bracket)) return gt;
  const close = buf.indexOf(']', bracket);
  return close < 0 ? -1 : buf.indexOf('>', close);
}

