// GET a feed (or a RESO page) over undici with every bound a hostile server needs: a total deadline
// per request (timeoutMs: headers and the whole body), a cap on the bytes read and on what a gzip
// body may expand to, and redirects followed within the origin only — or to another origin when the
// feed has no credential or header configured at all, so a bearer token or custom header never
// leaves its origin. Retries with backoff (network errors, 5xx, 408, 429 with Retry-After) happen
// before the body is read; a body that breaks midway is the caller's FeedReadError (restarting would
// replay records already handed on).
import { setTimeout as sleep } from 'node:timers/promises';
import { AbortedError, causeMessage, FeedReadError, isRetryableStatus } from '../../errors.js';
import type { Logger } from '../../log.js';
import { boundedRequest, RequestStopped, type BoundedResponse } from '../../net/request.js';
import { parseRetryAfter } from '../../net/retry-after.js';
import { statusText } from '../../net/status-text.js';
import { maskSecrets, registerHeaderSecrets, registerSecret } from '../../secrets.js';
import { boundedGunzip, type ExpansionLimits } from './decompress.js';
import { errorBodyMessage, readErrorBody } from './error-body.js';

/**
 * Paces requests to a source's request budget (source.limits, shared per credential; see
 * source-budget.ts): awaited before every request (each attempt, each redirect hop), told every
 * response's status and headers (quota headers, Retry-After) before its body is read.
 * beforeRequest may throw a retryable FeedReadError with `retryAt` when the budget is spent for
 * longer than a read can wait.
 */
export interface RequestBudget {
  beforeRequest(signal?: AbortSignal): Promise<void>;
  onResponse(status: number, headers: { get(name: string): string | null }): Promise<void>;
  /** bytes of a response body as received (before gunzip), for a bytes-per-hour limit */
  onBytes?(n: number): void;
}

export interface HttpGetOptions extends ExpansionLimits {
  headers?: Record<string, string>;
  bearerToken?: string;
  /** the bearer token came from a token endpoint: its source registered it as a secret, when it looks like one (oauth2.ts) */
  tokenIssued?: boolean;
  /** total deadline of one request: response headers and the whole body */
  timeoutMs: number;
  retries: number;
  signal?: AbortSignal;
  logger?: Logger;
  /** base delay of the exponential backoff (tests make it small) */
  backoffMs?: number;
  /** most redirects followed (each within the origin, or to anywhere without credentials) */
  maxRedirects?: number;
  budget?: RequestBudget;
  /** told of every request as it is sent (each attempt, each redirect hop): the run's request count */
  onRequest?: () => void;
  /** said after a 404 or 410, what to check (a feed file's URL: source.url) */
  notFoundHint?: string;
}

const FEED_LIMIT_DEFAULTS = {
  timeoutMs: 600_000,
  maxBytes: 4 * 1024 ** 3,
  maxCompressionRatio: 200,
  maxRedirects: 5,
} as const;

/** a longer Retry-After is not waited for in-process */
const MAX_RETRY_AFTER_MS = 60_000;

export interface HttpBody {
  response: { status: number; headers: Headers; url: string };
  /** the body, gunzipped when the server says Content-Encoding: gzip, within the byte caps */
  body: AsyncIterable<Buffer>;
  /** drop the connection (a consumer that stops before the end of the body) */
  cancel(): void;
}

/**
 * The URL as it may be printed: no userinfo, no query string (tokens sometimes travel in queries),
 * registered secrets masked (a token in the path). Masked after it is parsed: a secret that is also a
 * piece of the host (`[REDACTED]` is no host) does not make the URL unreadable.
 */
export function displayUrl(url: string): string {
  const u = new URL(url);
  return maskSecrets(`${u.origin}${u.pathname}`);
}

export async function httpGet(configuredUrl: string, opts: HttpGetOptions): Promise<HttpBody> {
  const { url, configured } = credentialsOf(configuredUrl, opts);
  const hasCredentials = Object.keys(configured).length > 0;
  const place = { file: displayUrl(url) };
  const backoff = opts.backoffMs ?? 500;
  for (let attempt = 0; ; attempt++) {
    if (opts.signal?.aborted) throw new AbortedError(`GET ${place.file}`, opts.signal.reason);
    const got = await getOnce(url, configured, hasCredentials, opts, place);
    if (!('failure' in got)) return got;
    const { failure, retryAfterMs } = got;
    if (!failure.retryable || attempt >= opts.retries) throw failure;
    const delay = retryAfterMs ?? backoff * 2 ** attempt * (0.75 + Math.random() * 0.5);
    opts.logger?.warn(
      { url: place.file, attempt: attempt + 1, delayMs: Math.round(delay) },
      `feed GET failed, retrying: ${failure.message}`,
    );
    await sleep(delay, undefined, { signal: opts.signal }).catch((err) => {
      throw new AbortedError(`GET ${place.file}`, err);
    });
  }
}

/**
 * The URL without its userinfo, and the headers sent to its origin (the credentials registered as
 * secrets first). The URL's own secrets (its userinfo, a ?token= value) are its caller's to register,
 * once, from the configured URL: a URL asked here may be a server's nextLink, whose query values
 * ($skiptoken) are no secrets, and would grow the registry by one every page.
 */
function credentialsOf(
  configuredUrl: string,
  opts: HttpGetOptions,
): { url: string; configured: Record<string, string> } {
  if (!opts.tokenIssued) registerSecret(opts.bearerToken);
  registerHeaderSecrets(opts.headers);
  const { url, basic } = splitUserinfo(configuredUrl);
  const configured: Record<string, string> = { ...opts.headers };
  if (basic) configured.authorization = basic;
  if (opts.bearerToken) configured.authorization = `Bearer ${opts.bearerToken}`;
  return { url, configured };
}

/** One GET (and its redirects): the body, or the failure with the wait its Retry-After asks (one no retry helps is thrown). */
async function getOnce(
  url: string,
  configured: Record<string, string>,
  hasCredentials: boolean,
  opts: HttpGetOptions,
  place: { file: string },
): Promise<HttpBody | { failure: FeedReadError; retryAfterMs?: number }> {
  try {
    const { res, finalUrl } = await follow(url, configured, hasCredentials, opts, place);
    if (res.status >= 200 && res.status < 300) {
      return {
        response: { status: res.status, headers: res.headers, url: finalUrl },
        body: decodedBody(res, opts, place),
        cancel: res.cancel,
      };
    }
    const message = errorBodyMessage(await readErrorBody(res.body, res.cancel), res.headers.get('content-encoding'));
    const after = parseRetryAfter(res.headers.get('retry-after'));
    const shown = message && maskSecrets(message);
    const hint = (res.status === 404 || res.status === 410) && opts.notFoundHint ? `; ${opts.notFoundHint}` : '';
    const failure = new FeedReadError(
      `HTTP ${res.status} ${statusText(res.status)}${shown ? `: ${shown}` : ''}${hint}`,
      place,
      isRetryableStatus(res.status),
      { status: res.status },
    );
    return { failure, ...(after !== undefined && { retryAfterMs: Math.min(after, MAX_RETRY_AFTER_MS) }) };
  } catch (err) {
    if (err instanceof FeedReadError && !err.retryable) throw err;
    if (opts.signal?.aborted) throw new AbortedError(`GET ${place.file}`, err);
    return { failure: err instanceof FeedReadError ? err : transportFailure(err, opts, place, 'response') };
  }
}

/** One GET and the redirects after it, each hop checked before anything is sent to it. */
async function follow(
  start: string,
  configured: Record<string, string>,
  hasCredentials: boolean,
  opts: HttpGetOptions,
  place: { file: string },
): Promise<{ res: BoundedResponse; finalUrl: string }> {
  const origin = new URL(start).origin;
  const maxRedirects = opts.maxRedirects ?? FEED_LIMIT_DEFAULTS.maxRedirects;
  let url = start;
  for (let hop = 0; ; hop++) {
    const sameOrigin = new URL(url).origin === origin;
    const headers: Record<string, string> = { 'accept-encoding': 'gzip', ...(sameOrigin ? configured : {}) };
    await opts.budget?.beforeRequest(opts.signal);
    opts.onRequest?.();
    const quiet = warnWhileQuiet(opts, place);
    const res = await boundedRequest({
      method: 'GET',
      url,
      headers,
      deadlineMs: opts.timeoutMs,
      maxBytes: opts.maxBytes ?? FEED_LIMIT_DEFAULTS.maxBytes,
      signal: opts.signal,
    }).finally(quiet);
    await opts.budget?.onResponse(res.status, res.headers);
    const location = res.headers.get('location');
    if (res.status < 300 || res.status >= 400 || res.status === 304 || !location) return { res, finalUrl: url };
    res.cancel();
    const next = URL.parse(location, url);
    if (!next)
      throw new FeedReadError(
        `HTTP ${res.status} redirect to a Location that is not a URL: not followed`,
        place,
        false,
      );
    const shown = displayUrl(next.toString());
    if (next.protocol !== 'http:' && next.protocol !== 'https:') {
      throw new FeedReadError(
        `HTTP ${res.status} redirect to ${next.protocol} refused: feeds are read over http(s) only`,
        place,
        false,
      );
    }
    if (next.origin !== origin && hasCredentials) {
      throw new FeedReadError(
        `HTTP ${res.status} redirect to another origin (${shown}) refused: the feed has credentials or headers configured, ` +
          'and they are never sent to another origin; configure the final URL instead',
        place,
        false,
      );
    }
    if (hop >= maxRedirects)
      throw new FeedReadError(`more than ${maxRedirects} redirects (last to ${shown})`, place, false);
    opts.logger?.debug({ from: displayUrl(url), to: shown, status: res.status }, 'feed redirect followed');
    url = next.toString();
  }
}

/** Longest a request waits for its answer before a warning says so (half the deadline when that is shorter). */
const QUIET_WARN_MS = 30_000;

/**
 * A server that takes the request and does not answer would hold the run silently for the whole
 * deadline (10 min by default), each retry again: one warning, once no answer has come for a while,
 * says which URL, how long the run will wait and the settings that decide it. Returns the timer's stop.
 */
function warnWhileQuiet(opts: HttpGetOptions, place: { file: string }): () => void {
  if (!opts.logger) return () => {};
  const afterMs = Math.min(QUIET_WARN_MS, Math.round(opts.timeoutMs / 2));
  const s = (ms: number) => `${Math.round(ms / 1000)} s`;
  const retries = opts.retries > 0 ? `, then retried up to ${opts.retries} time(s) (feeds[].source.retries)` : '';
  const timer = setTimeout(() => {
    opts.logger?.warn(
      { url: place.file, afterMs, timeoutMs: opts.timeoutMs },
      `GET ${place.file}: no answer yet after ${s(afterMs)}; waiting up to ${s(opts.timeoutMs)} in all (feeds[].source.timeoutMs)${retries}. A server that takes this long may be down or stuck: check it, or lower the setting`,
    );
  }, afterMs);
  timer.unref();
  return () => clearTimeout(timer);
}

function decodedBody(res: BoundedResponse, opts: HttpGetOptions, place: { file: string }): AsyncIterable<Buffer> {
  const encoding = (res.headers.get('content-encoding') ?? 'identity').trim().toLowerCase();
  const raw = guardBody(countBytes(res.body, opts.budget), opts, place);
  if (encoding === 'identity' || encoding === '') return raw;
  if (encoding === 'gzip' || encoding === 'x-gzip') return boundedGunzip(raw, opts, place.file, res.cancel);
  res.cancel();
  return failing(
    new FeedReadError(
      `the server sent Content-Encoding: ${encoding}, which feedsync does not decode (it asks for gzip)`,
      place,
      false,
    ),
  );
}

/** A body whose first read fails with `err`: the error reaches the reader where a body's would. */
function failing(err: Error): AsyncIterable<Buffer> {
  return { [Symbol.asyncIterator]: () => ({ next: () => Promise.reject(err) }) };
}

async function* countBytes(body: AsyncIterable<Buffer>, budget: RequestBudget | undefined): AsyncIterable<Buffer> {
  for await (const c of body) {
    budget?.onBytes?.(c.length);
    yield c;
  }
}

/** Errors of the raw body become FeedReadError (or AbortedError) that name the feed and the bound. */
async function* guardBody(
  body: AsyncIterable<Buffer>,
  opts: HttpGetOptions,
  place: { file: string },
): AsyncIterable<Buffer> {
  try {
    yield* body;
  } catch (err) {
    if (opts.signal?.aborted) throw new AbortedError(`GET ${place.file}`, err);
    throw transportFailure(err, opts, place, 'body');
  }
}

function transportFailure(
  err: unknown,
  opts: HttpGetOptions,
  place: { file: string },
  stage: 'response' | 'body',
): FeedReadError {
  if (err instanceof RequestStopped && err.reason === 'too-large') {
    return new FeedReadError(
      `the response is larger than source.maxBytes (${err.limit} bytes); reading stopped there`,
      place,
      false,
      { cause: err },
    );
  }
  if (err instanceof RequestStopped && err.reason === 'deadline') {
    const what = stage === 'body' ? 'the response body was not complete' : 'no response';
    return new FeedReadError(
      `${what} within ${opts.timeoutMs} ms (source.timeoutMs, a total deadline per request)`,
      place,
      true,
      { cause: err },
    );
  }
  const why =
    stage === 'body' ? `the response body broke off: ${causeMessage(err)}` : `network error: ${causeMessage(err)}`;
  return new FeedReadError(maskSecrets(why), place, true, { cause: err });
}

/** A URL's userinfo becomes a Basic Authorization header (and leaves the URL). */
function splitUserinfo(url: string): { url: string; basic?: string } {
  const u = new URL(url);
  if (!u.username && !u.password) return { url };
  const basic = `Basic ${Buffer.from(`${decodeURIComponent(u.username)}:${decodeURIComponent(u.password)}`).toString('base64')}`;
  registerSecret(basic);
  u.username = '';
  u.password = '';
  return { url: u.toString(), basic };
}
