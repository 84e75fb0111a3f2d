// The request budget of a feed source's credential (`source.limits`), handed to the feed transport
// as its `budget` hook. The credential is what the source authenticates with (bearer token, OAuth2
// client, auth headers) at its origin, hashed: every feed and process using one MLS token shares one budget.
// The server's quota headers tighten the limits at run time, and a 429/503 Retry-After pauses every
// process on the credential. A wait too long to make (a spent hourly or daily budget) stops the read
// with a retryable FeedReadError that says when the budget resets (`retryAt`).
import { parseRetryAfter } from '../../api/retry.js';
import {
  createBudgets,
  credentialKey,
  memoryBackend,
  WINDOWS,
  type Budget,
  type BudgetLimits,
  type Permit,
} from '../../budget/index.js';
import { BudgetExhaustedError, FeedReadError } from '../../errors.js';
import { silentLogger } from '../../log.js';
import type { FeedSource } from '../config-schema.js';
import type { RequestBudget } from './http.js';
import type { FeedContext } from '../types.js';

/** Waits up to this long for a window to refill (a minute window always); longer stops the read. */
const SOURCE_MAX_WAIT_MS = 70_000;

/**
 * Budgets of this process, for a reader given none (a test, a preview): limits still hold here.
 * (Silent: what a budget says is a Redis ask that failed, and the memory backend's cannot.)
 */
const processBudgets = createBudgets(memoryBackend(), silentLogger);

const AUTH_HEADERS = /^(authorization|x-api-key|api-key|x-auth-token|cookie)$/i;

export function sourceBudget(
  source: FeedSource,
  ctx: Pick<FeedContext, 'budgets' | 'sourceShare'>,
): RequestBudget | undefined {
  if (!source.url) return undefined;
  const origin = new URL(source.url).origin;
  const auth = Object.entries(source.headers ?? {})
    .filter(([name]) => AUTH_HEADERS.test(name))
    .map(([name, value]) => `${name.toLowerCase()}=${value}`)
    .sort()
    .join('\n');
  const client = 'auth' in source && source.auth ? `${source.auth.tokenUrl} ${source.auth.clientId}` : '';
  const key = credentialKey('feed', origin, source.bearerToken ?? '', auth, client);
  const { bytesPerHour, ...requests } = source.limits ?? {};
  const budgets = ctx.budgets ?? processBudgets;
  const budget = budgets.budget(key, requests, { label: `feed source ${origin}`, maxWaitMs: SOURCE_MAX_WAIT_MS });
  const share = ctx.sourceShare && shareOf(requests, ctx.sourceShare.share);
  const paced = requestBudget(
    budget,
    Date.now,
    share &&
      budgets.budget(`${key}-push-${ctx.sourceShare!.feed}`, share, {
        label: `feed source ${origin} (the push jobs of feed ${ctx.sourceShare!.feed}: push.sourceShare ${ctx.sourceShare!.share} of source.limits)`,
        maxWaitMs: SOURCE_MAX_WAIT_MS,
      }),
  );
  return bytesPerHour ? withByteLimit(paced, byteWindow(key, bytesPerHour), `feed source ${origin}`) : paced;
}

/** Bytes read in the current clock hour, per credential, in this process. */
interface ByteWindow {
  limit: number;
  hour: number;
  bytes: number;
}
const byteWindows = new Map<string, ByteWindow>();

function byteWindow(key: string, limit: number): ByteWindow {
  let w = byteWindows.get(key);
  if (!w) byteWindows.set(key, (w = { limit, hour: 0, bytes: 0 }));
  w.limit = Math.min(w.limit, limit);
  return w;
}

/**
 * A bytes-per-hour limit (MLS Grid: 4 GB an hour) over a request budget: bytes are counted as they
 * arrive, and once the hour's are spent no request is made until the next clock hour: the read stops
 * with a retryable error saying when. Counted in this process only (docs/vendors.md).
 */
function withByteLimit(
  inner: RequestBudget,
  w: ByteWindow,
  label: string,
  now: () => number = Date.now,
): RequestBudget {
  const roll = () => {
    const hour = Math.floor(now() / 3_600_000);
    if (hour !== w.hour) Object.assign(w, { hour, bytes: 0 });
  };
  return {
    async beforeRequest(signal) {
      roll();
      if (w.bytes >= w.limit) {
        const resetAt = new Date((w.hour + 1) * 3_600_000);
        throw new FeedReadError(
          `${label}: ${w.bytes} bytes read this hour, source.limits.bytesPerHour is ${w.limit}; the read stops here (nothing is deleted) and is retried at ${resetAt.toISOString()}`,
          { file: label },
          true,
          { retryAt: resetAt },
        );
      }
      await inner.beforeRequest(signal);
    },
    onResponse: (status, headers) => inner.onResponse(status, headers),
    onBytes(n) {
      roll();
      w.bytes += n;
    },
  };
}

/** A share of a credential's request windows (a push job's: push.sourceShare); undefined when the credential has none. */
function shareOf(limits: BudgetLimits, share: number): BudgetLimits | undefined {
  const out: BudgetLimits = {};
  for (const w of WINDOWS) if (limits[w] !== undefined) out[w] = limits[w] * share;
  return Object.keys(out).length ? out : undefined;
}

/**
 * The budget hook of a read: each request takes a permit of `budget` (the credential's), and first of
 * `share` when given (a push job's own share of it, push.sourceShare), so that share is all it can use.
 */
export function requestBudget(budget: Budget, now: () => number = Date.now, share?: Budget): RequestBudget {
  // The request in flight (a reader sends one at a time): its permits are released when it is answered.
  let pending: Permit | undefined;
  let pendingShare: Permit | undefined;
  const release = () => {
    pending?.release();
    pendingShare?.release();
    pending = pendingShare = undefined;
  };
  return {
    async beforeRequest(signal) {
      release();
      try {
        if (share) pendingShare = await share.acquire(signal);
        pending = await budget.acquire(signal);
      } catch (err) {
        release();
        if (!(err instanceof BudgetExhaustedError)) throw err;
        throw new FeedReadError(
          `${err.message}; the read stops here (nothing is deleted) and is retried after that`,
          { file: err.budget },
          true,
          {
            cause: err,
            retryAt: err.resetAt,
          },
        );
      }
    },
    async onResponse(status, headers) {
      release();
      const minute = count(headers.get('minute-quota-limit'));
      const hour = count(headers.get('hour-quota-limit'));
      if (minute) await budget.learnLimit('perMinute', minute);
      if (hour) await budget.learnLimit('perHour', hour);
      // A quota the server says is spent: wait for its reset rather than be refused (or suspended).
      for (const [window, label] of [
        ['minute', 'Minute'],
        ['hour', 'Hour'],
      ] as const) {
        if (count(headers.get(`${window}-quota-available`)) !== 0) continue;
        const reset = resetTime(headers.get(`${window}-quota-resettime`), now());
        if (reset !== undefined && reset > now()) await budget.pauseUntil(reset, `${label}-Quota-Available: 0`);
      }
      if (status === 429 || status === 503) {
        const after = parseRetryAfter(headers.get('retry-after'), now());
        if (after !== undefined) await budget.pauseUntil(now() + after, `HTTP ${status} with Retry-After`);
      }
    },
  };
}

function count(value: string | null): number | undefined {
  if (value === null || !/^\s*\d+\s*$/.test(value)) return undefined;
  return Number(value);
}

/**
 * A quota reset time as servers send it: an HTTP or ISO date, epoch seconds or milliseconds, or
 * seconds from now (a small number).
 */
export function resetTime(value: string | null, now: number): number | undefined {
  if (!value) return undefined;
  const v = value.trim();
  if (/^\d+(\.\d+)?$/.test(v)) {
    const n = Number(v);
    if (n > 1e12) return n;
    if (n > 1e9) return n * 1000;
    return now + n * 1000;
  }
  const at = Date.parse(v);
  return Number.isNaN(at) ? undefined : at;
}
