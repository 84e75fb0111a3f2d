// Where a budget's shared state lives. Two backends with one face: Redis (every process on the
// Redis shares it: the deployment's budget) and memory (one process: a CLI run without Redis).
// Hour and day windows are rate-limiter-flexible's fixed windows (RateLimiterRedis / Memory). Second
// and minute windows are sliding logs instead: a fixed window lets its whole limit through at the end
// of one window and again at the start of the next (2 × the limit within one second), which a
// server that suspends a token past 2 requests/s does not forgive. The log keeps the time of each
// request in the window (at most the limit: 180 for Trestle's minute), and spans the window plus
// SLIDING_MARGIN. A request's entry is stamped again when its answer comes (`restamp`): the server
// saw it at some moment between our take and its answer, so the later time is the safe one (a send
// held up in our process must not let the next one through early).
// Leases, the pause and learned limits are small keys beside them.
import { randomUUID } from 'node:crypto';
import { RateLimiterMemory, RateLimiterRedis, RateLimiterRes, type RateLimiterAbstract } from 'rate-limiter-flexible';
import type { Redis } from 'ioredis';
import type { WindowName } from './limits.js';

/** A budget's "paused until": set on a 429/503 with Retry-After; every process waits it out. */
export interface PauseRecord {
  /** epoch ms the pause ends */
  until: number;
  /** epoch ms it was set, by the store's clock (tests compare the service's request log with it) */
  at: number;
  reason: string;
}

/** `stamp`: the entry of a sliding window, to restamp when the answer comes */
export type ConsumeResult = { ok: true; stamp?: string } | { ok: false; waitMs: number };

/** The windows kept as sliding logs (exact), and their safety margin over the window. */
export const SLIDING_WINDOWS: ReadonlySet<WindowName> = new Set(['perSecond', 'perMinute']);
export const SLIDING_MARGIN = 1.1;

export interface BudgetBackend {
  readonly shared: boolean;
  /** one request of a window holding `limit`; when the window is spent, how long until it refills */
  consume(key: string, window: WindowName, limit: number, durationSec: number): Promise<ConsumeResult>;
  /** a request of a sliding window was answered: it counts from now */
  restamp(key: string, window: WindowName, stamp: string, durationSec: number): Promise<void>;
  /** a lease on one of `limit` slots, expiring after `ttlMs` unless renewed (a dead process frees it) */
  tryLease(key: string, limit: number, id: string, ttlMs: number): Promise<boolean>;
  renewLease(key: string, id: string, ttlMs: number): Promise<void>;
  releaseLease(key: string, id: string): Promise<void>;
  readPause(key: string): Promise<PauseRecord | undefined>;
  /** extends the pause to `until` (a shorter one never cuts a longer one short) */
  pause(key: string, until: number, reason: string): Promise<void>;
  /** limits learned from the service's quota headers (lower than configured), shared for `ttlMs` */
  readLearned(key: string): Promise<Partial<Record<WindowName, number>>>;
  learn(key: string, window: WindowName, limit: number, ttlMs: number): Promise<void>;
}

/**
 * The limiters count without a limit of their own (points: UNCOUNTED) and the budget compares the
 * count with its current limit, so a limit tightened at run time applies to what was already spent.
 */
const UNCOUNTED = 2 ** 31;

async function consumeWith(limiter: RateLimiterAbstract, limit: number): Promise<ConsumeResult> {
  const res: RateLimiterRes = await limiter.consume('n', 1);
  return res.consumedPoints <= limit ? { ok: true } : { ok: false, waitMs: Math.max(1, res.msBeforeNext) };
}

// KEYS[1] the log; ARGV: limit, span ms, a unique member. 0: taken; else ms until a slot frees.
const SLIDING_TAKE = `
local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
local limit = tonumber(ARGV[1])
local span = tonumber(ARGV[2])
redis.call('ZREMRANGEBYSCORE', KEYS[1], '-inf', now - span)
local n = redis.call('ZCARD', KEYS[1])
if n < limit then
  redis.call('ZADD', KEYS[1], now, ARGV[3])
  redis.call('PEXPIRE', KEYS[1], span)
  return 0
end
local first = redis.call('ZRANGE', KEYS[1], n - limit, n - limit, 'WITHSCORES')
return math.max(1, tonumber(first[2]) + span - now)`;

const SLIDING_RESTAMP = `
local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
if redis.call('ZSCORE', KEYS[1], ARGV[1]) then
  redis.call('ZADD', KEYS[1], now, ARGV[1])
  redis.call('PEXPIRE', KEYS[1], ARGV[2])
end
return 0`;

const LEASE_ACQUIRE = `
local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
redis.call('ZREMRANGEBYSCORE', KEYS[1], '-inf', now)
if redis.call('ZCARD', KEYS[1]) < tonumber(ARGV[1]) then
  redis.call('ZADD', KEYS[1], now + tonumber(ARGV[3]), ARGV[2])
  redis.call('PEXPIRE', KEYS[1], ARGV[3])
  return 1
end
return 0`;

const LEASE_RENEW = `
local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
if redis.call('ZSCORE', KEYS[1], ARGV[1]) then
  redis.call('ZADD', KEYS[1], now + tonumber(ARGV[2]), ARGV[1])
  redis.call('PEXPIRE', KEYS[1], ARGV[2])
end
return 0`;

// `at` is Redis's own time of the SET: from then on every acquire sees the pause.
const PAUSE_EXTEND = `
local cur = redis.call('GET', KEYS[1])
if cur then
  local ok, rec = pcall(cjson.decode, cur)
  if ok and tonumber(rec['until']) >= tonumber(ARGV[1]) then return 0 end
end
local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
local rec = cjson.encode({ ['until'] = tonumber(ARGV[1]), at = now, reason = ARGV[2] })
redis.call('SET', KEYS[1], rec, 'PX', math.max(1, tonumber(ARGV[1]) - now) + tonumber(ARGV[3]))
return 1`;

/** The record is kept a while after the pause ends, so `runs`/tests can still see what happened. */
const PAUSE_KEEP_MS = 10 * 60_000;

export function redisBackend(redis: Redis, prefix: string): BudgetBackend {
  const limiters = new Map<string, RateLimiterRedis>();
  const k = (key: string, part: string) => `${prefix}:budget:${key}:${part}`;
  const limiter = (key: string, window: WindowName, durationSec: number) => {
    const id = `${key}:${window}:${durationSec}`;
    let l = limiters.get(id);
    if (!l) limiters.set(id, (l = new RateLimiterRedis({ storeClient: redis, keyPrefix: k(key, `${window}-${durationSec}`), points: UNCOUNTED, duration: durationSec })));
    return l;
  };
  return {
    shared: true,
    consume: async (key, window, limit, durationSec) => {
      if (!SLIDING_WINDOWS.has(window)) return consumeWith(limiter(key, window, durationSec), limit);
      const stamp = randomUUID();
      const wait = Number(await redis.eval(SLIDING_TAKE, 1, k(key, `${window}-log`), String(limit), String(spanOf(durationSec)), stamp));
      return wait === 0 ? { ok: true, stamp } : { ok: false, waitMs: wait };
    },
    restamp: async (key, window, stamp, durationSec) =>
      void (await redis.eval(SLIDING_RESTAMP, 1, k(key, `${window}-log`), stamp, String(spanOf(durationSec)))),
    tryLease: async (key, limit, id, ttlMs) => (await redis.eval(LEASE_ACQUIRE, 1, k(key, 'inflight'), String(limit), id, String(ttlMs))) === 1,
    renewLease: async (key, id, ttlMs) => void (await redis.eval(LEASE_RENEW, 1, k(key, 'inflight'), id, String(ttlMs))),
    releaseLease: async (key, id) => void (await redis.zrem(k(key, 'inflight'), id)),
    readPause: async (key) => parsePause(await redis.get(k(key, 'pause'))),
    pause: async (key, until, reason) => void (await redis.eval(PAUSE_EXTEND, 1, k(key, 'pause'), String(until), reason, String(PAUSE_KEEP_MS))),
    readLearned: async (key) => {
      const raw = await redis.hgetall(k(key, 'learned'));
      const out: Partial<Record<WindowName, number>> = {};
      for (const [w, v] of Object.entries(raw)) if (isWindow(w) && Number(v) > 0) out[w] = Number(v);
      return out;
    },
    learn: async (key, window, limit, ttlMs) => {
      await redis.multi().hset(k(key, 'learned'), window, String(limit)).pexpire(k(key, 'learned'), ttlMs).exec();
    },
  };
}

export function memoryBackend(): BudgetBackend {
  const limiters = new Map<string, RateLimiterMemory>();
  const logs = new Map<string, Array<{ at: number; stamp: string }>>();
  const leases = new Map<string, Map<string, number>>();
  const pauses = new Map<string, PauseRecord>();
  const learned = new Map<string, Partial<Record<WindowName, number>>>();
  const limiter = (key: string, window: WindowName, durationSec: number) => {
    const id = `${key}:${window}:${durationSec}`;
    let l = limiters.get(id);
    if (!l) limiters.set(id, (l = new RateLimiterMemory({ keyPrefix: id, points: UNCOUNTED, duration: durationSec })));
    return l;
  };
  const slots = (key: string) => {
    let m = leases.get(key);
    if (!m) leases.set(key, (m = new Map()));
    const now = Date.now();
    for (const [id, exp] of m) if (exp <= now) m.delete(id);
    return m;
  };
  return {
    shared: false,
    consume: async (key, window, limit, durationSec) => {
      if (!SLIDING_WINDOWS.has(window)) return consumeWith(limiter(key, window, durationSec), limit);
      const span = spanOf(durationSec);
      const id = `${key}:${window}`;
      const now = Date.now();
      const log = (logs.get(id) ?? []).filter((e) => e.at > now - span).sort((a, b) => a.at - b.at);
      logs.set(id, log);
      if (log.length < limit) {
        const stamp = randomUUID();
        log.push({ at: now, stamp });
        return { ok: true, stamp };
      }
      return { ok: false, waitMs: Math.max(1, log[log.length - limit]!.at + span - now) };
    },
    restamp: async (key, window, stamp) => {
      const entry = logs.get(`${key}:${window}`)?.find((e) => e.stamp === stamp);
      if (entry) entry.at = Date.now();
    },
    tryLease: async (key, limit, id, ttlMs) => {
      const m = slots(key);
      if (m.size >= limit) return false;
      m.set(id, Date.now() + ttlMs);
      return true;
    },
    renewLease: async (key, id, ttlMs) => {
      const m = slots(key);
      if (m.has(id)) m.set(id, Date.now() + ttlMs);
    },
    releaseLease: async (key, id) => void slots(key).delete(id),
    readPause: async (key) => pauses.get(key),
    pause: async (key, until, reason) => {
      const cur = pauses.get(key);
      if (!cur || cur.until < until) pauses.set(key, { until, at: Date.now(), reason });
    },
    readLearned: async (key) => ({ ...learned.get(key) }),
    learn: async (key, window, limit) => void learned.set(key, { ...learned.get(key), [window]: limit }),
  };
}

function spanOf(durationSec: number): number {
  return Math.ceil(durationSec * 1000 * SLIDING_MARGIN);
}

function isWindow(w: string): w is WindowName {
  return w === 'perSecond' || w === 'perMinute' || w === 'perHour' || w === 'perDay';
}

function parsePause(raw: string | null): PauseRecord | undefined {
  if (!raw) return undefined;
  try {
    const rec = JSON.parse(raw) as Partial<PauseRecord>;
    if (typeof rec.until !== 'number' || typeof rec.at !== 'number') return undefined;
    return { until: rec.until, at: rec.at, reason: String(rec.reason ?? '') };
  } catch {
    return undefined;
  }
}
