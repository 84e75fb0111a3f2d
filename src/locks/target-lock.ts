// At most one run per chatbot and kind of work across every process: the feeds of one chatbot share
// its listings and its sync state, so two of them never sync at once (nor a worker job and a
// foreground `feedsync sync`, which takes the same lock). Deduplication keeps ops reruns to one
// active and one waiting job per feed, but a job scheduler's jobs cannot carry deduplication
// (BullMQ omits it from scheduler templates), so a scheduled sync and a rerun could still meet.
// The lock holds the id of one taking of it (its owner, a job id, and a random part) and expires
// unless renewed (a SIGKILLed worker frees it after `ttlMs`: the renewal is the holder's heartbeat).
// The invariant: a chatbot is written by one run at a time, whatever BullMQ does with its job. A job
// can run twice at once: its job lock expired while its first attempt went on (a Redis node away for
// longer than the lock, an event loop stalled), BullMQ took the job again, and the first attempt
// hears of it late, or never (the same worker taking the job again tracks only the new attempt). So
// no taking, not even the same job's, gets a lock that another holds: the second attempt waits in
// line like any other job. And a holder stops before its lock can expire: its `lost` signal aborts
// a third of the TTL before the expiry its last confirmed renewal set (timed from when that renewal
// was sent, which is no later than Redis set it), so the calls it still has in flight have that
// third to end before anyone else can take the lock (a call slower than that, up to api.timeoutMs,
// is the one gap left).
// Beside it, with the same expiry, a holder record says which process holds it (lock-holder.ts:
// host, boot, PID namespace, process start time): a foreground run that finds the lock held by a
// process that is gone (a run killed as PID 1 in a container, a reused PID) takes it at once
// instead of waiting out the expiry.
// A job that finds the lock busy joins its waiters (a sorted set beside the lock, oldest first), in
// the same script that found it busy, so no release can slip between the two; the release wakes the
// oldest waiter still delayed. The job's own delay stays as the backstop (a holder that died, a wake
// that raced the job's move to delayed).
import { randomUUID } from 'node:crypto';
import { hostname } from 'node:os';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { keysOf, lockHolderKey, lockWaitersKey } from '../redis/keys.js';
import type { RedisClient } from '../redis/connection.js';
import { causeMessage } from '../errors.js';
import { lockFile, lockHolder, STALE_MS } from './file-lock.js';
import { describeHolder, holderGone, holdingHere, newHolder, parseHolder, type LockHolder } from './lock-holder.js';

// KEYS: lock, waiters, holder; ARGV: this taking's id (the lock's value), ttl ms, waiters' ttl ms (0: do
// not wait in line, poll), holder record, the owner (its place in the line: a job id). Only a free lock is taken.
const ACQUIRE = `
if redis.call('EXISTS', KEYS[1]) == 0 then
  redis.call('SET', KEYS[1], ARGV[1], 'PX', ARGV[2])
  redis.call('SET', KEYS[3], ARGV[4], 'PX', ARGV[2])
  redis.call('ZREM', KEYS[2], ARGV[5])
  return 1
end
if tonumber(ARGV[3]) > 0 then
  local t = redis.call('TIME')
  redis.call('ZADD', KEYS[2], 'NX', tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000), ARGV[5])
  redis.call('PEXPIRE', KEYS[2], ARGV[3])
end
return 0`;

// KEYS: lock, waiters; ARGV: owner, waiters' ttl ms. After the waiter moved to delayed: 1 when the
// lock was freed meanwhile (its release may have found the job not yet delayed), else back in line.
const STILL_BUSY = `
if redis.call('EXISTS', KEYS[1]) == 0 then return 1 end
local t = redis.call('TIME')
redis.call('ZADD', KEYS[2], 'NX', tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000), ARGV[1])
redis.call('PEXPIRE', KEYS[2], ARGV[2])
return 0`;

// KEYS: lock, holder of each lock in turn; ARGV: the taking's id, ttl ms. Renews each lock still
// the taking's (and its holder record); answers 1 for each renewed, 0 for each it no longer holds.
// One call a renewal period for all of a job's chatbots: a feed routed to 100 chatbots made 100.
const RENEW_ALL = `
local out = {}
for i = 1, #KEYS, 2 do
  if redis.call('GET', KEYS[i]) == ARGV[1] then
    redis.call('PEXPIRE', KEYS[i + 1], ARGV[2])
    out[#out + 1] = redis.call('PEXPIRE', KEYS[i], ARGV[2])
  else
    out[#out + 1] = 0
  end
end
return out`;

// KEYS: lock, holder of each lock in turn. Also frees the locks of a holder found gone (ARGV[1]: its
// record's owner, the taking's id), and only those that taking still holds; answers how many.
const RELEASE = `
local freed = 0
for i = 1, #KEYS, 2 do
  if redis.call('GET', KEYS[i]) == ARGV[1] then
    redis.call('DEL', KEYS[i + 1])
    freed = freed + redis.call('DEL', KEYS[i])
  end
end
return freed`;

// KEYS: lock, waiters, holder of each lock in turn; ARGV: as ACQUIRE's. All or none: every lock free
// is taken and 0 returned; else nothing is taken, the owner joins the line of the first busy one (as
// ACQUIRE does) and its number (from 1) is returned.
const ACQUIRE_ALL = `
for i = 1, #KEYS, 3 do
  if redis.call('EXISTS', KEYS[i]) == 1 then
    if tonumber(ARGV[3]) > 0 then
      local t = redis.call('TIME')
      redis.call('ZADD', KEYS[i + 1], 'NX', tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000), ARGV[5])
      redis.call('PEXPIRE', KEYS[i + 1], ARGV[3])
    end
    return (i + 2) / 3
  end
end
for i = 1, #KEYS, 3 do
  redis.call('SET', KEYS[i], ARGV[1], 'PX', ARGV[2])
  redis.call('SET', KEYS[i + 2], ARGV[4], 'PX', ARGV[2])
  redis.call('ZREM', KEYS[i + 1], ARGV[5])
end
return 0`;

// KEYS: lock, holder, waiters of each lock in turn; ARGV: the taking's id. RELEASE of each, then the oldest
// of its line popped (wakeNext's first ZPOPMIN): one member a lock, '' when its line is empty.
const RELEASE_ALL = `
local out = {}
for i = 1, #KEYS, 3 do
  if redis.call('GET', KEYS[i]) == ARGV[1] then
    redis.call('DEL', KEYS[i + 1])
    redis.call('DEL', KEYS[i])
  end
  local first = redis.call('ZPOPMIN', KEYS[i + 2])
  out[#out + 1] = first[1] or ''
end
return out`;

/** How a job waits in line for a lock; without it, a caller polls (foreground `feedsync sync`). */
export interface LockWaiters {
  /** how long the line outlives its last joiner (longer than a waiter's backstop delay) */
  ttlMs: number;
  /** move a waiting job up now; false when it is not waiting (gone, running, not yet delayed) */
  wake(owner: string): Promise<boolean>;
}

export interface TargetLock {
  /** the job holding the lock lost it (Redis gone, or it expired): stop writing */
  readonly lost: AbortSignal;
  release(): Promise<void>;
}

/** The lock of a run: its chatbot's for this kind of work (a target with no chatbot: its feed). */
export function chatbotLockName(target: { feed?: string; chatbot?: string }, kind: string): string {
  return target.chatbot !== undefined ? `chatbot:${target.chatbot}:${kind}` : `feed:${target.feed ?? '-'}:${kind}`;
}

/**
 * The one way a run takes its locks (chatbotLockName: the lock of each chatbot it writes into, or
 * its feed's), one or several: one by one in name order (serial-number order for chatbots), so two
 * runs over overlapping chatbots never hold one each and wait for the other. `take` gives the lock
 * of a name, undefined when it is busy (it may wait first, as a foreground run does). `allOrNone`
 * (a queued job): at the first lock refused, the locks taken are released and the taking stops,
 * so the caller waits holding nothing; else the others are still taken (a foreground run goes on
 * without that chatbot; an error taking one is then thrown, after the release). `refused`: each
 * name not locked, with the error that refused it, if one did.
 */
export async function lockChatbots(
  names: Iterable<string>,
  take: (name: string) => Promise<TargetLock | undefined>,
  opts: { allOrNone?: boolean } = {},
): Promise<{ held: TargetLock[]; refused: Map<string, { error?: unknown }> }> {
  const held: TargetLock[] = [];
  const refused = new Map<string, { error?: unknown }>();
  for (const name of lockOrder(names)) {
    const lock = await take(name).catch((error: unknown) => {
      refused.set(name, { error });
      return undefined;
    });
    if (lock) {
      held.push(lock);
      continue;
    }
    const why = refused.get(name) ?? {};
    refused.set(name, why);
    if (!opts.allOrNone) continue;
    const unreleased = await releaseAll(held.splice(0)).then(
      () => undefined,
      (err: unknown) => ({ err }),
    );
    // a lock that could not even be asked for (Redis refused): the caller's error, as with one lock;
    // a release refused too is thrown with it, or alone
    if ('error' in why && unreleased)
      throw new AggregateError(
        [why.error, unreleased.err],
        `the lock of ${name} not taken, and a lock taken not released`,
      );
    if ('error' in why) throw why.error;
    if (unreleased) throw unreleased.err;
    break;
  }
  return { held, refused };
}

/** The order every run takes its locks in (lockChatbots, acquireTargetLocks' callers): each name once, sorted. */
export function lockOrder(names: Iterable<string>): string[] {
  return [...new Set(names)].sort();
}

/**
 * Release each lock; one that fails is left to expire (its renewal has stopped), the others are
 * still released, and the first failure is thrown once they are.
 */
export async function releaseAll(locks: readonly TargetLock[]): Promise<void> {
  let failed: { err: unknown } | undefined;
  for (const lock of locks) await lock.release().catch((err: unknown) => void (failed ??= { err }));
  if (failed) throw failed.err;
}

export function targetLockKey(prefix: string, target: string): string {
  return keysOf(prefix).lock(target);
}

function waitersKey(lockKey: string): string {
  return lockWaitersKey(lockKey);
}

function holderKey(lockKey: string): string {
  return lockHolderKey(lockKey);
}

/** One taking of a lock by `owner`: the lock's value, unique, so that no other taking (the same job's another attempt) passes for it. */
function takingOf(owner: string): string {
  return `${owner}#${randomUUID()}`;
}

/**
 * Take the lock for `owner` (a job id), or return undefined when it is held, by anyone (this owner's
 * another taking included); with `waiters`, a busy lock puts the owner in line and the release wakes
 * the oldest in line.
 */
export async function acquireTargetLock(
  redis: RedisClient,
  key: string,
  owner: string,
  ttlMs: number,
  waiters?: LockWaiters,
  /** what holds it, for a person (lock-holder.ts LockHolder.what): the owner id when not given (a job's id) */
  what = owner,
): Promise<TargetLock | undefined> {
  const taking = takingOf(owner);
  const holder = JSON.stringify({ ...newHolder(what), owner: taking });
  const sentAt = performance.now();
  const got = await redis.eval(
    ACQUIRE,
    3,
    key,
    waitersKey(key),
    holderKey(key),
    taking,
    String(ttlMs),
    String(waiters?.ttlMs ?? 0),
    holder,
    owner,
  );
  if (got !== 1) return undefined;
  return heldLock(redis, key, taking, { ttlMs, sentAt }, waiters);
}

/** A lock just taken, released alone: its renewal stopped, the lock and its holder deleted, the oldest in line woken. */
function heldLock(redis: RedisClient, key: string, taking: string, ttl: HoldTiming, waiters?: LockWaiters): TargetLock {
  return releasedAlone(redis, key, taking, holdLocks(redis, [key], taking, ttl), waiters);
}

/** One lock of a hold (holdLocks), released alone: dropped from the hold's renewal, deleted with its holder, the oldest in line woken. */
function releasedAlone(
  redis: RedisClient,
  key: string,
  taking: string,
  hold: Pick<Hold, 'lost' | 'drop'>,
  waiters?: LockWaiters,
): TargetLock {
  return {
    lost: hold.lost,
    release: async () => {
      hold.drop(key);
      await redis.eval(RELEASE, 2, key, holderKey(key), taking);
      if (waiters) await wakeNext(redis, key, waiters);
    },
  };
}

/** The renewal of one taking's locks (holdLocks). */
interface Hold {
  lost: AbortSignal;
  stop(): void;
  drop(key: string): void;
}

/** A lock's TTL, and when the script that took it was sent (performance.now()). */
interface HoldTiming {
  ttlMs: number;
  sentAt: number;
}

/**
 * The locks of one taking, just taken: counted as held here until released, renewed together (one RENEW_ALL call)
 * every quarter of their TTL until stopped (the job lock's cadence, workers.ts lockRenewTime), and
 * lost together (one signal: the taking stops writing all of its chatbots) when a renewal finds one
 * of them another's or fails, or when no renewal has been confirmed in time: a third of the TTL
 * before the expiry the last confirmed one set, timed from when it was sent (Redis set the expiry
 * later, when it ran the script, never sooner). A confirmed renewal moves that deadline on; one a
 * slow Redis answers late moves it from when it was sent; one answered but still unread when the
 * deadline is due (an event loop blocked past it) is read first (`due`). `drop`: a lock released alone, no longer
 * renewed (nor expected back).
 */
function holdLocks(redis: RedisClient, keys: readonly string[], taking: string, { ttlMs, sentAt }: HoldTiming): Hold {
  const renewed = new Set(keys);
  holdingHere(taking, true);
  // once per hold, at its release (stop, or its last lock dropped), lost or not: a lost hold's run
  // still ends its calls in flight (the third of the TTL it stops before the expiry), so until it
  // releases, no other taking of this process may free its lock as this process's own (freeIfHolderGone)
  let here = true;
  const leave = () => {
    if (here) holdingHere(taking, false);
    here = false;
  };
  const lost = new AbortController();
  const what = keys.length === 1 ? `lock ${keys[0]}` : `the locks of ${keys.length} chatbots (${keys[0]}, …)`;
  const lose = (why: string) => {
    if (!lost.signal.aborted) lost.abort(new Error(`${what} lost: ${why}`));
  };
  const period = Math.max(100, Math.floor(ttlMs / 4));
  const margin = Math.floor(ttlMs / 3);
  let deadline: NodeJS.Timeout | undefined;
  let lookAgain: NodeJS.Immediate | undefined;
  let latest = -Infinity;
  // The deadline, due: the answer of a renewal may wait unread in the socket. After the event loop
  // was blocked (a long synchronous step, a GC pause) in an I/O callback or an immediate, Node runs
  // the timers that fell due before it next polls its sockets, so this timer can fire first. One
  // turn later (an immediate runs after that poll) such an answer has been read and has moved the
  // deadline on (confirmed); only if none has does the hold stop. The stop comes that turn later.
  const due = () => {
    lookAgain = setImmediate(() => {
      if (performance.now() >= latest + ttlMs - margin)
        lose(`no renewal confirmed in time; stopped ${margin} ms before its ${ttlMs} ms TTL can end`);
    });
    lookAgain.unref();
  };
  const confirmed = (sent: number) => {
    // (a renewal answered after a later one sets no later expiry than it)
    if (sent <= latest) return;
    latest = sent;
    clearTimeout(deadline);
    deadline = setTimeout(due, Math.max(0, sent + ttlMs - margin - performance.now()));
    deadline.unref();
  };
  // (never empty: the last lock dropped ends the hold, this timer with it)
  const timer = setInterval(() => {
    const now = [...renewed];
    const sent = performance.now();
    redis.eval(RENEW_ALL, now.length * 2, ...now.flatMap((key) => [key, holderKey(key)]), taking, String(ttlMs)).then(
      (answer) => {
        if (lost.signal.aborted) return;
        // (an answer that is not RENEW_ALL's list renews nothing: every lock counts as lost)
        const each: unknown[] = Array.isArray(answer) ? answer : [];
        const gone = now.filter((key, i) => each[i] !== 1 && renewed.has(key));
        if (gone.length === 0) confirmed(sent);
        else lose(`another holder has ${gone.join(', ')} or it expired`);
      },
      (err: unknown) => lose(`renewal failed (${err instanceof Error ? err.message : String(err)})`),
    );
  }, period);
  timer.unref();
  const stopRenewing = () => {
    clearInterval(timer);
    clearTimeout(deadline);
    clearImmediate(lookAgain);
  };
  const end = () => {
    stopRenewing();
    leave();
  };
  lost.signal.addEventListener('abort', stopRenewing, { once: true });
  confirmed(sentAt);
  return {
    lost: lost.signal,
    stop: end,
    drop: (key) => {
      renewed.delete(key);
      if (renewed.size === 0) end();
    },
  };
}

/** Locks a job holds together (acquireTargetLocks): released together. */
export interface TargetLocks {
  held: TargetLock[];
  /** release every one (one round trip), then wake the oldest delayed waiter of each */
  release(): Promise<void>;
}

/**
 * Take every lock of `keys` for `owner` at once, in one script, in the order given (the caller's:
 * lockChatbots' name order), all or none: the same locks as acquireTargetLock taken one by one
 * with `allOrNone`, in one round trip instead of one a lock. At the first busy one nothing is
 * taken and the owner joins that lock's line (as acquireTargetLock does): `busy` is its index.
 */
export async function acquireTargetLocks(
  redis: RedisClient,
  keys: readonly string[],
  owner: string,
  ttlMs: number,
  waiters: LockWaiters,
): Promise<TargetLocks | { busy: number }> {
  const taking = takingOf(owner);
  const holder = JSON.stringify({ ...newHolder(owner), owner: taking });
  const slots = keys.flatMap((key) => [key, waitersKey(key), holderKey(key)]);
  const sentAt = performance.now();
  const got = await redis.eval(
    ACQUIRE_ALL,
    slots.length,
    ...slots,
    taking,
    String(ttlMs),
    String(waiters.ttlMs),
    holder,
    owner,
  );
  if (got !== 0) return { busy: Number(got) - 1 };
  const hold = holdLocks(redis, keys, taking, { ttlMs, sentAt });
  return {
    held: keys.map((key) => releasedAlone(redis, key, taking, hold, waiters)),
    release: async () => {
      hold.stop();
      const next = (await redis.eval(
        RELEASE_ALL,
        slots.length,
        ...keys.flatMap((key) => [key, holderKey(key), waitersKey(key)]),
        taking,
      )) as string[];
      // the oldest waiter of each lock, popped by the script: woken, else the next in its line (wakeNext)
      for (const [i, first] of next.entries())
        if (first !== '' && !(await waiters.wake(first))) await wakeNext(redis, keys[i]!, waiters);
    },
  };
}

/** Wake the oldest waiter that is delayed; the ones passed over are not (they recheck by themselves). */
async function wakeNext(redis: RedisClient, key: string, waiters: LockWaiters): Promise<void> {
  for (;;) {
    const [owner] = await redis.zpopmin(waitersKey(key));
    if (owner === undefined || (await waiters.wake(owner))) return;
  }
}

/**
 * Free the lock `key` when its holder record shows the holder gone (lock-holder.ts): why, when it did.
 * The same taking's locks among `among` go with it in the same call (a routed feed's job held one
 * per chatbot: freed one a round, its rerun asked a hundred times). Only locks that very taking
 * still holds are deleted, so a holder that took one meanwhile keeps it.
 */
export async function freeIfHolderGone(
  redis: RedisClient,
  key: string,
  among: readonly string[] = [key],
): Promise<string | undefined> {
  const text = await redis.get(holderKey(key));
  const holder = text === null ? undefined : parseHolder(text);
  const reason = holder && holderGone(holder);
  if (!holder || !reason) return undefined;
  const keys = [key, ...among.filter((k) => k !== key)];
  const freed = await redis.eval(RELEASE, keys.length * 2, ...keys.flatMap((k) => [k, holderKey(k)]), holder.owner);
  return Number(freed) > 0 ? reason : undefined;
}

/**
 * Called by a waiter once it is delayed: true when the lock was freed meanwhile (wake it yourself:
 * the release may have passed it over while it was still moving), else it is back in line.
 */
export async function lockFreedWhileMoving(
  redis: RedisClient,
  key: string,
  owner: string,
  waiters: Pick<LockWaiters, 'ttlMs'>,
): Promise<boolean> {
  return (await redis.eval(STILL_BUSY, 2, key, waitersKey(key), owner, String(waiters.ttlMs))) === 1;
}

/**
 * What a foreground command says as it starts waiting for a chatbot's lock (ForegroundLockOptions.onWait):
 * who holds it, how long it waits, and what happens then.
 */
export function chatbotWaitNotice(
  chatbot: string,
  holder: LockHolder | undefined,
  minutes: number,
  then: string,
): string {
  const who = holder ? describeHolder(holder) : 'another process (a worker job or another `feedsync sync`)';
  return `chatbot ${chatbot} is being synced by ${who}; waiting for it to finish, up to ${minutes} min (feeds[].deadlineMinutes), then ${then}; Ctrl-C stops waiting`;
}

export interface ForegroundLockOptions {
  chatbot: string;
  /** the Redis the state lives in (with its key prefix), when it does */
  redis?: { connection: RedisClient; prefix: string };
  /** else a lock file here (beside the state file) */
  lockDir: string;
  /** how long to wait while another process syncs the chatbot */
  waitMs: number;
  /**
   * the Redis lock's TTL: the workers' (worker.lockDurationMs), renewed every quarter of it as a job's
   * chatbot locks are, so a foreground run SIGKILLed blocks the chatbot's jobs no longer than a dead worker does
   */
  ttlMs: number;
  signal?: AbortSignal;
  /** called once, when another run holds the lock and the wait begins: who holds it, when its record says */
  onWait?: (holder: LockHolder | undefined) => void;
  /**
   * the lock's release failed (Redis gone meanwhile): `notice` says which lock, why, and when it frees
   * itself. The release then resolves: the run's own outcome is what its caller reports.
   */
  onUnreleased: (notice: string, err: unknown) => void;
}

/**
 * The lock a foreground `feedsync sync` takes around one feed: the workers' Redis lock of the
 * chatbot when Redis holds the state, else a lock file. Waits while another run holds it;
 * undefined when it is still held after `waitMs`.
 */
export async function acquireForegroundLock(opts: ForegroundLockOptions): Promise<TargetLock | undefined> {
  const lock = await takeForegroundLock(opts);
  return (
    lock && {
      lost: lock.lost,
      release: () =>
        lock.release().catch((err: unknown) => {
          opts.onUnreleased(unreleasedNotice(opts, err), err);
        }),
    }
  );
}

/** What a foreground run says of its chatbot's lock not released: which, why, and when it frees itself. */
function unreleasedNotice(opts: ForegroundLockOptions, err: unknown): string {
  // (the release stopped the renewal first: a Redis lock expires at its ttl; a lock file left behind,
  // its heartbeat stopped, is found stale by the next taker)
  const frees = opts.redis
    ? `within ${Math.ceil(opts.ttlMs / 1000)} s (worker.lockDurationMs)`
    : `once its heartbeat has stood still ${STALE_MS / 1000} s`;
  return `the lock of chatbot ${opts.chatbot} was not released (${causeMessage(err)}): it frees itself ${frees}, and a run of the chatbot waits for it until then`;
}

async function takeForegroundLock(opts: ForegroundLockOptions): Promise<TargetLock | undefined> {
  const name = chatbotLockName({ chatbot: opts.chatbot }, 'sync');
  const { onWait } = opts;
  const what = `feedsync sync ${opts.chatbot}`;
  if (!opts.redis) {
    const path = join(opts.lockDir, `${name.replace(/[^A-Za-z0-9._-]/g, '_')}.lock`);
    const file = await lockFile(path, what, {
      waitMs: opts.waitMs,
      pollMs: 250,
      ...(opts.signal && { signal: opts.signal }),
      // (a holder file unread says "another process" while waiting; the wait itself goes on by the lock)
      ...(onWait && { onWait: async () => onWait(await lockHolder(path).catch(() => undefined)) }),
    });
    return file && { lost: file.lost, release: file.release };
  }
  const key = targetLockKey(opts.redis.prefix, name);
  const owner = `cli:${hostname()}:${process.pid}:${randomUUID()}`;
  const until = Date.now() + opts.waitMs;
  let waiting = false;
  for (;;) {
    const lock = await acquireTargetLock(opts.redis.connection, key, owner, opts.ttlMs, undefined, what);
    if (lock || opts.signal?.aborted) return lock;
    if (await freeIfHolderGone(opts.redis.connection, key)) continue;
    if (Date.now() >= until) return undefined;
    if (!waiting && onWait) {
      // (a holder record unread says "another process" while waiting; a Redis gone fails the next take)
      const text = await opts.redis.connection.get(holderKey(key)).catch(() => null);
      onWait(text === null ? undefined : parseHolder(text));
    }
    waiting = true;
    await sleep(
      Math.min(500, Math.max(1, until - Date.now())),
      undefined,
      opts.signal ? { signal: opts.signal } : {},
    ).catch(() => {}); // (rejects only when opts.signal aborts: the next turn's take returns, aborted)
  }
}
