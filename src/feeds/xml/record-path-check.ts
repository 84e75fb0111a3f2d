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
  const first = recordPath.split('.')[0]!;
  const opens = new RegExp(`<${first.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')}[\\s/>]`);
  let head = '';
  let tail = '';
  let seen = false;
  return {
    text(piece) {
      if (head.length < HEAD) head += piece.slice(0, HEAD - head.length);
      if (seen) return;
      const text = tail + piece;
      seen = opens.test(text);
      tail = text.slice(-(first.length + 1));
    },
    end(records, err) {
      if (records > 0 || seen) {
        if (err) throw err;
        return;
      }
      throw new FeedReadError(refusal(recordPath, head), { file }, false, {
        refused: true,
        ...(err !== undefined && { cause: err }),
      });
    },
  };
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
  const what = /^html$/i.test(root) ? " (an HTML page: the feed host's error or login page?)" : '';
  return `recordPath \`${recordPath}\` matches no element: the document's root is \`<${clip(root)}>\`${what}${text ? `, its text: ${clip(text)}` : ''}`;
}
