// Where a budget's shared state lives. Two backends with one face: Redis (every process on the
// Redis shares it: the deployment's budget) and memory (one process: a CLI run without Redis).
// Hour and day windows are rate-limiter-flexible's fixed windows (RateLimiterRedis / Memory). Second
// and minute windows are sliding logs instead: a fixed window lets its whole limit through at the end
// of one window and again at the start of the next (2 × the limit within one second), which a
// server that suspends a token past 2 requests/s does not forgive. The log keeps the time of each
// request in the window (at most the limit: 180 for Trestle's minute). A request counts from its
// take until its answer whatever the time (`held`: it may reach the server at any moment until
// then, a send held up in our process too), and from its answer (`settle` stamps it then) for the
// window: the server saw it before we had its answer, so a request taken a window after that
// answer reaches the server a window after it at least. The server's count is then never passed
// with the log spanning the window alone; SLIDING_MARGIN adds 2% for the clocks (Redis's and the
// server's tick apart by parts per million; both count whole milliseconds) and a request whose
// answer we stopped waiting for before it arrived (a timeout). A process that dies never settles:
// its held entries count for their `heldMs` (renewed while the call is in flight), then a window.
// Leases, the pause and learned limits are small keys beside them. Every call asks Redis twice: one
// script takes the pause check, the lease and every sliding window at once (all or nothing), one
// settles them when the answer comes; an hour or day window adds its own ask. The scripts go by
// their sha1 (EVALSHA), their text only when Redis answers that it does not know it (runScript).
import { createHash } from 'node:crypto';
import type { RateLimiterAbstract, RateLimiterMemory, RateLimiterRedis, RateLimiterRes } from 'rate-limiter-flexible';
import type { RedisClient } from '../redis/client.js';
import { keysOf } from '../redis/keys.js';
import type { WindowName } from './limits.js';

/** A budget's "paused until": set on a 429/503 with Retry-After; every process waits it out. */
export interface PauseRecord {
  /** epoch ms the pause ends */
  until: number;
  /** epoch ms it was set, by the store's clock (tests compare the service's request log with it) */
  at: number;
  reason: string;
}

/** A fixed window's answer: taken, or how long until it refills. */
export type ConsumeResult = { ok: true } | { ok: false; waitMs: number };

/** The windows kept as sliding logs (exact), and their safety margin over the window. */
export const SLIDING_WINDOWS: ReadonlySet<WindowName> = new Set(['perSecond', 'perMinute']);
const SLIDING_MARGIN = 1.02;

/** What one call takes at once: a slot in flight and a request of every sliding window. */
export interface TakeRequest {
  /** the call's id: its lease, and its entry in each sliding log */
  id: string;
  lease?: { limit: number; ttlMs: number };
  sliding: ReadonlyArray<{ window: WindowName; points: number; durationSec: number }>;
  /** how long the entries count as held (in flight) unless settled or renewed: a dead process's expire */
  heldMs: number;
}

/** Nothing is taken unless everything is: a pause, a full lease set or a full window says why. */
export type TakeResult =
  | { ok: true }
  | { ok: false; reason: 'paused'; pause: PauseRecord; waitMs: number }
  | { ok: false; reason: 'lease' }
  | { ok: false; reason: 'window'; window: WindowName; waitMs: number };

export interface BudgetBackend {
  readonly shared: boolean;
  /** the shared pause, the lease and every sliding window of one call, in one step (one round trip) */
  take(key: string, req: TakeRequest): Promise<TakeResult>;
  /**
   * the call is answered (or failed), in one step: its sliding entries count from now (the server
   * saw it at some moment before its answer, so the later time is the safe one) and its slot is free
   */
  settle(key: string, req: TakeRequest): Promise<void>;
  /** one request of a fixed window (hour, day) holding `limit`; when spent, how long until it refills */
  consume(key: string, window: WindowName, limit: number, durationSec: number): Promise<ConsumeResult>;
  /** a call still in flight keeps its lease another lease ttl and its held window entries another heldMs (a dead process's expire) */
  renewLease(key: string, req: TakeRequest): Promise<void>;
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

// rate-limiter-flexible is loaded with the first hour or day window a budget counts, not with every
// run: most budgets have second and minute windows only (the sliding logs), and its import costs
// more CPU than a small run's calls. One promise, so every limiter comes from the one module.
let flexible: Promise<typeof import('rate-limiter-flexible')> | undefined;
const loadFlexible = () => (flexible ??= import('rate-limiter-flexible'));

async function consumeWith(limiter: Promise<RateLimiterAbstract>, limit: number): Promise<ConsumeResult> {
  const res: RateLimiterRes = await (await limiter).consume('n', 1);
  return res.consumedPoints <= limit ? { ok: true } : { ok: false, waitMs: Math.max(1, res.msBeforeNext) };
}

// KEYS: pause, leases, then one sliding log per window. ARGV: id, lease limit (0: none), lease ttl
// ms, held ms, then limit and span ms per log. {0}: taken; {1, pause, ms left}; {2}: no slot free;
// {3, log index, ms until a request of it frees}. Redis's clock for every process alike. A held
// entry is scored at the end of its hold (now + held ms): it outlives every answered one, and a
// wait on it is a window at least (its answer, when it comes, counts a window from then).
const TAKE = `
local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
local raw = redis.call('GET', KEYS[1])
if raw then
  local ok, rec = pcall(cjson.decode, raw)
  local till = ok and tonumber(rec['until'])
  if till and till > now then return {1, raw, till - now} end
end
local slots = tonumber(ARGV[2])
if slots > 0 then
  redis.call('ZREMRANGEBYSCORE', KEYS[2], '-inf', now)
  if redis.call('ZCARD', KEYS[2]) >= slots then return {2} end
end
local held = tonumber(ARGV[4])
for i = 3, #KEYS do
  local limit = tonumber(ARGV[2 * i - 1])
  local span = tonumber(ARGV[2 * i])
  redis.call('ZREMRANGEBYSCORE', KEYS[i], '-inf', now - span)
  local n = redis.call('ZCARD', KEYS[i])
  if n >= limit then
    local first = redis.call('ZRANGE', KEYS[i], n - limit, n - limit, 'WITHSCORES')
    return {3, i - 2, math.max(1, math.min(tonumber(first[2]), now) + span - now)}
  end
end
if slots > 0 then
  redis.call('ZADD', KEYS[2], now + tonumber(ARGV[3]), ARGV[1])
  redis.call('PEXPIRE', KEYS[2], ARGV[3])
end
for i = 3, #KEYS do
  redis.call('ZADD', KEYS[i], now + held, ARGV[1])
  local keep = held + tonumber(ARGV[2 * i])
  if redis.call('PTTL', KEYS[i]) < keep then redis.call('PEXPIRE', KEYS[i], keep) end
end
return {0}`;

// KEYS: leases, then the sliding logs; ARGV: id, then span ms per log. (A log's expiry is never
// cut short: other entries of it may be held longer.)
const SETTLE = `
local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
for i = 2, #KEYS do
  if redis.call('ZSCORE', KEYS[i], ARGV[1]) then
    redis.call('ZADD', KEYS[i], now, ARGV[1])
    if redis.call('PTTL', KEYS[i]) < tonumber(ARGV[i]) then redis.call('PEXPIRE', KEYS[i], ARGV[i]) end
  end
end
redis.call('ZREM', KEYS[1], ARGV[1])
return 0`;

// KEYS: leases, then the sliding logs; ARGV: id, lease ttl ms, held ms, then span ms per log. The
// lease is kept another ttl, each entry still held (scored ahead of now) another held ms.
const LEASE_RENEW = `
local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
local ttl = tonumber(ARGV[2])
local held = tonumber(ARGV[3])
if ttl > 0 and redis.call('ZSCORE', KEYS[1], ARGV[1]) then
  redis.call('ZADD', KEYS[1], now + ttl, ARGV[1])
  redis.call('PEXPIRE', KEYS[1], ttl)
end
for i = 2, #KEYS do
  local score = redis.call('ZSCORE', KEYS[i], ARGV[1])
  if score and tonumber(score) > now then
    redis.call('ZADD', KEYS[i], now + held, ARGV[1])
    local keep = held + tonumber(ARGV[i + 2])
    if redis.call('PTTL', KEYS[i]) < keep then redis.call('PEXPIRE', KEYS[i], keep) end
  end
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

/**
 * Runs a script by its sha1 (EVALSHA), so a call's two asks do not carry the script's text (1.5 KB
 * a call, written by every worker for every call); the text goes (EVAL, which also loads it) only
 * when Redis answers NOSCRIPT: a restart, a SCRIPT FLUSH, another node of a cluster.
 */
function runScript(lua: string): (redis: RedisClient, keys: number, ...args: string[]) => Promise<unknown> {
  const sha = createHash('sha1').update(lua).digest('hex');
  return async (redis, keys, ...args) => {
    try {
      return await redis.evalsha(sha, keys, ...args);
    } catch (err) {
      if (!(err instanceof Error && err.message.startsWith('NOSCRIPT'))) throw err;
      return redis.eval(lua, keys, ...args);
    }
  };
}
const take = runScript(TAKE);
const settle = runScript(SETTLE);
const leaseRenew = runScript(LEASE_RENEW);
const pauseExtend = runScript(PAUSE_EXTEND);

/** The record is kept a while after the pause ends, so `runs`/tests can still see what happened. */
const PAUSE_KEEP_MS = 10 * 60_000;

export function redisBackend(redis: RedisClient, prefix: string): BudgetBackend {
  // (promises of limiters: the calls that ask while the module loads share the one limiter)
  const limiters = new Map<string, Promise<RateLimiterRedis>>();
  const k = keysOf(prefix).budget;
  const limiter = (key: string, window: WindowName, durationSec: number) => {
    const id = `${key}:${window}:${durationSec}`;
    let l = limiters.get(id);
    if (!l) {
      const options = {
        storeClient: redis,
        keyPrefix: k(key, `${window}-${durationSec}`),
        points: UNCOUNTED,
        duration: durationSec,
      };
      limiters.set(id, (l = loadFlexible().then((m) => new m.RateLimiterRedis(options))));
    }
    return l;
  };
  return {
    shared: true,
    take: async (key, req) => {
      const logs = req.sliding.map((w) => k(key, `${w.window}-log`));
      const args = req.sliding.flatMap((w) => [String(w.points), String(spanOf(w.durationSec))]);
      const lease = req.lease ?? { limit: 0, ttlMs: 0 };
      const r = await take(
        redis,
        2 + logs.length,
        k(key, 'pause'),
        k(key, 'inflight'),
        ...logs,
        req.id,
        String(lease.limit),
        String(lease.ttlMs),
        String(req.heldMs),
        ...args,
      );
      return takeResult(r, req);
    },
    settle: async (key, req) => {
      const logs = req.sliding.map((w) => k(key, `${w.window}-log`));
      await settle(
        redis,
        1 + logs.length,
        k(key, 'inflight'),
        ...logs,
        req.id,
        ...req.sliding.map((w) => String(spanOf(w.durationSec))),
      );
    },
    consume: (key, window, limit, durationSec) => consumeWith(limiter(key, window, durationSec), limit),
    renewLease: async (key, req) =>
      void (await leaseRenew(
        redis,
        1 + req.sliding.length,
        k(key, 'inflight'),
        ...req.sliding.map((w) => k(key, `${w.window}-log`)),
        req.id,
        String(req.lease?.ttlMs ?? 0),
        String(req.heldMs),
        ...req.sliding.map((w) => String(spanOf(w.durationSec))),
      )),
    readPause: async (key) => parsePause(await redis.get(k(key, 'pause'))),
    pause: async (key, until, reason) =>
      void (await pauseExtend(redis, 1, k(key, 'pause'), String(until), reason, String(PAUSE_KEEP_MS))),
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
  // (promises of limiters: the calls that ask while the module loads share the one count)
  const limiters = new Map<string, Promise<RateLimiterMemory>>();
  // A sliding log as two Maps, the held entries (id -> end of the hold: calls in flight, a few) and
  // the answered ones (id -> answer time), whose insertion order is time order (an entry is added at
  // "now" when settled), so expired entries leave from the front and the size is the count, without
  // a sort or a scan of the window per call. Held entries sort after the answered ones, as Redis's scores do.
  // (by credential, then window: no key string is joined per call)
  const logs = new Map<string, Map<WindowName, SlidingLog>>();
  const leases = new Map<string, Map<string, number>>();
  const pauses = new Map<string, PauseRecord>();
  const learned = new Map<string, Partial<Record<WindowName, number>>>();
  const limiter = (key: string, window: WindowName, durationSec: number) => {
    const id = `${key}:${window}:${durationSec}`;
    let l = limiters.get(id);
    if (!l)
      limiters.set(
        id,
        (l = loadFlexible().then(
          (m) => new m.RateLimiterMemory({ keyPrefix: id, points: UNCOUNTED, duration: durationSec }),
        )),
      );
    return l;
  };
  const logOf = (key: string, window: WindowName) => {
    let ofKey = logs.get(key);
    if (!ofKey) logs.set(key, (ofKey = new Map()));
    let log = ofKey.get(window);
    if (!log) ofKey.set(window, (log = { held: new Map(), answered: new Map() }));
    return log;
  };
  const slots = (key: string) => {
    let m = leases.get(key);
    if (!m) leases.set(key, (m = new Map()));
    const now = Date.now();
    // (forEach, not for-of: no [id, exp] array made per lease and per call, 1.5 KB a call at 16 in flight)
    m.forEach((exp, id) => exp <= now && m.delete(id));
    return m;
  };
  return {
    shared: false,
    take: async (key, req) => {
      const now = Date.now();
      const pause = pauses.get(key);
      if (pause && pause.until > now) return { ok: false, reason: 'paused', pause, waitMs: pause.until - now };
      if (req.lease && slots(key).size >= req.lease.limit) return { ok: false, reason: 'lease' };
      for (const w of req.sliding) {
        const waitMs = fullFor(logOf(key, w.window), w.points, spanOf(w.durationSec), now);
        if (waitMs !== undefined) return { ok: false, reason: 'window', window: w.window, waitMs };
      }
      if (req.lease) slots(key).set(req.id, now + req.lease.ttlMs);
      for (const w of req.sliding) logOf(key, w.window).held.set(req.id, now + req.heldMs);
      return { ok: true };
    },
    settle: async (key, req) => {
      for (const w of req.sliding) {
        const { held, answered } = logOf(key, w.window);
        if (held.delete(req.id) || answered.delete(req.id)) answered.set(req.id, Date.now());
      }
      slots(key).delete(req.id);
    },
    consume: async (key, window, limit, durationSec) => consumeWith(limiter(key, window, durationSec), limit),
    renewLease: async (key, req) => {
      const m = slots(key);
      if (req.lease && m.has(req.id)) m.set(req.id, Date.now() + req.lease.ttlMs);
      for (const w of req.sliding) {
        const { held } = logOf(key, w.window);
        if (held.has(req.id)) held.set(req.id, Date.now() + req.heldMs);
      }
    },
    readPause: async (key) => pauses.get(key),
    pause: async (key, until, reason) => {
      const cur = pauses.get(key);
      if (!cur || cur.until < until) pauses.set(key, { until, at: Date.now(), reason });
    },
    readLearned: async (key) => ({ ...learned.get(key) }),
    learn: async (key, window, limit) => void learned.set(key, { ...learned.get(key), [window]: limit }),
  };
}

/** One sliding window's log in memory: the entries held (in flight) and those answered, by id. */
interface SlidingLog {
  held: Map<string, number>;
  answered: Map<string, number>;
}

/** The log's expired entries dropped; when it holds `points`, how long until one more may be taken. */
function fullFor(log: SlidingLog, points: number, span: number, now: number): number | undefined {
  const { held, answered } = log;
  for (const [id, at] of answered) {
    if (at > now - span) break;
    answered.delete(id);
  }
  held.forEach((until, id) => until <= now - span && held.delete(id));
  const n = answered.size + held.size;
  if (n < points) return undefined;
  // the entry that must leave for one more: an answered one's time, or a held one's (now at the earliest)
  const first = n - points < answered.size ? nth(answered.values(), n - points) : now;
  return Math.max(1, first + span - now);
}

/** The n-th value (from 0) of an iteration; the log's oldest entries are looked at only on a refusal. */
function nth(values: Iterable<number>, n: number): number {
  let i = 0;
  for (const v of values) if (i++ === n) return v;
  return 0;
}

/** The TAKE script's answer as a TakeResult. */
function takeResult(r: unknown, req: TakeRequest): TakeResult {
  const parts: unknown[] = Array.isArray(r) ? r : [];
  const [code, a, b] = parts;
  if (code === 0) return { ok: true };
  if (code === 2) return { ok: false, reason: 'lease' };
  if (code === 1) {
    const pause = parsePause(typeof a === 'string' ? a : null);
    if (pause) return { ok: false, reason: 'paused', pause, waitMs: Math.max(1, Number(b)) };
  }
  const window = req.sliding[Number(a) - 1]?.window;
  if (code === 3 && window) return { ok: false, reason: 'window', window, waitMs: Math.max(1, Number(b)) };
  throw new Error(`budget take: unexpected answer from Redis: ${JSON.stringify(r)}`);
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
    return undefined; // (not JSON: as no pause; the next 429 sets one again)
  }
}
