// The answer stream of ClientAsk is "a sequence of JSON objects" (spec). Servers frame it three ways:
// SSE `data:` lines, one object per line, or objects back to back. This parser takes the bytes as
// they come, with chunk boundaries anywhere (inside a string, inside a multi-byte character), and
// hands back each complete object. It does no I/O.

/** A piece of the stream that is not JSON; the client turns it into a ResponseFormatError. */
export class StreamSyntaxError extends Error {
  constructor(
    message: string,
    readonly piece: string,
  ) {
    super(message);
  }
}

export interface StreamParser {
  /** Feed bytes; returns the objects completed by them. */
  push(chunk: Uint8Array): unknown[];
  /** The stream ended: returns what was still pending, or throws on a truncated object. */
  end(): unknown[];
}

export function createStreamParser(): StreamParser {
  const decoder = new TextDecoder('utf-8');
  let mode: 'json' | 'sse' | undefined;
  const json = createObjectScanner();
  const sse = createSseLines((data) => sseData.push(data));
  let sseData: string[] = [];

  const feed = (text: string, final: boolean): unknown[] => {
    if (mode === undefined) {
      const first = text.match(/\S/)?.[0];
      if (first === undefined) return [];
      mode = first === '{' ? 'json' : 'sse';
    }
    if (mode === 'json') return json.push(text, final);
    sse.push(text, final);
    const out: unknown[] = [];
    for (const data of sseData) if (data.trim() !== '[DONE]') out.push(...objectsIn(data));
    sseData = [];
    return out;
  };

  return {
    push: (chunk) => feed(decoder.decode(chunk, { stream: true }), false),
    end: () => feed(decoder.decode(), true),
  };
}

/** Every object in one complete piece of text (an SSE event's data may hold one or several). */
function objectsIn(text: string): unknown[] {
  return createObjectScanner().push(text, true);
}

/**
 * Finds top-level JSON objects in text that arrives in pieces, counting braces outside strings.
 * Whitespace between objects (newlines of NDJSON) is skipped; anything else is a syntax error.
 */
function createObjectScanner() {
  let buf = '';
  let pos = 0; // next character to scan
  let start = -1; // start of the object being scanned, -1 between objects
  let depth = 0;
  let inString = false;
  let escaped = false;

  return {
    push(text: string, final: boolean): unknown[] {
      buf += text;
      const out: unknown[] = [];
      for (; pos < buf.length; pos++) {
        const ch = buf[pos]!;
        if (start < 0) {
          if (/\s/.test(ch)) continue;
          if (ch !== '{') throw new StreamSyntaxError('expected a JSON object', buf.slice(pos, pos + 80));
          start = pos;
          depth = 0;
        }
        if (inString) {
          if (escaped) escaped = false;
          else if (ch === '\\') escaped = true;
          else if (ch === '"') inString = false;
          continue;
        }
        if (ch === '"') inString = true;
        else if (ch === '{' || ch === '[') depth++;
        else if (ch === '}' || ch === ']') {
          depth--;
          if (depth === 0) {
            const piece = buf.slice(start, pos + 1);
            try {
              out.push(JSON.parse(piece));
            } catch (err) {
              throw new StreamSyntaxError(`not JSON: ${(err as Error).message}`, piece.slice(0, 80));
            }
            start = -1;
          }
        }
      }
      // Drop what is consumed so the buffer holds at most the object in progress.
      const keep = start < 0 ? buf.length : start;
      buf = buf.slice(keep);
      pos -= keep;
      if (start >= 0) start = 0;
      if (final && start >= 0) throw new StreamSyntaxError('the stream ended inside a JSON object', buf.slice(0, 80));
      return out;
    },
  };
}

/**
 * Server-sent events, line by line (https://html.spec.whatwg.org/multipage/server-sent-events.html):
 * `data:` lines are joined with "\n" and handed on at a blank line or at the end; comments (`:`),
 * `event:`, `id:` and `retry:` lines are ignored.
 */
function createSseLines(onData: (data: string) => void) {
  let buf = '';
  let data: string[] = [];
  const dispatch = () => {
    if (data.length) onData(data.join('\n'));
    data = [];
  };
  const line = (text: string) => {
    if (text === '') return dispatch();
    if (text.startsWith(':')) return;
    const colon = text.indexOf(':');
    const field = colon < 0 ? text : text.slice(0, colon);
    let value = colon < 0 ? '' : text.slice(colon + 1);
    if (value.startsWith(' ')) value = value.slice(1);
    if (field === 'data') data.push(value);
    else if (!['event', 'id', 'retry'].includes(field)) {
      throw new StreamSyntaxError('not an event-stream line', text.slice(0, 80));
    }
  };
  return {
    push(text: string, final: boolean): void {
      buf += text;
      let nl: RegExpExecArray | null;
      const re = /\r\n|\r|\n/g;
      let from = 0;
      while ((nl = re.exec(buf))) {
        // A lone \r at the very end may be the first half of \r\n still to come.
        if (nl[0] === '\r' && nl.index === buf.length - 1 && !final) break;
        line(buf.slice(from, nl.index));
        from = nl.index + nl[0].length;
      }
      buf = buf.slice(from);
      if (final) {
        if (buf) line(buf);
        buf = '';
        dispatch();
      }
    },
  };
}
