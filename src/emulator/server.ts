// The emulator's HTTP face (node:http): POST + JSON only, the envelope on every answer, auth headers
// per operation, validation with the shared zod schemas, injected latency and faults, streamed
// answers in the configured framing, and the /__emulator/ admin paths.
import type { IncomingMessage, ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { z } from 'zod';
import {
  AskRequest,
  DeleteRequest,
  EditSettingsRequest,
  ENDPOINTS,
  ListingCreate,
  ListingUpdate,
  ListRequest,
  type EndpointName,
} from '../api/schemas.js';
import { zodIssues } from '../api/zod-issues.js';
import { quickAccept, quickAcceptUpdate } from '../listing/validate.js';
import { nodeHttp } from '../net/status-text.js';
import type { ValidationIssue } from '../errors.js';
import { handleAdmin } from './admin.js';
import * as ops from './endpoints.js';
import { envelopeJson, failure, type EndpointContext, type Reply } from './endpoints.js';
import { createFaultPicker } from './faults.js';
import {
  resolveOptions,
  withoutUndefined,
  type EmulatorOptions,
  type ResolvedOptions,
  type RunningEmulator,
} from './options.js';
import { createSaver, loadState } from './persistence.js';
import { EmulatorState } from './state.js';
import { RequestStats } from './stats.js';
import { createWaits, type Waits } from './waits.js';

const MAX_BODY_BYTES = 10 * 1024 * 1024;
const ADMIN_PREFIX = '/__emulator/';

interface Route {
  name: EndpointName;
  /** the body parsed by the endpoint's schema and bound to its operation, or why it is refused */
  accept(json: unknown): Accepted | { error: z.ZodError };
}

/** A request its endpoint's schema accepted: the chatbot it names (unknown ones are refused first) and its answer. */
interface Accepted {
  serialNumber: string | undefined;
  run(ctx: EndpointContext): Reply;
}

/**
 * An endpoint whose operation takes what its schema parsed: the body's type stays inside, one per route.
 * `quick`, if given, is the client's own fast path for the schema (src/listing/validate.ts, held to
 * zod's answers by test/listing/validate.test.ts): it only ever accepts, with zod's output; anything it
 * is not sure of goes to zod, which decides and names the issues. A create's zod parse was a tenth
 * of the emulator's CPU per create.
 */
function route<T>(
  name: EndpointName,
  schema: z.ZodType<T>,
  serialNumber: (body: T) => string | undefined,
  run: (ctx: EndpointContext, body: T) => Reply,
  quick?: (json: unknown) => T | undefined,
): Route {
  return {
    name,
    accept(json) {
      let body = quick?.(json);
      if (body === undefined) {
        const parsed = schema.safeParse(json);
        if (!parsed.success) return { error: parsed.error };
        body = parsed.data;
      }
      const accepted = body;
      return { serialNumber: serialNumber(accepted), run: (ctx) => run(ctx, accepted) };
    },
  };
}

const ROUTES = new Map<string, Route>(
  [
    route('edit', EditSettingsRequest, (b) => b.serialNumber, ops.edit),
    route('ask', AskRequest, () => undefined, ops.ask),
    route('create', ListingCreate, (b) => b.SerialNumber, ops.create, quickAccept),
    route('update', ListingUpdate, (b) => b.SerialNumber, ops.update, quickAcceptUpdate),
    route('list', ListRequest, (b) => b.SerialNumber, ops.list),
    route('delete', DeleteRequest, (b) => b.SerialNumber, ops.remove),
  ].map((r) => [ENDPOINTS[r.name], r]),
);

/** Spec, Authentication: create/update/delete accept either header (docs/contracts.md, open points). */
/** On loopback the admin paths are open (tests, the embedded emulator); on any other address they need the key. */
export function adminAllowed(req: IncomingMessage, host: string, secretKey: string): boolean {
  if (isLoopback(host)) return true;
  return req.headers.authorization === secretKey || req.headers['x-emulator-key'] === secretKey;
}

function isLoopback(host: string): boolean {
  return host === 'localhost' || host === '::1' || /^127\./.test(host);
}

function authorized(route: Route, req: IncomingMessage, keys: { secretKey: string; sessionKey: string }): boolean {
  const bySecret = req.headers.authorization === keys.secretKey;
  const bySession = req.headers['chatrobot-sessionkey'] === keys.sessionKey;
  if (route.name === 'list') return bySession;
  if (route.name === 'edit' || route.name === 'ask') return bySecret;
  return bySecret || bySession;
}

const AUTH_MESSAGE: Record<EndpointName, string> = {
  edit: 'missing or wrong Authorization header',
  ask: 'missing or wrong Authorization header',
  create: 'missing or wrong Authorization (or chatrobot-sessionkey) header',
  update: 'missing or wrong Authorization (or chatrobot-sessionkey) header',
  delete: 'missing or wrong Authorization (or chatrobot-sessionkey) header',
  list: 'missing or wrong chatrobot-sessionkey header',
};

/** What one running emulator's request handling shares. */
interface Emulator {
  opts: ResolvedOptions;
  /** the logger it started with */
  log: ResolvedOptions['logger'];
  state: EmulatorState;
  stats: RequestStats;
  faults: ReturnType<typeof createFaultPicker>;
  /** ended on close: every latency or stream wait in flight ends */
  waits: Waits;
  saver: ReturnType<typeof createSaver>;
  ctx: EndpointContext;
  /** when each request arrived, for the request log (the answer may come after latency) */
  arrivals: WeakMap<ServerResponse, number>;
  createSession(serialNumber: string, sessionID?: number): number;
}

export async function startEmulator(options: EmulatorOptions = {}): Promise<RunningEmulator> {
  const e = await createEmulator(options);
  const { opts, waits, saver } = e;
  // (node:http required, not an ES import: src/net/status-text.ts says why)
  const server = nodeHttp().createServer((req, res) => {
    handle(e, req, res).catch((err: unknown) => {
      if (waits.ended) return res.destroy();
      e.log?.error({ err }, 'emulator: request failed');
      if (!res.headersSent) sendEnvelope(e, res, pathOf(req.url), failure(500, 'emulator error'));
      else res.destroy();
    });
  });
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(opts.port, opts.host, () => {
      server.off('error', reject);
      resolve();
    });
  });
  const port = (server.address() as AddressInfo).port;
  const host = opts.host.includes(':') ? `[${opts.host}]` : opts.host === '0.0.0.0' ? '127.0.0.1' : opts.host;

  return {
    url: `http://${host}:${port}`,
    port,
    configure(patch) {
      Object.assign(opts, withoutUndefined(patch));
      if (patch.nextFaults) opts.nextFaults = [...patch.nextFaults];
      if (patch.seed !== undefined) e.faults.reseed(patch.seed);
    },
    createSession: e.createSession,
    async close() {
      waits.endAll();
      await new Promise<void>((resolve) => {
        server.close(() => resolve());
        server.closeAllConnections();
      });
      await saver.flush();
    },
  };
}

/** The emulator's state (from its data file, if any), options, faults and saver. */
async function createEmulator(options: EmulatorOptions): Promise<Emulator> {
  const opts = resolveOptions(options);
  const state = new EmulatorState();
  if (opts.dataFile) await loadState(opts.dataFile, state);
  const log = opts.logger;
  const saver = createSaver(opts.dataFile, state, (err) =>
    log?.error({ err }, 'emulator: saving the data file failed'),
  );
  const createSession = (serialNumber: string, sessionID?: number): number => {
    const id = sessionID ?? state.nextSessionId++;
    if (id >= state.nextSessionId) state.nextSessionId = id + 1;
    state.sessions.set(id, { serialNumber, asks: state.sessions.get(id)?.asks ?? [] });
    saver.changed();
    return id;
  };
  return {
    opts,
    log,
    state,
    stats: new RequestStats(),
    faults: createFaultPicker(opts),
    waits: createWaits(),
    saver,
    ctx: { state, opts, changed: saver.changed, now: Date.now },
    arrivals: new WeakMap(),
    createSession,
  };
}

function sendEnvelope(
  e: Emulator,
  res: ServerResponse,
  path: string,
  reply: Exclude<Reply, { kind: 'stream' }>,
  headers: Record<string, string> = {},
): void {
  const code = reply.kind === 'error' ? reply.code : 200;
  const status = e.opts.errorsAs200 ? 200 : code;
  const body = envelopeJson(reply);
  res.writeHead(status, {
    'content-type': 'application/json; charset=utf-8',
    'content-length': Buffer.byteLength(body),
    ...headers,
  });
  res.end(body);
  e.stats.record(path, String(status), e.arrivals.get(res));
  e.log?.debug({ path, status, code }, 'emulator answered');
}

async function sendStream(
  e: Emulator,
  res: ServerResponse,
  path: string,
  reply: Extract<Reply, { kind: 'stream' }>,
): Promise<void> {
  const { opts } = e;
  res.writeHead(200, { 'content-type': 'text/event-stream; charset=utf-8', 'cache-control': 'no-cache' });
  e.stats.record(path, '200', e.arrivals.get(res));
  const frame = (obj: unknown) => {
    const json = JSON.stringify(obj);
    if (opts.streamFraming === 'sse') return `data: ${json}\n\n`;
    return opts.streamFraming === 'lines' ? `${json}\n` : json;
  };
  const broken = opts.answerMode === 'broken-stream';
  const fragments = broken ? reply.fragments.slice(0, Math.ceil(reply.fragments.length / 2)) : reply.fragments;
  for (const content of fragments) {
    if (res.destroyed) return;
    res.write(frame({ content }));
    if (opts.streamDelayMs > 0) await e.waits.wait(opts.streamDelayMs);
  }
  if (!broken) res.write(frame(reply.final));
  res.end();
}

async function handle(e: Emulator, req: IncomingMessage, res: ServerResponse): Promise<void> {
  e.arrivals.set(res, Date.now());
  const path = pathOf(req.url);
  const raw = await readBody(req);
  e.opts.onRequest?.({ path, body: raw.text });
  if (path.startsWith(ADMIN_PREFIX)) return handleAdminPath(e, req, res, urlOf(req.url), raw.text);
  return handleEndpoint(e, req, res, path, raw);
}

const urlOf = (target: string | undefined): URL => new URL(target ?? '/', 'http://emulator');

/** The request's path as URL parsing gives it; an endpoint's own path (every API call) is that already, unparsed. */
function pathOf(target: string | undefined): string {
  return target !== undefined && ROUTES.has(target) ? target : urlOf(target).pathname;
}

/** The /__emulator/ paths: open on loopback, behind the secret key elsewhere; JSON in and out, no envelope. */
function handleAdminPath(e: Emulator, req: IncomingMessage, res: ServerResponse, url: URL, raw: string): void {
  const { opts } = e;
  if (!adminAllowed(req, opts.host, opts.secretKey)) {
    const text = JSON.stringify({
      error: `the emulator listens on ${opts.host}, not on loopback: its ${ADMIN_PREFIX} paths need its secret key in an Authorization or X-Emulator-Key header`,
    });
    res.writeHead(401, {
      'content-type': 'application/json; charset=utf-8',
      'content-length': Buffer.byteLength(text),
    });
    res.end(text);
    return;
  }
  let body: unknown;
  try {
    body = raw ? JSON.parse(raw) : undefined;
  } catch {
    body = raw; // (not JSON: handed on as text, for the handler to refuse)
  }
  const reply = handleAdmin(
    {
      state: e.state,
      stats: e.stats,
      chatbots: opts.chatbots,
      createSession: e.createSession,
      changed: e.saver.changed,
    },
    req.method ?? 'GET',
    url,
    body,
  );
  const text = JSON.stringify(reply.body);
  res.writeHead(reply.status, {
    'content-type': 'application/json; charset=utf-8',
    'content-length': Buffer.byteLength(text),
  });
  res.end(text);
}

/** An API endpoint: latency and faults first, then the checks of method, type, auth, size and body, then the operation. */
async function handleEndpoint(
  e: Emulator,
  req: IncomingMessage,
  res: ServerResponse,
  path: string,
  raw: { text: string; tooLarge: boolean },
): Promise<void> {
  const { opts } = e;
  const fail = (code: number, message: string, headers?: Record<string, string>) =>
    sendEnvelope(e, res, path, failure(code, message), headers);
  if (opts.latencyMs > 0) await e.waits.wait(opts.latencyMs);
  const fault = e.faults.next();
  if (fault === 'drop') {
    e.stats.record(path, 'dropped', e.arrivals.get(res));
    req.socket.destroy();
    return;
  }
  if (fault === '429')
    return fail(429, 'too many requests (injected fault)', { 'retry-after': String(opts.retryAfterSeconds) });
  if (fault) return fail(Number(fault), `injected fault ${fault}`);

  const route = ROUTES.get(path);
  if (!route) return fail(404, `no endpoint ${path}; the endpoints are ${[...ROUTES.keys()].join(', ')}`);
  if (req.method !== 'POST') return fail(405, `${req.method} is not allowed; use POST`, { allow: 'POST' });
  const type = (req.headers['content-type'] ?? '').split(';')[0]!.trim().toLowerCase();
  if (type !== 'application/json') return fail(415, 'Content-Type must be application/json');
  if (!authorized(route, req, opts)) return fail(401, AUTH_MESSAGE[route.name]);
  if (raw.tooLarge) return fail(413, `the body is larger than ${MAX_BODY_BYTES} bytes`);

  let json: unknown;
  try {
    json = JSON.parse(raw.text);
  } catch (err) {
    return fail(400, `the body is not valid JSON: ${(err as Error).message}`);
  }
  const accepted = route.accept(json);
  if ('error' in accepted)
    return fail(400, `invalid request: ${zodIssues(accepted.error, json).map(describeIssue).join('; ')}`);
  const { serialNumber } = accepted;
  const reply = (serialNumber !== undefined && ops.unknownChatbot(e.ctx, serialNumber)) || accepted.run(e.ctx);
  if (reply.kind === 'stream') return sendStream(e, res, path, reply);
  return sendEnvelope(e, res, path, reply);
}

function describeIssue(i: ValidationIssue): string {
  return `${i.field} ${i.rule}` + (i.value === undefined ? '' : ` (got ${JSON.stringify(i.value)})`);
}

/**
 * The body as text (what a body larger than MAX_BODY_BYTES brings is read and dropped). Read by
 * 'data' and 'end', not `for await`: an async iterator a request was a few per cent of the
 * emulator's CPU per create.
 */
function readBody(req: IncomingMessage): Promise<{ text: string; tooLarge: boolean }> {
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    let size = 0;
    let ended = false;
    req.on('data', (chunk: Buffer) => {
      size += chunk.length;
      if (size <= MAX_BODY_BYTES) chunks.push(chunk);
    });
    req.on('end', () => {
      ended = true;
      const body = chunks.length === 1 ? chunks[0]! : Buffer.concat(chunks);
      resolve({ text: body.toString('utf8'), tooLarge: size > MAX_BODY_BYTES });
    });
    req.on('error', reject);
    // (as the iterator did: a request closed before its end fails; after 'end' this changes nothing)
    req.on('close', () => {
      if (!ended) reject(new Error('the request closed before its body ended'));
    });
  });
}
