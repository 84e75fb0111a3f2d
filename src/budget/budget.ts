// A request budget for one credential, shared through a backend (Redis: every process; memory: this
// one). `acquire` waits until, at one moment, no shared pause holds (a 429/503 with Retry-After), a
// slot in flight is free (concurrency) and the sliding windows (per second, minute) have room, and
// takes them together in one ask; then a request of each fixed window (per hour, day). It hands out
// a permit the caller releases when its call is done (one more ask). Within a process the waiters
// queue in order, so only the head of the queue asks Redis.
import { randomUUID } from 'node:crypto';
import type { Logger } from '../log.js';
import { AbortedError, BudgetExhaustedError, RedisUnavailableError } from '../errors.js';
import { abortable, sleep } from './sleep.js';
import { SLIDING_WINDOWS, type BudgetBackend, type PauseRecord, type TakeRequest } from './backend.js';
import { describeLimits, WINDOWS, windowShape, type BudgetLimits, type WindowName } from './limits.js';

export interface Permit {
  /** the call is answered (or failed): its slot in flight is free, and it counts from now in the sliding windows */
  release(): void;
}

export interface Budget {
  /** hash-named key of the credential (never the secret) */
  readonly key: string;
  readonly limits: BudgetLimits;
  /**
   * Resolves when a call may be sent. Rejects with AbortedError when `signal` aborts first, and
   * with BudgetExhaustedError when the wait would be longer than the budget's maxWaitMs (a daily
   * budget spent, a pause of an hour): the error says when the budget resets.
   */
  acquire(signal?: AbortSignal): Promise<Permit>;
  /** every process on this credential waits until `until` (epoch ms) */
  pauseUntil(until: number, reason: string): Promise<void>;
  /** a limit the service announced (quota headers); applies when lower than the configured one */
  learnLimit(window: WindowName, limit: number): Promise<void>;
  /** the current pause, if any (for status views and tests) */
  pause(): Promise<PauseRecord | undefined>;
}

export interface BudgetOptions {
  /** who this budget is for, in messages: "feed source https://api.mlsgrid.com" */
  label: string;
  /** a wait longer than this is not made: acquire rejects with BudgetExhaustedError */
  maxWaitMs: number;
}

/**
 * A call's window entries count while it is in flight, and a dead process's this long after its
 * last renewal, so a source of 2 requests a second whose reader was killed mid-call is free again
 * about when its job is taken over (worker.lockDurationMs), not 30 s on.
 */
const HELD_MS = 10_000;
/**
 * A lease outlives a process by at most this long: as long as its held entries, for the same reason
 * (at 30 s, api.concurrency's slots that a killed worker held kept the job taken over from writing
 * for 30 s after the kill, measured with concurrency 1). No more calls: both are renewed RENEW_MS apart.
 */
const LEASE_TTL_MS = HELD_MS;
/** Both are renewed this often while the call is in flight. */
const RENEW_MS = Math.min(LEASE_TTL_MS, HELD_MS) / 3;
/**
 * A renewal or settle that fails is said at most this often per budget (a renewal fails every
 * RENEW_MS for each call in flight while Redis is away: 16 calls, 5 lines a second otherwise).
 */
const WARN_EVERY_MS = 60_000;
const LEARNED_TTL_MS = 24 * 3600_000;
const LEARNED_REFRESH_MS = 10_000;

/** `logger`: where a renewal or settle that fails in the background is said (failureStreaks). */
export function createBudget(
  backend: BudgetBackend,
  key: string,
  limits: BudgetLimits,
  opts: BudgetOptions,
  logger: Logger,
): Budget {
  let tail: Promise<void> = Promise.resolve();
  let learned: Partial<Record<WindowName, number>> = {};
  let learnedAt = -Infinity;
  const parts: BudgetParts = { backend, key, opts, asks: backgroundAsks(backend, key, opts.label, logger) };
  const callId = callIds();
  // Takes Redis left unanswered (or refused): one that waited its turn behind such a take fails with
  // its error, not another bound's wait in turn (20 writes waiting were 20 x 15 s).
  let unanswered = 0;
  let lastUnanswered: RedisUnavailableError | undefined;

  /** This process's queue of waiters: the caller's turn, or AbortedError. */
  async function turn(signal: AbortSignal | undefined): Promise<() => void> {
    const prev = tail;
    let release!: () => void;
    tail = new Promise<void>((r) => (release = r));
    try {
      await abortable(prev, signal, opts.label);
    } catch (err) {
      void prev.then(release); // keep the queue whole: pass the turn on once it comes
      throw err;
    }
    return release;
  }

  /**
   * The windows that hold now (configured, or learned when lower) and their sliding part, made again
   * only when what was learned changes: every call takes them, and they change a few times a day.
   */
  let shape: Shape | undefined;
  async function currentShape(): Promise<Shape> {
    if (Date.now() - learnedAt > LEARNED_REFRESH_MS) {
      learned = await backend.readLearned(key);
      learnedAt = Date.now();
      shape = undefined;
    }
    return (shape ??= shapeOf(limits, learned));
  }

  return {
    key,
    limits,
    async acquire(signal) {
      if (signal?.aborted) throw new AbortedError(opts.label, signal.reason);
      const behind = unanswered;
      const done = await turn(signal);
      try {
        if (lastUnanswered && unanswered !== behind) throw lastUnanswered;
        const { windows, sliding, fixed } = await currentShape();
        const req: TakeRequest = {
          id: callId(),
          ...(limits.concurrency && { lease: { limit: limits.concurrency, ttlMs: LEASE_TTL_MS } }),
          sliding,
          heldMs: HELD_MS,
        };
        await takeShared(parts, req, windows, signal);
        try {
          for (const [w, limit] of fixed) await takeFixed(parts, w, limit, signal);
        } catch (err) {
          // (the error thrown is the take's; a settle that fails too is said as release's is)
          parts.asks.settle(req);
          throw err;
        }
        return permit(parts, req);
      } catch (err) {
        if (err instanceof RedisUnavailableError && err !== lastUnanswered) {
          unanswered++;
          lastUnanswered = err;
        }
        throw err;
      } finally {
        done();
      }
    },
    pauseUntil: (until, reason) => backend.pause(key, Math.round(until), reason),
    async learnLimit(w, limit) {
      if (!(limit > 0) || limit === learned[w] || limit >= (limits[w] ?? Infinity)) return;
      learned = { ...learned, [w]: limit };
      shape = undefined;
      await backend.learn(key, w, limit, LEARNED_TTL_MS);
    },
    pause: () => backend.readPause(key),
  };
}

/**
 * A budget's call ids: a random UUID for the budget, then a count. Unique across processes as a
 * UUID a call would be (each budget, in each process, has a UUID of its own), without one made a
 * call: randomUUID's string was about 4% of what a first sync's calls allocate.
 */
export function callIds(): () => string {
  const prefix = randomUUID() + '.';
  let n = 0;
  return () => prefix + (++n).toString(36);
}

/** The windows a call takes: each one's limit (configured, or learned when lower), the sliding ones as the backend takes them, the fixed ones. */
interface Shape {
  windows: ReadonlyMap<WindowName, number>;
  sliding: TakeRequest['sliding'];
  fixed: ReadonlyArray<[WindowName, number]>;
}

function shapeOf(limits: BudgetLimits, learned: Partial<Record<WindowName, number>>): Shape {
  const windows = new Map<WindowName, number>();
  for (const w of WINDOWS) {
    const configured = limits[w];
    const heard = learned[w];
    const limit = configured === undefined ? heard : heard === undefined ? configured : Math.min(configured, heard);
    if (limit !== undefined && limit > 0) windows.set(w, limit);
  }
  return {
    windows,
    sliding: [...windows]
      .filter(([w]) => SLIDING_WINDOWS.has(w))
      .map(([w, limit]) => ({ window: w, ...windowShape(w, limit) })),
    fixed: [...windows].filter(([w]) => !SLIDING_WINDOWS.has(w)),
  };
}

/** What the waiting steps of one budget share: where they ask, for which credential, named how. */
interface BudgetParts {
  backend: BudgetBackend;
  key: string;
  opts: BudgetOptions;
  asks: BackgroundAsks;
}

/** The asks no caller waits for: a call's renewals while in flight, and its settle once answered. */
interface BackgroundAsks {
  renew(req: TakeRequest): void;
  settle(req: TakeRequest): void;
}

/**
 * Nobody awaits these asks, so their failures are said here: a warning when a streak of failures
 * begins, a line when an ask succeeds again (with how many failed), and at most one warning each
 * WARN_EVERY_MS (failures meanwhile are counted in the next line). A renewal that keeps failing
 * matters: once a call in flight outlives its lease (LEASE_TTL_MS) and held entries (HELD_MS),
 * other processes no longer see it and may exceed the shared budget. A settle that fails only
 * slows: the call's slot and entries count until they expire.
 */
function backgroundAsks(backend: BudgetBackend, key: string, label: string, logger: Logger): BackgroundAsks {
  const s = (ms: number) => `${Math.round(ms / 100) / 10} s`;
  const renewals = failureStreak(logger, { budget: label }, WARN_EVERY_MS, {
    failing: (cause) =>
      `budget of ${label}: the lease of a call in flight not renewed (${cause}); a call in flight longer than ${s(LEASE_TTL_MS)} stops counting, and other processes may then exceed the shared budget (its concurrency and per-second limits); tried again every ${s(RENEW_MS)}, said at most once a minute`,
    again: (failed) => `budget of ${label}: leases renewed again (${failed} renewals had failed)`,
  });
  const settles = failureStreak(logger, { budget: label }, WARN_EVERY_MS, {
    failing: (cause) =>
      `budget of ${label}: an answered call's slot not freed (${cause}); it counts until it expires (${s(HELD_MS)}): calls wait longer meanwhile, the budget is not exceeded; said at most once a minute`,
    again: (failed) => `budget of ${label}: answered calls freed again (${failed} had failed)`,
  });
  return {
    renew: (req) => void backend.renewLease(key, req).then(renewals.answered, renewals.failed),
    settle: (req) => void backend.settle(key, req).then(settles.answered, settles.failed),
  };
}

/** One kind of background ask's failures, said as backgroundAsks describes. */
function failureStreak(
  logger: Logger,
  fields: Record<string, unknown>,
  warnEveryMs: number,
  say: { failing(cause: string): string; again(failed: number): string },
): { failed(err: unknown): void; answered(): void } {
  let failed = 0;
  let warned = false;
  let warnedAt = -Infinity;
  return {
    failed(err) {
      failed++;
      if (warned || Date.now() - warnedAt < warnEveryMs) return;
      warned = true;
      warnedAt = Date.now();
      logger.warn({ ...fields, err, failed }, say.failing(err instanceof Error ? err.message : String(err)));
    },
    answered() {
      if (!warned) return;
      logger.info({ ...fields, failed }, say.again(failed));
      warned = false;
      failed = 0;
    },
  };
}

/** the pause, the lease and the sliding windows, taken together; waits while any is short */
async function takeShared(
  b: BudgetParts,
  req: TakeRequest,
  limitOfWindow: ReadonlyMap<WindowName, number>,
  signal: AbortSignal | undefined,
): Promise<void> {
  const { backend, key, opts } = b;
  for (let poll = 2; ;) {
    const r = await backend.take(key, req);
    if (r.ok) return;
    if (r.reason === 'lease') {
      // a slot frees when a call ends, which no one announces: poll, soon at first
      await sleep(poll + Math.random() * poll, signal, opts.label);
      poll = Math.min(25, poll * 2);
      continue;
    }
    if (r.waitMs > opts.maxWaitMs) {
      if (r.reason === 'paused')
        throw new BudgetExhaustedError(opts.label, new Date(r.pause.until), `paused: ${r.pause.reason}`);
      throw windowSpent(opts, r.window, limitOfWindow.get(r.window), r.waitMs);
    }
    // a little jitter: the processes waiting on one window do not all ask at the same millisecond
    await sleep(r.waitMs + Math.random() * 10, signal, opts.label);
  }
}

function windowSpent(
  opts: BudgetOptions,
  w: WindowName,
  limit: number | undefined,
  waitMs: number,
): BudgetExhaustedError {
  return new BudgetExhaustedError(
    opts.label,
    new Date(Date.now() + waitMs),
    `${limit ?? '?'} requests ${w.replace('per', 'per ').toLowerCase()}`,
  );
}

/** a request of fixed window `w` (hour, day) */
async function takeFixed(b: BudgetParts, w: WindowName, limit: number, signal: AbortSignal | undefined): Promise<void> {
  const { backend, key, opts } = b;
  const { points, durationSec } = windowShape(w, limit);
  for (;;) {
    const r = await backend.consume(key, w, points, durationSec);
    if (r.ok) return;
    if (r.waitMs > opts.maxWaitMs) throw windowSpent(opts, w, limit, r.waitMs);
    await sleep(r.waitMs + Math.random() * 10, signal, opts.label);
  }
}

function permit({ asks }: BudgetParts, req: TakeRequest): Permit {
  // (the lease and the held window entries: a call in flight past their ttl keeps both; a renewal that
  // fails is tried again RENEW_MS later, and one that lapses meanwhile lets one call more in, failing
  // none: said by backgroundAsks)
  const renew = req.lease || req.sliding.length ? setInterval(() => asks.renew(req), RENEW_MS) : undefined;
  renew?.unref();
  let released = false;
  return {
    release() {
      if (released) return;
      released = true;
      clearInterval(renew);
      // (a settle that fails only slows: a lease expires by itself, an entry keeps its first stamp; said by backgroundAsks)
      asks.settle(req);
    },
  };
}

/** One budget per credential key in a process, so every client and feed on it queues together. */
export interface Budgets {
  readonly shared: boolean;
  budget(key: string, limits: BudgetLimits, opts: BudgetOptions): Budget;
}

/** `logger`: where each budget says the background asks that fail (backgroundAsks). */
export function createBudgets(backend: BudgetBackend, logger: Logger): Budgets {
  const made = new Map<string, Budget>();
  return {
    shared: backend.shared,
    budget(key, limits, opts) {
      // Two configs naming one credential with different limits: the tighter of each holds.
      const prior = made.get(key);
      const merged = prior ? tighter(prior.limits, limits) : limits;
      if (prior && describeLimits(merged) === describeLimits(prior.limits)) return prior;
      const b = createBudget(backend, key, merged, opts, logger);
      made.set(key, b);
      return b;
    },
  };
}

function tighter(a: BudgetLimits, b: BudgetLimits): BudgetLimits {
  const out: BudgetLimits = {};
  for (const k of [...WINDOWS, 'concurrency'] as const) {
    const v = [a[k], b[k]].filter((x): x is number => x !== undefined);
    if (v.length) out[k] = Math.min(...v);
  }
  return out;
}
