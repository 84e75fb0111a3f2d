// One HTTP exchange over undici with the two bounds every response needs: a total deadline (connect,
// headers and the whole body; not an idle timeout that restarts on every chunk, so a server that
// drips one byte a second cannot hold a call open) and a cap on the bytes of the body, counted while
// streaming, so a huge or endless body fails the call instead of filling memory. Redirects are never
// followed here: a 3xx is handed back, and the caller decides (the API refuses them; feeds follow
// them within their origin).
import { EventEmitter } from 'node:events';
import { finished, type Readable } from 'node:stream';
import { Agent, request, type Dispatcher } from 'undici';

export interface BoundedRequest {
  method: 'GET' | 'POST';
  /** (a URL parsed once is taken as it is: undici parses text on every call) */
  url: string | URL;
  headers: Record<string, string>;
  body?: string;
  /** total deadline of the exchange, body included */
  deadlineMs: number;
  /** most body bytes read before the call fails (as received on the wire) */
  maxBytes: number;
  /** the caller's cancellation (job cancelled, SIGINT) */
  signal?: AbortSignal;
  dispatcher?: Dispatcher;
  /**
   * the caller reads the body whole (bytes, text), never as a stream: it is gathered as it comes,
   * under the same bounds, without a stream between (the API client's calls but the streamed answer)
   */
  whole?: boolean;
}

/** Why an exchange stopped early; the caller turns it into its own error family. */
export type StopReason = 'deadline' | 'too-large' | 'aborted';

/** A failure of the exchange that the bounds caused (or the caller's abort). */
export class RequestStopped extends Error {
  constructor(
    readonly reason: StopReason,
    readonly limit: number,
    cause?: unknown,
  ) {
    super(
      reason === 'deadline'
        ? `no complete response within ${limit} ms`
        : reason === 'too-large'
          ? `the response body exceeds ${limit} bytes`
          : 'aborted',
      { cause },
    );
    this.name = 'RequestStopped';
  }
}

export interface BoundedResponse {
  status: number;
  headers: Headers;
  /** the body, bounded; ends the exchange (and its deadline timer) when it ends or is left */
  body: AsyncIterable<Buffer>;
  /** the whole body as text, bounded like `body` */
  text(): Promise<string>;
  /** the whole body as bytes, bounded like `body` (a caller that decodes it elsewhere) */
  bytes(): Promise<Buffer>;
  /** drop the body and the connection's claim on it */
  cancel(): void;
}

/**
 * A keep-alive connection pool for one client; sockets idle a while are closed (and never hold the
 * process open). `connections`: the client's calls in flight at most. A pool larger than those grew
 * to about twice them: a call sent as the one before it ended found that one's connection not yet
 * free (undici frees it on its drain event) and opened another (test/api/connections.test.ts); at
 * the bound it waits for that drain instead. 64 for a client without a bound (tests, benches).
 */
export function keepAliveAgent(connections = 64): Agent {
  return new Agent({ connections, keepAliveTimeout: 10_000, pipelining: 1 });
}

export async function boundedRequest(req: BoundedRequest): Promise<BoundedResponse> {
  if (req.whole && isWebUrl(req.url)) return wholeRequest(req);
  // undici takes an EventEmitter as the request's signal ('abort' stops it): one a call costs far
  // less than an AbortController's EventTarget. The reason is ours (`stopped`): whatever undici
  // throws after an abort is replaced by it.
  const abort = new EventEmitter();
  const bounds = exchangeBounds(req, () => abort.emit('abort'));
  const finish = bounds.finish;

  let res: Dispatcher.ResponseData;
  try {
    // (an emitter has no `aborted` for undici to look at: a call stopped already is not sent)
    if (bounds.stopped) throw bounds.stopped;
    res = await request(req.url, {
      method: req.method,
      headers: req.headers,
      body: req.body,
      signal: abort,
      dispatcher: req.dispatcher,
      // our own deadline covers these; undici's would otherwise fire first with another message
      headersTimeout: req.deadlineMs + 1000,
      bodyTimeout: req.deadlineMs + 1000,
    });
  } catch (err) {
    finish();
    throw bounds.stopped ?? err;
  }

  const declared = Number(res.headers['content-length']);
  const stream = res.body;
  // destroying a body emits an AbortError that nobody waits for any more
  stream.on('error', () => {});
  async function* body(): AsyncGenerator<Buffer> {
    let seen = 0;
    try {
      if (declared > req.maxBytes) throw new RequestStopped('too-large', req.maxBytes);
      for await (const chunk of stream) {
        seen += (chunk as Buffer).length;
        if (seen > req.maxBytes) throw new RequestStopped('too-large', req.maxBytes);
        yield chunk as Buffer;
      }
    } catch (err) {
      throw bounds.stopped ?? err;
    } finally {
      finish();
      if (!stream.destroyed) stream.destroy();
    }
  }
  // body()'s bounds and ends, without an async iterator and a promise a chunk (every API call reads its body so)
  async function bytes(): Promise<Buffer> {
    try {
      if (declared > req.maxBytes) throw new RequestStopped('too-large', req.maxBytes);
      return await readWhole(stream, req.maxBytes);
    } catch (err) {
      throw bounds.stopped ?? err;
    } finally {
      finish();
      if (!stream.destroyed) stream.destroy();
    }
  }
  let headers: Headers | undefined;
  return {
    status: res.statusCode,
    // made when asked: most calls never read a header
    get headers() {
      return (headers ??= toHeaders(res.headers));
    },
    body: body(),
    bytes,
    async text() {
      return (await bytes()).toString('utf8');
    },
    cancel() {
      finish();
      stream.destroy();
    },
  };
}

/** An exchange's stops besides its end: the deadline and the caller's abort (`onStop` is told the first); `finish` when it ends. */
function exchangeBounds(req: Pick<BoundedRequest, 'deadlineMs' | 'signal'>, onStop: (why: RequestStopped) => void) {
  let stopped: RequestStopped | undefined;
  const stop = (why: RequestStopped) => {
    if (stopped) return;
    stopped = why;
    onStop(why);
  };
  const timer = setTimeout(() => stop(new RequestStopped('deadline', req.deadlineMs)), req.deadlineMs);
  const onCallerAbort = () => stop(new RequestStopped('aborted', 0, req.signal?.reason));
  if (req.signal?.aborted) onCallerAbort();
  req.signal?.addEventListener('abort', onCallerAbort, { once: true });
  return {
    get stopped() {
      return stopped;
    },
    finish() {
      clearTimeout(timer);
      req.signal?.removeEventListener('abort', onCallerAbort);
    },
  };
}

/**
 * boundedRequest for a body read whole: the same exchange through undici's dispatcher, its chunks
 * gathered by the handler as they come (no request handler's stream, no listeners on it), the same
 * bounds and failures (test/net/bounded-bytes.test.ts holds it to the streamed read). Resolves with
 * the headers; bytes() waits for the rest.
 */
function wholeRequest(req: BoundedRequest): Promise<BoundedResponse> {
  return new Promise((resolve, reject) => {
    let controller: Dispatcher.DispatchController | undefined;
    let tooLarge: RequestStopped | undefined;
    const bounds = exchangeBounds(req, (why) => controller?.abort(why));
    if (bounds.stopped) {
      bounds.finish();
      reject(bounds.stopped);
      return;
    }
    const chunks: Buffer[] = [];
    let seen = 0;
    let whole: { resolve: (b: Buffer) => void; reject: (err: unknown) => void } | undefined;
    const handler: Dispatcher.DispatchHandler = {
      onRequestStart(c) {
        controller = c;
        if (bounds.stopped) c.abort(bounds.stopped);
      },
      onResponseStart(c, statusCode, headers) {
        if (statusCode < 200) return; // (1xx: the answer is still to come)
        const bytes = new Promise<Buffer>((res, rej) => (whole = { resolve: res, reject: rej }));
        bytes.catch(() => {}); // (a body nobody reads may fail unheard)
        if (Number(headers['content-length']) > req.maxBytes)
          c.abort((tooLarge = new RequestStopped('too-large', req.maxBytes)));
        resolve(wholeResponse(statusCode, headers, bytes, () => c.abort(new RequestStopped('aborted', 0))));
      },
      onResponseData(c, chunk) {
        seen += chunk.length;
        if (seen > req.maxBytes) c.abort((tooLarge ??= new RequestStopped('too-large', req.maxBytes)));
        else chunks.push(chunk);
      },
      onResponseEnd() {
        bounds.finish();
        whole?.resolve(Buffer.concat(chunks, seen));
      },
      onResponseError(_c, err) {
        bounds.finish();
        if (whole) whole.reject(bounds.stopped ?? tooLarge ?? err);
        else reject(bounds.stopped ?? err);
      },
    };
    try {
      const url = typeof req.url === 'string' ? new URL(req.url) : req.url;
      (req.dispatcher ?? ownAgent()).dispatch(
        {
          origin: url.origin,
          path: url.pathname + url.search,
          method: req.method,
          headers: req.headers,
          body: req.body,
          headersTimeout: req.deadlineMs + 1000,
          bodyTimeout: req.deadlineMs + 1000,
        },
        handler,
      );
    } catch (err) {
      bounds.finish();
      reject(err);
    }
  });
}

let shared: Agent | undefined;
/**
 * The dispatcher of a whole read given none: this undici's own Agent, never the global one, which on
 * Node 22 is Node's bundled undici 6 once anything called fetch, and refuses the handler API above
 * ("invalid onError method"; test/net/bounded-bytes.test.ts on Node 22).
 */
function ownAgent(): Agent {
  return (shared ??= keepAliveAgent());
}

/** An http(s) URL (as undici's request takes it; anything else goes its way, to be refused as it refuses it) */
function isWebUrl(url: string | URL): boolean {
  const protocol = typeof url === 'string' ? (URL.parse(url)?.protocol ?? '') : url.protocol;
  return protocol === 'http:' || protocol === 'https:';
}

/** The response of a body read whole: its body is that one chunk. */
function wholeResponse(
  status: number,
  raw: Record<string, string | string[] | undefined>,
  bytes: Promise<Buffer>,
  cancel: () => void,
): BoundedResponse {
  let headers: Headers | undefined;
  return {
    status,
    get headers() {
      return (headers ??= toHeaders(raw));
    },
    body: (async function* () {
      yield await bytes;
    })(),
    bytes: () => bytes,
    text: async () => (await bytes).toString('utf8'),
    cancel,
  };
}

/** A body's chunks joined, failing at more than maxBytes; it ends as a for await over it ends: at its end, its error, or a close before its end. */
function readWhole(stream: Readable, maxBytes: number): Promise<Buffer> {
  return new Promise<Buffer>((resolve, reject) => {
    const chunks: Buffer[] = [];
    let seen = 0;
    stream.on('data', (chunk: Buffer) => {
      seen += chunk.length;
      if (seen > maxBytes) stream.destroy(new RequestStopped('too-large', maxBytes));
      else chunks.push(chunk);
    });
    finished(stream, (err) => (err ? reject(err) : resolve(Buffer.concat(chunks, seen))));
  });
}

function toHeaders(raw: Record<string, string | string[] | undefined>): Headers {
  const out = new Headers();
  for (const [name, value] of Object.entries(raw)) {
    if (value === undefined) continue;
    for (const v of Array.isArray(value) ? value : [value]) out.append(name, v);
  }
  return out;
}
