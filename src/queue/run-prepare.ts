// Before a job runs: its payload resolved to a target and the chatbots it writes into (a scheduler's
// run of paused feeds skipped, or run without them), and the chatbot locks it must hold, all or none,
// with the line of jobs waiting for a lock (a release wakes the oldest).
import { Queue, type Job } from 'bullmq';
import type { Logger } from '../log.js';
import {
  acquireTargetLocks,
  chatbotLockName,
  freeIfHolderGone,
  lockOrder,
  targetLockKey,
  type LockWaiters,
  type TargetLock,
} from '../locks/target-lock.js';
import { pausedAmong, pausedFor } from './control.js';
import type { JobDefinition, RunReport, RunTarget } from './job-definition.js';
import type { ProcessorDeps } from './processor-deps.js';
import { toJobError } from './retry-policy.js';
import { describe } from './run-settle.js';
import { feedsyncCommand } from '../format/invocation.js';

/**
 * The run of a job: its payload, target, the chatbots it locks and the logger of this wrapper's lines
 * (the job's own code scopes its lines by feed or chatbot, as syncFeed and pushSettings do, so it
 * gets the job scope alone). A scheduler's run of a paused feed (or of anything while all are
 * paused) starts nothing (`skipped`); a scheduler's run of several feeds runs those not paused.
 */
export async function prepareRun<P>(
  def: JobDefinition<P, RunReport>,
  deps: ProcessorDeps,
  payload: P,
  jobLogger: Logger,
  scheduled: boolean,
): Promise<{ payload: P; target: RunTarget; chatbots: string[]; logger: Logger } | { skipped: RunReport }> {
  const resolve = (p: P) => {
    try {
      const target = def.target(p, deps.config);
      const chatbots = def.chatbots?.(p, deps.config) ?? (target.chatbot !== undefined ? [target.chatbot] : []);
      return { payload: p, target, chatbots, logger: jobLogger.child({ ...target }) };
    } catch (err) {
      throw toJobError(err);
    }
  };
  const run = resolve(payload);
  if (!scheduled) return run;
  const { paused, each } = await scheduledPause(deps, def.pausable?.feeds(payload) ?? [], run.target);
  if (paused) {
    run.logger.info({ outcome: 'paused' }, `${def.name} ${describe(run.target)}: ${paused}; scheduled run skipped`);
    return {
      skipped: {
        outcome: 'paused',
        summary: `${paused}: scheduled run skipped (${feedsyncCommand()} resume to start again)`,
      },
    };
  }
  if (!each.size || !def.pausable) return run;
  for (const why of each.values())
    run.logger.info(
      { outcome: 'paused' },
      `${def.name} ${describe(run.target)}: ${why}; skipped in this scheduled run`,
    );
  return resolve(def.pausable.without(payload, [...each.keys()]));
}

/**
 * What keeps a scheduler's run from starting: `paused`, why it starts nothing (its feed, or each of
 * its feeds, paused; every schedule paused); else `each`, those of its feeds paused on their own.
 */
async function scheduledPause(
  deps: ProcessorDeps,
  feeds: readonly string[],
  target: RunTarget,
): Promise<{ paused?: string; each: Map<string, string> }> {
  const each = await pausedAmong(deps.redis, deps.prefix, feeds);
  const paused =
    (await pausedFor(deps.redis, deps.prefix, target)) ??
    (feeds.length && each.size === feeds.length ? [...each.values()].join('; ') : undefined);
  return { ...(paused && { paused }), each };
}

/**
 * The locks an exclusive job runs under: the lock of every chatbot it writes into (def.chatbots: a
 * routed feed writes into several; default the target's), all or none, taken in the order a foreground run takes them
 * (lockChatbots); a target with no chatbot: its feed's lock, the same way. `busy`: the lock that was not free.
 */
export async function takeLocks(
  deps: ProcessorDeps,
  job: Job,
  target: RunTarget,
  chatbots: readonly string[],
  kind: string,
  waiters: LockWaiters,
): Promise<{ held: TargetLock[]; release(): Promise<void>; busy?: { name: string; key: string } }> {
  const jobId = job.id ?? '?';
  const names = lockOrder(
    chatbots.length ? chatbots.map((chatbot) => chatbotLockName({ chatbot }, kind)) : [chatbotLockName(target, kind)],
  );
  const keys = names.map((name) => targetLockKey(deps.prefix, name));
  for (;;) {
    // all in one script, in lockChatbots' order (locks/target-lock.ts)
    const got = await acquireTargetLocks(deps.redis, keys, jobId, deps.lockTtlMs, waiters);
    if (!('busy' in got)) return got;
    // a holder found gone (a run killed as PID 1 of its container, a reused PID): its locks are freed now, not at their expiry
    if (await freeIfHolderGone(deps.redis, keys[got.busy]!, keys)) continue;
    return { held: [], release: async () => {}, busy: { name: names[got.busy]!, key: keys[got.busy]! } };
  }
}

/**
 * The line of jobs waiting for a lock, per queue: a release promotes the oldest delayed waiter.
 * One Queue handle per queue name, on the processor's connection, made when first needed.
 */
export function lockWaiters(deps: ProcessorDeps): (queueName: string) => LockWaiters {
  const made = new Map<string, LockWaiters>();
  return (queueName) => {
    let w = made.get(queueName);
    if (w) return w;
    const queue = new Queue(queueName, { connection: deps.redis, prefix: deps.prefix });
    queue.on('error', () => {}); // the processor's connection: its owner (the worker) reports its errors
    w = {
      // a waiter rechecks at least once a backstop delay, so the line need not outlive a few of them
      ttlMs: Math.max(60_000, deps.busyDelayMs * 4),
      wake: async (owner) => {
        const waiting = await queue.getJob(owner);
        if (!waiting) return false;
        return waiting.promote().then(
          () => true,
          () => false, // not delayed (running, or still moving): it rechecks by itself
        );
      },
    };
    made.set(queueName, w);
    return w;
  };
}
