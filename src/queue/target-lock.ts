// At most one run per chatbot and kind of work across every process: the feeds of one chatbot share
// its listings and its sync state, so two of them never sync at once (nor a worker job and a
// foreground `feedsync sync`, which takes the same lock). Deduplication keeps ops reruns to one
// active and one waiting job per feed, but a job scheduler's jobs cannot carry deduplication
// (BullMQ omits it from scheduler templates), so a scheduled sync and a rerun could still meet.
// The lock holds the job id, expires unless renewed (a SIGKILLed worker frees it after `ttlMs`),
// and the same job taking over after a stall may reclaim it.
import type { Redis } from 'ioredis';

const ACQUIRE = `
local cur = redis.call('GET', KEYS[1])
if cur == false or cur == ARGV[1] then
  redis.call('SET', KEYS[1], ARGV[1], 'PX', ARGV[2])
  return 1
end
return 0`;

const RENEW = `
if redis.call('GET', KEYS[1]) == ARGV[1] then
  return redis.call('PEXPIRE', KEYS[1], ARGV[2])
end
return 0`;

const RELEASE = `
if redis.call('GET', KEYS[1]) == ARGV[1] then
  return redis.call('DEL', KEYS[1])
end
return 0`;

export interface TargetLock {
  /** the job holding the lock lost it (Redis gone, or it expired): stop writing */
  readonly lost: AbortSignal;
  release(): Promise<void>;
}

/** The lock of a run: its chatbot's for this kind of work (a target with no chatbot: its feed). */
export function chatbotLockName(target: { feed?: string; chatbot?: string }, kind: string): string {
  return target.chatbot !== undefined ? `chatbot:${target.chatbot}:${kind}` : `feed:${target.feed ?? '-'}:${kind}`;
}

export function targetLockKey(prefix: string, target: string): string {
  return `${prefix}:lock:${target}`;
}

/** Take the lock for `owner` (a job id), or return undefined when another job holds it. */
export async function acquireTargetLock(redis: Redis, key: string, owner: string, ttlMs: number): Promise<TargetLock | undefined> {
  const got = await redis.eval(ACQUIRE, 1, key, owner, String(ttlMs));
  if (got !== 1) return undefined;
  const lost = new AbortController();
  const timer = setInterval(() => {
    redis.eval(RENEW, 1, key, owner, String(ttlMs)).then(
      (ok) => {
        if (ok !== 1) lost.abort(new Error(`lock ${key} lost`));
      },
      (err: unknown) => lost.abort(err),
    );
  }, Math.max(100, Math.floor(ttlMs / 3)));
  timer.unref();
  return {
    lost: lost.signal,
    release: async () => {
      clearInterval(timer);
      await redis.eval(RELEASE, 1, key, owner);
    },
  };
}
