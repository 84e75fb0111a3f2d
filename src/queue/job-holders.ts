// Which process runs each job, and a sweep that hands back at once the jobs of a worker process
// that died on this host. BullMQ alone takes a dead worker's job over only once its job lock has
// expired and a stalled check has found it (lockDuration + up to stalledInterval: workers.ts); a
// sibling on the same host can know sooner, by the rule the chatbot locks already use
// (locks/lock-holder.ts holderGone: same host, boot and PID namespace, and the PID dead, reused or
// this process's own). Across hosts nothing is judged: a process elsewhere cannot be told from one
// cut off from Redis that still runs, so its job waits for the lock's expiry as before.
//
// A worker records each job it starts in one hash of the deployment (field: the job's lock token,
// unique per taking; value: the queue, the job and a holder record), and deletes it when the job
// ends, however it ends. Every worker process sweeps the hash every SWEEP_MS: one HGETALL, its
// size the running jobs (and the records of a dead process until they are swept). A record whose
// holder is certainly gone is claimed by deleting it (HDEL answers 1 to one sweeper only; put back
// when the hand-back fails, for the next sweep), then,
// if its job is still active under that token, counted as BullMQ's stalled check counts a job
// (moveStalledJobsToWait-9.lua in BullMQ 6.7: HINCRBY `stc`, `defa` set past maxStalledCount but
// for a scheduler's job, a `stalled` event) and moved back to wait with job.moveToWait(token), the
// same script a shutdown's hand-back uses (hand-back.ts; https://docs.bullmq.io/patterns/manual-retrying:
// "we need to pass said token so that it can unlock without error"). The worker that takes it next
// sees `stalledCounter` as after a stalled check: its log line says "taken over after its worker
// stopped", and worker.maxStalledCount fails a job that kills its workers (processor.ts).
import type { Job, Queue } from 'bullmq';
import type { Logger } from '../log.js';
import { describeHolder, holderGone, holdingHere, newHolder, holderOf, type LockHolder } from '../locks/lock-holder.js';
import type { RedisClient } from '../redis/connection.js';

/** How often a worker process sweeps the records: a dead sibling's job goes back within about this. */
export const SWEEP_MS = 1000;
/** Records of live holders whose job is no longer active under their token are dropped once every this many sweeps (a minute). */
const TIDY_EVERY = 60;

// KEYS: the job's hash, its lock, the queue's events stream, meta and repeat keys. ARGV: job id, the
// dead taking's token, BullMQ's maxStalledCount, how long the lock is held for the move (ms).
// Only a job still active under that token (its lock that token's: BullMQ deletes the lock on every
// move out of active) is counted, as moveStalledJobsToWait counts a job it finds stalled; its lock is
// kept for the move that follows (job.moveToWait removes it), so BullMQ's own check cannot find the
// job stalled between the two and count it twice. Counted once a taking: the token counted is kept
// in the job's hash (`stcBy`, a field BullMQ does not read), so a sweep that moves it after a move
// refused, or a second claim of its record (the first's HDEL lost in a failover), counts nothing
// more; that sweep does not keep the lock longer either (a move refused every time ends at the
// lock's expiry, in BullMQ's check, not never). Answers the job's stalled count, or -1. (BullMQ's
// check adds its `stalled` event after the move's `waiting`; here it comes just before.)
const COUNT_STALLED = `
if redis.call('GET', KEYS[2]) ~= ARGV[2] or redis.call('EXISTS', KEYS[1]) == 0 then return -1 end
if redis.call('HGET', KEYS[1], 'stcBy') == ARGV[2] then return tonumber(redis.call('HGET', KEYS[1], 'stc')) end
redis.call('PEXPIRE', KEYS[2], ARGV[4])
redis.call('HSET', KEYS[1], 'stcBy', ARGV[2])
local stalled = redis.call('HINCRBY', KEYS[1], 'stc', 1)
local scheduler = redis.call('HGET', KEYS[1], 'rjk')
local scheduled = false
if scheduler then
  scheduled = redis.call('EXISTS', KEYS[5] .. ':' .. scheduler) == 1 or redis.call('ZSCORE', KEYS[5], scheduler) ~= false
end
if stalled > tonumber(ARGV[3]) and not scheduled then
  redis.call('HSET', KEYS[1], 'defa', 'job stalled more than allowable limit')
end
local maxEvents = tonumber(redis.call('HGET', KEYS[4], 'opts.maxLenEvents')) or 10000
redis.call('XADD', KEYS[3], 'MAXLEN', '~', maxEvents, '*', 'event', 'stalled', 'jobId', ARGV[1])
return stalled`;

interface JobHolder {
  queue: string;
  jobId: string;
  holder: LockHolder;
}

function parseRecord(text: string): JobHolder | undefined {
  let v: unknown;
  try {
    v = JSON.parse(text);
  } catch {
    return undefined; // another version's, or not ours: left to it
  }
  const holder = holderOf(v);
  if (!holder) return undefined;
  const { queue, jobId } = v as { queue?: unknown; jobId?: unknown };
  if (typeof queue !== 'string' || typeof jobId !== 'string') return undefined;
  return { queue, jobId, holder };
}

/**
 * Records that this process runs `job` under `token` (in the hash `key`); the function returned
 * deletes the record, at the job's end. The record counts as held here (holdingHere) until it is
 * deleted, so this process's own sweep never takes it for a dead one's; a record whose delete
 * failed stays held here for the life of the process (a leftover others sweep once it has ended).
 */
export async function holdJob(
  redis: RedisClient,
  key: string,
  job: Pick<Job, 'id' | 'queueName'>,
  token: string | undefined,
  logger: Logger,
): Promise<() => Promise<void>> {
  if (token === undefined || job.id === undefined) return async () => {};
  const holder = newHolder(`${job.queueName} job ${job.id}`);
  holdingHere(holder.owner, true);
  const record = JSON.stringify({ ...holder, queue: job.queueName, jobId: job.id });
  await redis.hset(key, token, record).catch((err: unknown) =>
    // the job runs anyway; were this process to die, BullMQ's stalled check would still take it over
    logger.warn(
      { err, jobId: job.id },
      "the job's holder record not written: it is taken over at its lock's expiry if this worker dies",
    ),
  );
  return async () => {
    try {
      await redis.hdel(key, token);
      holdingHere(holder.owner, false);
    } catch (err) {
      logger.warn({ err, jobId: job.id }, "the job's holder record not deleted; kept as this process's until it ends");
    }
  };
}

/** A job a sweep handed back: whose, and why its holder is gone. */
export interface HandedBack {
  queue: string;
  jobId: string;
  holder: LockHolder;
  reason: string;
  stalled: number;
}

export interface SweepDeps {
  redis: RedisClient;
  /** the hash of the records (keys.ts jobHolders) */
  key: string;
  /** the queues by name */
  queues: ReadonlyMap<string, Queue>;
  /** BullMQ's maxStalledCount (workers.ts: one more than worker.maxStalledCount) */
  maxStalledCount: number;
  /** the job lock's duration: how long the dead lock is kept for the move */
  lockDurationMs: number;
  logger: Logger;
}

/**
 * One sweep: every record whose holder is certainly gone (holderGone) is claimed, and its job, if
 * still active under the record's token, counted stalled and moved back to wait; records of jobs
 * no longer active are just dropped. `tidy`: also drop the records of live holders (or of holders
 * not judged here) whose job is no longer active under their token. Returns the jobs handed back.
 */
export async function sweepJobHolders(d: SweepDeps, tidy = false): Promise<HandedBack[]> {
  const records = await d.redis.hgetall(d.key);
  const handedBack: HandedBack[] = [];
  const others: Array<{ token: string; lock: string }> = [];
  for (const [token, text] of Object.entries(records)) {
    const record = parseRecord(text);
    const queue = record && d.queues.get(record.queue);
    if (!record || !queue) continue; // another version's, or a queue this one does not know: left to it
    const reason = holderGone(record.holder);
    if (!reason) {
      others.push({ token, lock: `${queue.toKey(record.jobId)}:lock` });
      continue;
    }
    if ((await d.redis.hdel(d.key, token)) !== 1) continue; // another sweeper claimed it
    const back = await handBackDead(d, queue, { ...record, reason }, token).catch(async (err: unknown) => {
      await putBack(d, token, text, record, err);
      return undefined;
    });
    if (back) handedBack.push(back);
  }
  if (tidy && others.length > 0) {
    const locks = await d.redis.mget(...others.map((o) => o.lock));
    const ended = others.filter((o, i) => locks[i] !== o.token).map((o) => o.token);
    if (ended.length > 0) await d.redis.hdel(d.key, ...ended);
  }
  return handedBack;
}

/**
 * A claimed record whose hand-back failed put back for the next sweep, which moves the job without
 * counting it again; said either way. A put-back that fails too leaves no record for any sweep: the
 * job's lock, kept for the move, expires and BullMQ's stalled check takes the job over then (it
 * counts it stalled a second time: worker.maxStalledCount comes one death sooner).
 */
async function putBack(d: SweepDeps, token: string, text: string, record: JobHolder, err: unknown): Promise<void> {
  const at = { err, jobId: record.jobId, queue: record.queue };
  try {
    await d.redis.hsetnx(d.key, token, text);
    d.logger.warn(at, "a dead worker's job not handed back; tried again at the next sweep");
  } catch (putBackErr) {
    d.logger.warn(
      { ...at, putBackErr: String(putBackErr) }, // (pino serializes an Error only under `err`)
      "a dead worker's job not handed back, and its holder record not put back: no sweep tries again; BullMQ's stalled check takes the job over at its lock's expiry (the lock duration), counting it stalled once more",
    );
  }
}

/** The job of a claimed record counted stalled and moved back to wait, said in one warning; undefined when it is no longer active under the token (a leftover). */
async function handBackDead(
  d: SweepDeps,
  queue: Queue,
  dead: Omit<HandedBack, 'stalled'>,
  token: string,
): Promise<HandedBack | undefined> {
  const stalled = await countStalled(d, queue, dead.jobId, token);
  if (stalled < 0) return undefined;
  const job = await queue.getJob(dead.jobId);
  if (!job) return undefined;
  await job.moveToWait(token);
  d.logger.warn(
    { jobId: dead.jobId, queue: dead.queue, holder: dead.holder, stalled },
    `job ${dead.jobId} of ${dead.queue} handed back to the queue at once: ${describeHolder(dead.holder, 'its worker')} is certainly gone (${dead.reason})`,
  );
  return { ...dead, stalled };
}

async function countStalled(d: SweepDeps, queue: Queue, jobId: string, token: string): Promise<number> {
  const jobKey = queue.toKey(jobId);
  const stalled = await d.redis.eval(
    COUNT_STALLED,
    5,
    jobKey,
    `${jobKey}:lock`,
    queue.toKey('events'),
    queue.toKey('meta'),
    queue.toKey('repeat'),
    jobId,
    token,
    String(d.maxStalledCount),
    String(d.lockDurationMs),
  );
  return Number(stalled);
}

/** Sweeps every SWEEP_MS (a sweep still running is not started again); returns what stops it. */
export function startSweeping(d: SweepDeps): () => void {
  let running = false;
  let sweeps = 0;
  const timer = setInterval(() => {
    if (running) return;
    running = true;
    sweepJobHolders(d, ++sweeps % TIDY_EVERY === 0)
      .catch((err: unknown) => d.logger.warn({ err }, "sweeping the jobs' holder records failed; trying again"))
      .finally(() => (running = false));
  }, SWEEP_MS);
  timer.unref();
  return () => clearInterval(timer);
}
