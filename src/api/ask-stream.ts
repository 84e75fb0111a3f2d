// The streamed answer of `ask` (stream: true): one attempt with retries until the event stream
// starts (an error, or a server that does not stream, answers with the envelope instead), then the
// stream's objects as fragments and one final object. The attempt's slot in flight is held until
// the stream ends.
import { ResponseFormatError } from '../errors.js';
import type { BoundedResponse } from '../net/request.js';
import { parseEnvelope, snippet } from './envelope.js';
import { postJson, transportError } from './http.js';
import { AskRequest, ENDPOINTS, StreamFinal, StreamFragment, type StreamEvent } from './schemas.js';
import { createStreamParser, StreamSyntaxError } from './stream-parser.js';
import type { CallOptions } from './types.js';
import { endpointUrl, headers, readText, validate, withRetryHeld, type Connection } from './connection.js';

export async function* askStream(c: Connection, req: AskRequest, call?: CallOptions): AsyncGenerator<StreamEvent> {
  const endpoint = ENDPOINTS.ask;
  const { value: res, permit } = await withRetryHeld(c, 'ask', call, () => openStream(c, req, call));
  const parser = createStreamParser();
  const state = { final: false };
  try {
    for await (const chunk of readChunks(c, res, call?.signal))
      yield* streamEvents(state, res.status, parser.push(chunk));
    yield* streamEvents(state, res.status, parser.end());
  } catch (err) {
    if (err instanceof StreamSyntaxError)
      throw new ResponseFormatError(endpoint, res.status, snippet(err.piece), err.message);
    throw err;
  } finally {
    res.cancel();
    permit.release();
  }
  if (!state.final)
    throw new ResponseFormatError(endpoint, res.status, '', 'the stream ended without the final object');
}

/** One attempt: the request sent, and its answer when it is an event stream. */
async function openStream(
  c: Connection,
  req: AskRequest,
  call: CallOptions | undefined,
): Promise<{ value: BoundedResponse; httpStatus: number }> {
  const endpoint = ENDPOINTS.ask;
  const body = { ...validate('ask', AskRequest, req), stream: true };
  const res = await postJson(
    endpoint,
    endpointUrl(c, 'ask'),
    headers(c, 'ask', 'text/event-stream'),
    body,
    c.transport,
    call?.signal,
  );
  const type = res.headers.get('content-type') ?? '';
  if (!type.includes('text/event-stream') || res.status < 200 || res.status >= 300) {
    // An error (or a server that does not stream) answers with the envelope instead.
    const text = await readText(c, 'ask', res, call?.signal);
    parseEnvelope(endpoint, { status: res.status, headers: res.headers, text });
    throw new ResponseFormatError(
      endpoint,
      res.status,
      snippet(text),
      `expected text/event-stream, got ${type || 'no content-type'}`,
    );
  }
  return { value: res, httpStatus: res.status };
}

/** The stream's parsed objects as events; nothing follows the final object (trailing extras are ignored). */
function* streamEvents(state: { final: boolean }, httpStatus: number, values: unknown[]): Generator<StreamEvent> {
  for (const value of values) {
    if (state.final) continue;
    const done = StreamFinal.safeParse(value);
    if (done.success) {
      state.final = true;
      yield { type: 'final', ...done.data };
      continue;
    }
    const part = StreamFragment.safeParse(value);
    if (!part.success) {
      throw new ResponseFormatError(
        ENDPOINTS.ask,
        httpStatus,
        snippet(JSON.stringify(value)),
        'a stream object is neither a fragment nor the final object',
      );
    }
    yield { type: 'fragment', content: part.data.content };
  }
}

/** The stream's chunks; the attempt's total deadline and byte cap still hold while reading. */
async function* readChunks(
  c: Connection,
  res: BoundedResponse,
  caller: AbortSignal | undefined,
): AsyncGenerator<Uint8Array> {
  try {
    yield* res.body;
  } catch (err) {
    throw transportError(ENDPOINTS.ask, err, caller, c.transport, res.status);
  }
}
