// GET with a timeout, retries with backoff (network errors, 5xx, 408, 429 with Retry-After), extra
// headers and a bearer token. Retries happen before the body is read; a body that breaks midway is
// the caller's FeedReadError (restarting would replay records already handed on).
import { setTimeout as sleep } from 'node:timers/promises';
import { AbortedError, causeMessage, FeedReadError, isRetryableStatus } from '../errors.js';
import { registerSecret, type Logger } from '../log.js';

/**
 * Paces requests to a source's request budget (source.limits, shared per credential; see
 * source-budget.ts): awaited before every request attempt, told every response's status and headers
 * (quota headers, Retry-After) before its body is read. beforeRequest may throw a retryable
 * FeedReadError with `retryAt` when the budget is spent for longer than a read can wait.
 */
export interface RequestBudget {
  beforeRequest(signal?: AbortSignal): Promise<void>;
  onResponse(status: number, headers: Headers): Promise<void>;
}

export interface HttpGetOptions {
  headers?: Record<string, string>;
  bearerToken?: string;
  timeoutMs: number;
  retries: number;
  signal?: AbortSignal;
  logger?: Logger;
  /** base delay of the exponential backoff (tests make it small) */
  backoffMs?: number;
  budget?: RequestBudget;
}

export interface HttpBody {
  response: Response;
  /** the body, with an idle timeout between chunks (a stalled server is an error, not a hang) */
  body: AsyncIterable<Uint8Array>;
  /** drop the connection (a consumer that stops before the end of the body) */
  cancel(): void;
}

/** The URL without its query string: safe to print (tokens sometimes travel in queries). */
export function displayUrl(url: string): string {
  const u = new URL(url);
  return `${u.origin}${u.pathname}`;
}

export async function httpGet(url: string, opts: HttpGetOptions): Promise<HttpBody> {
  const headers: Record<string, string> = { 'accept-encoding': 'gzip', ...opts.headers };
  if (opts.bearerToken) {
    registerSecret(opts.bearerToken);
    headers.authorization = `Bearer ${opts.bearerToken}`;
  }
  const place = { file: displayUrl(url) };
  const backoff = opts.backoffMs ?? 500;
  for (let attempt = 0; ; attempt++) {
    if (opts.signal?.aborted) throw new AbortedError(`GET ${place.file}`, opts.signal.reason);
    await opts.budget?.beforeRequest(opts.signal);
    const controller = new AbortController();
    const onAbort = () => controller.abort(opts.signal?.reason);
    opts.signal?.addEventListener('abort', onAbort, { once: true });
    let timedOut = false;
    let timer = setTimeout(() => ((timedOut = true), controller.abort()), opts.timeoutMs);
    let retryAfterMs: number | undefined;
    let failure: FeedReadError;
    try {
      const response = await fetch(url, { headers, signal: controller.signal, redirect: 'follow' });
      await opts.budget?.onResponse(response.status, response.headers);
      if (response.ok && response.body) {
        const bodyStream = response.body;
        const body = (async function* () {
          let finished = false;
          try {
            const reader = bodyStream.getReader();
            for (;;) {
              clearTimeout(timer);
              timer = setTimeout(() => ((timedOut = true), controller.abort()), opts.timeoutMs);
              const { done, value } = await reader.read();
              if (done) return void (finished = true);
              yield value;
            }
          } catch (err) {
            finished = true;
            if (opts.signal?.aborted) throw new AbortedError(`GET ${place.file}`, err);
            const why = timedOut ? `no data for ${opts.timeoutMs} ms` : causeMessage(err);
            throw new FeedReadError(`the response body broke off: ${why}`, place, true, { cause: err });
          } finally {
            clearTimeout(timer);
            opts.signal?.removeEventListener('abort', onAbort);
            // the consumer stopped early: close the connection rather than leave it to the GC
            if (!finished) controller.abort();
          }
        })();
        return { response, body, cancel: () => controller.abort() };
      }
      clearTimeout(timer);
      opts.signal?.removeEventListener('abort', onAbort);
      const snippet = (await response.text().catch(() => '')).slice(0, 200);
      retryAfterMs = parseRetryAfter(response.headers.get('retry-after'));
      failure = new FeedReadError(
        `HTTP ${response.status} ${response.statusText}${snippet ? `: ${JSON.stringify(snippet)}` : ''}`,
        place,
        isRetryableStatus(response.status),
        { status: response.status },
      );
    } catch (err) {
      clearTimeout(timer);
      opts.signal?.removeEventListener('abort', onAbort);
      if (opts.signal?.aborted) throw new AbortedError(`GET ${place.file}`, err);
      const why = timedOut ? `no response within ${opts.timeoutMs} ms` : `network error: ${causeMessage(err)}`;
      failure = new FeedReadError(why, place, true, { cause: err });
    }
    if (!failure.retryable || attempt >= opts.retries) throw failure;
    const delay = retryAfterMs ?? backoff * 2 ** attempt * (0.75 + Math.random() * 0.5);
    opts.logger?.warn({ url: place.file, attempt: attempt + 1, delayMs: Math.round(delay) }, `feed GET failed, retrying: ${failure.message}`);
    await sleep(delay, undefined, { signal: opts.signal }).catch((err) => {
      throw new AbortedError(`GET ${place.file}`, err);
    });
  }
}

function parseRetryAfter(value: string | null): number | undefined {
  if (!value) return undefined;
  const secs = Number(value);
  if (Number.isFinite(secs)) return Math.min(secs * 1000, 60_000);
  const at = Date.parse(value);
  return Number.isNaN(at) ? undefined : Math.min(Math.max(0, at - Date.now()), 60_000);
}
