// An XML or MITS document judged by what it is when its recordPath matched nothing: a document whose
// text never opens the path's first element (`Listings` of Listings.Listing) is not the feed (an
// error document, an HTML page, another format), and the read is refused naming its root element
// and the start of its text (FeedReadError.refused: the run ends rejected). A document that opens
// the element and holds no record is an empty feed, left to the sync's guards. Bounded: the first
// HEAD characters are kept, and the element is looked for in each piece of text as it passes.
import { FeedReadError, printable } from '../../errors.js';

const HEAD = 4096;
const SAID = 160;

export interface RecordPathCheck {
  /** each piece of the decoded text, in order */
  text(piece: string): void;
  /** the read ended (`err`: the scanner's error) with `records` items: throws the refusal when the path matched nothing and the document is not the feed */
  end(records: number, err?: unknown): void;
}

export function recordPathCheck(recordPath: string, file: string): RecordPathCheck {
  const [first, second] = recordPath.split('.') as [string, string | undefined];
  const opens = new RegExp(`<${escape(first)}[\\s/>]`);
  let head = '';
  let tail = '';
  let seen = false;
  const children = second === undefined ? undefined : childCount(first, second);
  return {
    text(piece) {
      const before = head.length;
      if (head.length < HEAD) head += piece.slice(0, HEAD - head.length);
      children?.text(piece, head, before);
      if (seen) return;
      const text = tail + piece;
      seen = opens.test(text);
      tail = text.slice(-(first.length + 1));
    },
    end(records, err) {
      if (records > 0 || seen) {
        if (err) throw err;
        const other = records === 0 ? children?.other() : undefined;
        if (other) throw new FeedReadError(elsewhere(recordPath, first, other), { file }, false, { refused: true });
        return;
      }
      throw new FeedReadError(refusal(recordPath, head), { file }, false, {
        refused: true,
        ...(err !== undefined && { cause: err }),
      });
    },
  };
}

/** The element is the path's second, with or without a namespace prefix. */
const isSecond = (name: string, second: string) => name === second || name.split(':').pop() === second;

const escape = (name: string) => name.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');

/**
 * The element the path's first element opens with (its first child, seen in the document's first
 * HEAD characters), and how often it opens in the whole document. A recordPath naming the records
 * wrongly (Listings.Property where they are <Listing>) matched nothing in a document that opens
 * its first element, and was read as an empty feed. Once only is a header of an empty feed.
 */
function childCount(first: string, second: string) {
  let child: string | undefined;
  let done = false;
  let count = 0;
  let tail = '';
  let opens: RegExp | undefined;
  const counted = (text: string) => text.match(opens!)?.length ?? 0;
  return {
    /** `head` the document's first characters with this piece's; `before` how many of them came before it */
    text(piece: string, head: string, before: number): void {
      if (!done) {
        const found = new RegExp(
          `<${escape(first)}(?:\\s[^>]*)?>[^<]*(?:<(?:!--[\\s\\S]*?-->|\\?[\\s\\S]*?\\?>)[^<]*)*<([A-Za-z_][\\w.:-]*)[\\s/>]`,
        ).exec(head);
        if (!found) {
          // not in the head by its end: none looked for any further (bounded)
          done = head.length >= HEAD;
          return;
        }
        done = true;
        child = found[1]!;
        // the records' own element: nothing to count (a feed read as it should be pays for no count)
        if (isSecond(child, second)) return;
        opens = new RegExp(`<${escape(child)}[\\s/>]`, 'g');
        // the text before this piece is all in the head: the head was still filling
        const text = head.slice(0, before) + piece;
        count = counted(text);
        tail = text.slice(-(child.length + 1));
        return;
      }
      if (!opens) return;
      const text = tail + piece;
      count += counted(text);
      tail = text.slice(-(child!.length + 1));
    },
    /** the element that opens more than once where `second` was expected, if one does */
    other(): { name: string; count: number; second: string } | undefined {
      if (!child || count < 2 || isSecond(child, second)) return undefined;
      return { name: child, count, second };
    },
  };
}

/** "recordPath `Listings.Property` matches no element: `<Listings>` holds 30 `<Listing>` elements, no `<Property>`: set …". */
function elsewhere(recordPath: string, first: string, other: { name: string; count: number; second: string }): string {
  const fix =
    recordPath.split('.').length === 2
      ? `set feeds[].source.recordPath: ${first}.${other.name}`
      : 'check feeds[].source.recordPath';
  return `recordPath \`${recordPath}\` matches no element: \`<${printable(first)}>\` holds ${other.count} \`<${printable(other.name)}>\` elements, no \`<${printable(other.second)}>\`: ${fix}`;
}

/** "recordPath `Listings.Listing` matches no element: the document's root is `<Error>` (its text: AccessDenied Access Denied)". */
function refusal(recordPath: string, head: string): string {
  const body = head.replace(/<\?[\s\S]*?\?>|<!--[\s\S]*?-->|<![^>]*>/g, '');
  const root = /<([A-Za-z_][^\s/>]*)/.exec(body)?.[1];
  const clip = (s: string) => printable(s.length > SAID ? `${s.slice(0, SAID)}…` : s);
  if (!root)
    return `recordPath \`${recordPath}\` matches no element: the file is not XML, it starts \`${clip(head.trimStart().split(/\r?\n/, 1)[0] ?? '')}\``;
  const text = body
    .replace(/<[^>]*>?/g, ' ')
    .replace(/\s+/g, ' ')
    .trim();
  // a root of another name over the path's records (a vendor renamed it): the path to set
  const [, second, ...more] = recordPath.split('.');
  const child = new RegExp(`<${escape(root)}(?:\\s[^>]*)?>[^<]*<([A-Za-z_][\\w.:-]*)[\\s/>]`).exec(body)?.[1];
  if (second !== undefined && more.length === 0 && child !== undefined && isSecond(child, second))
    return `recordPath \`${recordPath}\` matches no element: the document's root is \`<${clip(root)}>\`, which holds \`<${clip(child)}>\` elements: set feeds[].source.recordPath: ${printable(root)}.${printable(second)}`;
  const what = /^html$/i.test(root) ? " (an HTML page: the feed host's error or login page?)" : '';
  return `recordPath \`${recordPath}\` matches no element: the document's root is \`<${clip(root)}>\`${what}${text ? `, its text: ${clip(text)}` : ''}`;
}
