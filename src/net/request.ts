// One HTTP exchange with the two bounds every response needs: a total deadline (connect,
// headers and the whole body; not an idle timeout that restarts on every chunk, so a server that
// drips one byte a second cannot hold a call open) and a cap on the bytes of the body, counted while
// streaming, so a huge or endless body fails the call instead of filling memory. Redirects are never
// followed here: a 3xx is handed back, and the caller decides (the API refuses them; feeds follow
// them within their origin). A body read as a stream goes over undici; one read whole (the API
// client's calls but the streamed answer) over node:http (wholePool says why).
import { EventEmitter } from 'node:events';
import type { Agent as HttpAgent, AgentOptions, ClientRequest, ClientRequestArgs, IncomingMessage } from 'node:http';
import type { Socket } from 'node:net';
import { finished, type Readable } from 'node:stream';
import type { Agent, Dispatcher } from 'undici';
import { nodeHttp, nodeHttps } from './status-text.js';

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
  /** undici's pool of an exchange read as a stream */
  dispatcher?: LazyAgent;
  /**
   * the caller reads the body whole (bytes, text), never as a stream: it is gathered as it comes,
   * under the same bounds, over node:http and `pool` (the API client's calls but the streamed answer)
   */
  whole?: boolean;
  /** the keep-alive pool of an exchange read whole (wholePool) */
  pool?: WholePool;
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

/** How long a connection of either pool (keepAliveAgent, wholePool) stays open idle. */
const IDLE_MS = 10_000;

/** undici, imported at its first use (undici.ts says why); one import a process. */
let undiciModule: Promise<typeof import('./undici.js')> | undefined;
const undici = () => (undiciModule ??= import('./undici.js'));

/** An undici Agent made at its first use, so a pool no exchange uses loads no undici (undici.ts). */
export interface LazyAgent {
  /** the Agent, made (and undici loaded) at the first call */
  get(): Promise<Agent>;
  /** closes the Agent if one was made */
  close(): Promise<void>;
}

export function lazyAgent(options: Agent.Options): LazyAgent {
  let made: Promise<Agent> | undefined;
  return {
    get: () => (made ??= undici().then(({ Agent }) => new Agent(options))),
    close: async () => {
      if (made) await (await made).close();
    },
  };
}

/**
 * A keep-alive connection pool of undici for one client (the API client's streamed answer, feeds,
 * media); sockets idle a while are closed (and never hold the process open). `connections`: the
 * client's calls in flight at most. A pool larger than those grew to about twice them: a call sent as
 * the one before it ended found that one's connection not yet free (undici frees it on its drain
 * event) and opened another (test/api/connections.test.ts, when the API client's calls went through
 * it); at the bound it waits for that drain instead. 64 for a client without a bound (tests, benches).
 */
export function keepAliveAgent(connections = 64): LazyAgent {
  return lazyAgent({ connections, keepAliveTimeout: IDLE_MS, pipelining: 1 });
}

export async function boundedRequest(req: BoundedRequest): Promise<BoundedResponse> {
  if (req.whole) {
    const url = webUrl(req.url);
    if (url) return wholeRequest(req, url);
  }
  // undici takes an EventEmitter as the request's signal ('abort' stops it): one a call costs far
  // less than an AbortController's EventTarget. The reason is ours (`stopped`): whatever undici
  // throws after an abort is replaced by it.
  const abort = new EventEmitter();
  const bounds = exchangeBounds(req, () => abort.emit('abort'));
  const finish = bounds.finish;

  let res: Dispatcher.ResponseData;
  try {
    const [{ request }, dispatcher] = await Promise.all([undici(), req.dispatcher?.get()]);
    // (an emitter has no `aborted` for undici to look at: a call stopped already is not sent)
    if (bounds.stopped) throw bounds.stopped;
    res = await request(req.url, {
      method: req.method,
      headers: req.headers,
      body: req.body,
      signal: abort,
      dispatcher,
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
 * The keep-alive pool of the exchanges read whole (the API client's): node:http's Agent, not
 * undici's. undici writes a request on a reused connection only in the event loop's check phase (a
 * setImmediate, so that bytes the server sent unasked are seen first) and frees a connection after
 * its answer in another; at a page every few ms that was 1.5-2.5 ms a call before the request was
 * on the wire (docs/benchmarks.md, "A sealed worker rerun, phase by phase"). Node's Agent writes at
 * once, and guards its idle sockets otherwise: one that receives a byte while free is destroyed, not
 * reused (Node 22.23 and 24.21: lib/_http_agent.js installFreeSocketDataGuard;
 * test/net/unsolicited-bytes.test.ts). `connections`: the client's calls in flight at most; a call
 * over them waits for a free socket. Idle sockets close after 10 s, or before the server's own
 * Keep-Alive timeout where it states one (a call in flight longer is not cut: the Agent's timeout
 * destroys only a free socket; the deadline is exchangeBounds'), and are unref'd: they never hold
 * the process open.
 */
export interface WholePool {
  /** the Agent of http: or https: URLs, made when first asked */
  agent(tls: boolean): HttpAgent;
}

export function wholePool(connections = 64): WholePool {
  const options = { keepAlive: true, maxSockets: connections, maxFreeSockets: connections, timeout: IDLE_MS };
  let plain: HttpAgent | undefined;
  let tls: HttpAgent | undefined;
  return {
    agent: (secure) =>
      secure ? (tls ??= guarded(nodeHttps().Agent, options)) : (plain ??= guarded(nodeHttp().Agent, options)),
  };
}

/**
 * An Agent that drops a free socket on the first byte it receives, as Node's own guard does, for
 * the releases `engines` allows that have none (before it, the bytes waited in the kernel and were
 * read as the next request's answer). Where Node guards too, its guard reads first; either destroys.
 */
function guarded(Base: typeof HttpAgent, options: AgentOptions): HttpAgent {
  const agent = new (class extends Base {
    override reuseSocket(socket: Socket, req: ClientRequest): void {
      socket.off('data', unasked);
      super.reuseSocket(socket, req);
    }
  })(options);
  function unasked(this: Socket) {
    this.destroy();
  }
  // (after the Agent's own 'free' listener, which pooled the socket or destroyed it)
  agent.on('free', (socket: Socket, to: ClientRequestArgs) => {
    if (socket.destroyed || !agent.freeSockets[agent.getName(to)]?.includes(socket)) return;
    if (socket.readableLength > 0) socket.destroy();
    else socket.on('data', unasked).resume();
  });
  return agent;
}

/**
 * boundedRequest for a body read whole, over node:http(s) and `req.pool`: the chunks gathered as they
 * come, the same bounds and failures as the streamed read (test/net/bounded-bytes.test.ts holds it
 * to it). Resolves with the headers; bytes() waits for the rest. A 1xx is not a response to Node's
 * client ('information'), so the answer is the final one, as with undici.
 */
function wholeRequest(req: BoundedRequest, url: URL): Promise<BoundedResponse> {
  return new Promise((resolve, reject) => {
    let sent: ClientRequest | undefined;
    let answer: IncomingMessage | undefined;
    // A stop ends the exchange here and now, then drops what is left of it. Once the response has
    // come, only the response is destroyed: that destroys its socket if the body is not whole, and
    // leaves one whose body is whole to its pool (its request counts as done by then, and
    // destroying it would be a no-op or hit a socket already freed).
    const stop = (why: RequestStopped) => {
      if (!sent) return; // (stopped before it is sent: told below, as bounds.stopped)
      fail(why);
      if (answer) answer.destroy();
      else sent?.destroy(why);
    };
    const bounds = exchangeBounds(req, stop);
    if (bounds.stopped) {
      bounds.finish();
      reject(bounds.stopped);
      return;
    }
    let whole: { resolve: (b: Buffer) => void; reject: (err: unknown) => void } | undefined;
    let settled = false;
    // the first failure of the exchange, before or after the headers, told once (the request, the
    // response and the socket each report a cut; the bounds' own stop wins over what it caused)
    function fail(err: unknown) {
      if (settled) return;
      settled = true;
      bounds.finish();
      if (whole) whole.reject(bounds.stopped ?? err);
      else reject(bounds.stopped ?? err);
    }
    const pool = req.pool ?? ownPool();
    const tls = url.protocol === 'https:';
    const headers: Record<string, string | number> = { ...req.headers };
    if (req.body !== undefined) headers['content-length'] = Buffer.byteLength(req.body);
    try {
      sent = (tls ? nodeHttps() : nodeHttp()).request(url, { method: req.method, headers, agent: pool.agent(tls) });
    } catch (err) {
      bounds.finish();
      reject(err);
      return;
    }
    sent.on('error', fail);
    sent.on('response', (res) => {
      answer = res;
      const chunks: Buffer[] = [];
      let seen = 0;
      const bytes = new Promise<Buffer>((ok, no) => (whole = { resolve: ok, reject: no }));
      bytes.catch(() => {}); // (a body nobody reads may fail unheard)
      res.on('error', fail);
      res.on('data', (chunk: Buffer) => {
        if (settled) return;
        seen += chunk.length;
        if (seen > req.maxBytes) stop(new RequestStopped('too-large', req.maxBytes));
        else chunks.push(chunk);
      });
      res.on('end', () => {
        if (settled) return;
        settled = true;
        bounds.finish();
        whole?.resolve(Buffer.concat(chunks, seen));
      });
      // a body cut without an error said (the socket closed early, or destroyed by us); every
      // response closes, most of them whole: the Error (its stack taken) only for a cut one
      res.on('close', () => {
        if (!settled) fail(new Error('the connection closed before the body ended'));
      });
      resolve(wholeResponse(res.statusCode ?? 0, res.headers, bytes, () => stop(new RequestStopped('aborted', 0))));
      if (Number(res.headers['content-length']) > req.maxBytes) stop(new RequestStopped('too-large', req.maxBytes));
    });
    sent.end(req.body);
  });
}

let shared: WholePool | undefined;
/** The pool of a whole read given none (tests, probes). */
function ownPool(): WholePool {
  return (shared ??= wholePool());
}

/** An http(s) URL, parsed (anything else goes undici's way, to be refused as it refuses it) */
function webUrl(url: string | URL): URL | undefined {
  const parsed = typeof url === 'string' ? URL.parse(url) : url;
  return parsed?.protocol === 'http:' || parsed?.protocol === 'https:' ? parsed : undefined;
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
