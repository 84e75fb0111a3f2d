// The Chatbot Service client: one typed function per endpoint. Every call checks its request with the
// shared schema (a bad request is a ValidationError and is never sent), waits for the rate limiter,
// sends with the operation's auth header, checks the envelope, parses Data, and retries what a retry
// can help (see retry.ts). `onCall` hears about every HTTP attempt.
import type { z } from 'zod';
import { FeedsyncError, RateLimitedError, ResponseFormatError, ValidationError } from '../errors.js';
import type { BoundedResponse } from '../net/request.js';
import { keepAliveAgent } from '../net/request.js';
import { registerSecret } from '../secrets.js';
import { readEnvelope, parseEnvelope, snippet } from './envelope.js';
import { DEFAULT_MAX_RESPONSE_BYTES, postJson, transportError, type ApiTransport } from './http.js';
import { localApiBudget } from './rate-limiter.js';
import { retryDelay, retryPolicy } from './retry.js';
import {
  AskAnswer,
  AskRequest,
  AUTH_HEADER,
  CreateListingData,
  DeleteData,
  DeleteRequest,
  EditSettingsData,
  EditSettingsRequest,
  ENDPOINTS,
  ListData,
  ListingCreate,
  ListingUpdate,
  ListRequest,
  quickListData,
  StreamFinal,
  StreamFragment,
  UpdateListingData,
  type EndpointName,
  type StreamEvent,
} from './schemas.js';
import { sleep } from '../net/sleep.js';
import { createStreamParser, StreamSyntaxError } from './stream-parser.js';
import type { ApiCallEvent, ApiClientOptions, CallOptions, ChatbotApi, ListPageDecoder } from './types.js';
import type { Permit } from '../budget/budget.js';
import { zodIssues } from './zod-issues.js';
import { quickAccept, quickAcceptUpdate } from '../listing/validate.js';

export function createApiClient(opts: ApiClientOptions): ChatbotApi {
  registerSecret(opts.secretKey);
  registerSecret(opts.sessionKey);
  const baseUrl = opts.baseUrl.replace(/\/+$/, '');
  const policy = retryPolicy(opts.retry);
  const budget = opts.budget ?? localApiBudget({ baseUrl, secretKey: opts.secretKey, ratePerSecond: opts.ratePerSecond, concurrency: opts.concurrency });
  const transport: ApiTransport = {
    dispatcher: keepAliveAgent(),
    timeoutMs: opts.timeoutMs,
    maxResponseBytes: opts.maxResponseBytes ?? DEFAULT_MAX_RESPONSE_BYTES,
  };

  function headers(endpoint: EndpointName, accept: string): Record<string, string> {
    const key = AUTH_HEADER[endpoint] === 'authorization' ? opts.secretKey : opts.sessionKey;
    return { 'content-type': 'application/json', accept, [AUTH_HEADER[endpoint]]: key };
  }

  /** Runs `attempt` until it succeeds, fails for good, or runs out of retries; one onCall per attempt. */
  async function withRetry<T>(endpoint: EndpointName, call: CallOptions | undefined, attempt: () => Promise<{ value: T; httpStatus: number }>): Promise<T> {
    const { value, permit } = await withRetryHeld(endpoint, call, attempt);
    permit.release();
    return value;
  }

  /**
   * withRetry, but the successful attempt's permit (its slot in flight) stays held for the caller to
   * release: a streamed answer is still being sent when its headers come.
   */
  async function withRetryHeld<T>(
    endpoint: EndpointName,
    call: CallOptions | undefined,
    attempt: () => Promise<{ value: T; httpStatus: number }>,
  ): Promise<{ value: T; permit: Permit }> {
    const caller = call?.signal;
    for (let n = 1; ; n++) {
      const permit = await budget.acquire(caller);
      const started = performance.now();
      const report = (e: Omit<ApiCallEvent, 'endpoint' | 'attempt' | 'durationMs'>) =>
        opts.onCall?.({ endpoint, attempt: n, durationMs: Math.round(performance.now() - started), ...e });
      try {
        const { value, httpStatus } = await attempt();
        report({ outcome: 'ok', httpStatus, apiCode: 200 });
        return { value, permit };
      } catch (raw) {
        const err = raw instanceof FeedsyncError ? raw : transportError(ENDPOINTS[endpoint], raw, caller, transport);
        // The service asked the credential to wait: every process on it waits, not only this call.
        // Set before this call's slot is freed, so no call of ours starts in between.
        if (err instanceof RateLimitedError && err.retryAfterMs !== undefined) {
          await budget.pauseUntil(Date.now() + err.retryAfterMs, `${ENDPOINTS[endpoint]} answered HTTP ${err.httpStatus} with Retry-After`).catch((e: unknown) => {
            permit.release();
            throw e;
          });
        }
        permit.release();
        const delay = call?.retry === false ? undefined : retryDelay(err, policy, n);
        const status = err as { httpStatus?: number; apiCode?: number };
        report({
          outcome: delay === undefined ? 'error' : 'retry',
          httpStatus: status.httpStatus,
          apiCode: status.apiCode,
          error: err.message,
          ...(delay !== undefined && { retryDelayMs: delay }),
        });
        if (delay === undefined) throw err;
        await sleep(delay, caller, ENDPOINTS[endpoint]);
      }
    }
  }

  /** `quick`: a hand-written check that agrees with `schema` (validate.ts), tried first; zod decides the rest and names the issues */
  function validate<S extends z.ZodType>(endpoint: EndpointName, schema: S, req: unknown, quick?: (req: unknown) => z.output<S> | undefined): z.output<S> {
    const fast = quick?.(req);
    if (fast) return fast;
    const parsed = schema.safeParse(req);
    if (parsed.success) return parsed.data;
    throw new ValidationError({ file: ENDPOINTS[endpoint] }, zodIssues(parsed.error, req));
  }

  /** `fast`: hand-written checks that agree with the request schema and with `data` (tried first; zod decides the rest) */
  async function post<T, S extends z.ZodType>(
    endpoint: EndpointName,
    schema: S,
    req: unknown,
    data: z.ZodType<T>,
    call?: CallOptions,
    fast: { request?: (req: unknown) => z.output<S> | undefined; data?: (data: unknown) => T | undefined } = {},
  ): Promise<T> {
    return send(endpoint, validate(endpoint, schema, req, fast.request), call, async (res) => {
      const text = await readText(endpoint, res, call?.signal);
      return readEnvelope(ENDPOINTS[endpoint], { status: res.status, headers: res.headers, text }, data, fast.data);
    });
  }

  /** POSTs a checked body; each attempt's response is read (and checked) by `read`, retried as a whole. */
  function send<T>(endpoint: EndpointName, body: unknown, call: CallOptions | undefined, read: (res: BoundedResponse) => Promise<T>): Promise<T> {
    const url = baseUrl + ENDPOINTS[endpoint];
    return withRetry(endpoint, call, async () => {
      const res = await postJson(ENDPOINTS[endpoint], url, headers(endpoint, 'application/json'), body, transport, call?.signal);
      return { value: await read(res), httpStatus: res.status };
    });
  }

  /** listListings with the caller's decoder: its `raw` first (a plainly good page), else the checks of listListings, then its `data`. */
  async function listListingsAs<T>(req: ListRequest, decoder: ListPageDecoder<T>, call?: CallOptions): Promise<T> {
    const got = await send('list', validate('list', ListRequest, req), call, async (res): Promise<{ page: T } | { data: ListData }> => {
      const bytes = await readBody('list', res, call?.signal);
      const page = await decoder.raw({ status: res.status, bytes });
      if (page !== undefined) return { page };
      const text = bytes.toString('utf8');
      return { data: readEnvelope(ENDPOINTS.list, { status: res.status, headers: res.headers, text }, ListData, quickListData) };
    });
    // outside the attempt: a failure of the caller's own decoding is not a call to retry
    return 'page' in got ? got.page : decoder.data(got.data);
  }

  async function readBody(endpoint: EndpointName, res: BoundedResponse, caller: AbortSignal | undefined): Promise<Buffer> {
    try {
      return await res.bytes();
    } catch (err) {
      throw transportError(ENDPOINTS[endpoint], err, caller, transport, res.status);
    }
  }

  async function readText(endpoint: EndpointName, res: BoundedResponse, caller: AbortSignal | undefined): Promise<string> {
    return (await readBody(endpoint, res, caller)).toString('utf8');
  }

  async function* askStream(req: AskRequest, call?: CallOptions): AsyncGenerator<StreamEvent> {
    const endpoint = ENDPOINTS.ask;
    const body = { ...validate('ask', AskRequest, req), stream: true };
    const { value: res, permit } = await withRetryHeld('ask', call, async () => {
      const res = await postJson(endpoint, baseUrl + endpoint, headers('ask', 'text/event-stream'), body, transport, call?.signal);
      const type = res.headers.get('content-type') ?? '';
      if (!type.includes('text/event-stream') || res.status < 200 || res.status >= 300) {
        // An error (or a server that does not stream) answers with the envelope instead.
        const text = await readText('ask', res, call?.signal);
        parseEnvelope(endpoint, { status: res.status, headers: res.headers, text });
        throw new ResponseFormatError(endpoint, res.status, snippet(text), `expected text/event-stream, got ${type || 'no content-type'}`);
      }
      return { value: res, httpStatus: res.status };
    });
    const parser = createStreamParser();
    let final = false;
    const events = function* (values: unknown[]): Generator<StreamEvent> {
      for (const value of values) {
        if (final) continue; // nothing follows the final object; ignore trailing extras
        const done = StreamFinal.safeParse(value);
        if (done.success) {
          final = true;
          yield { type: 'final', ...done.data };
          continue;
        }
        const part = StreamFragment.safeParse(value);
        if (!part.success) {
          throw new ResponseFormatError(endpoint, res.status, snippet(JSON.stringify(value)), 'a stream object is neither a fragment nor the final object');
        }
        yield { type: 'fragment', content: part.data.content };
      }
    };
    try {
      for await (const chunk of readChunks(res, call?.signal)) yield* events(parser.push(chunk));
      yield* events(parser.end());
    } catch (err) {
      if (err instanceof StreamSyntaxError) throw new ResponseFormatError(endpoint, res.status, snippet(err.piece), err.message);
      throw err;
    } finally {
      res.cancel();
      permit.release();
    }
    if (!final) throw new ResponseFormatError(endpoint, res.status, '', 'the stream ended without the final object');
  }

  /** The stream's chunks; the attempt's total deadline and byte cap still hold while reading. */
  async function* readChunks(res: BoundedResponse, caller: AbortSignal | undefined): AsyncGenerator<Uint8Array> {
    try {
      yield* res.body;
    } catch (err) {
      throw transportError(ENDPOINTS.ask, err, caller, transport, res.status);
    }
  }

  return {
    editSettings: (req, call) => post('edit', EditSettingsRequest, req, EditSettingsData, call),
    ask: (req, call) => post('ask', AskRequest, { ...req, stream: false }, AskAnswer, call),
    askStream,
    // a listing the mapping validated passes the quick check: one zod parse per listing at most
    createListing: (listing, call) => post('create', ListingCreate, listing, CreateListingData, call, { request: quickAccept }),
    updateListing: (listing, call) => post('update', ListingUpdate, listing, UpdateListingData, call, { request: quickAcceptUpdate }),
    // a page that plainly is one is not copied item by item by zod
    listListings: (req, call) => post('list', ListRequest, req, ListData, call, { data: quickListData }),
    listListingsAs,
    deleteListings: (req, call) => post('delete', DeleteRequest, req, DeleteData, call),
  };
}
