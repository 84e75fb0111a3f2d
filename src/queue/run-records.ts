// Run history: the last N reports per feed and per chatbot, newest first, one Redis list each
// (LPUSH + LTRIM), under the prefix. `feedsync runs` reads it.
import { keysOf } from '../redis/keys.js';
import type { RedisClient } from '../redis/connection.js';
import { z } from 'zod';
import { maskDeep } from '../secrets.js';
import { boundReport } from './report-size.js';
import type { RunReport, RunTarget } from './job-definition.js';

export const RunRecord = z.object({
  at: z.string(),
  jobId: z.string(),
  job: z.string(),
  queue: z.string(),
  attempt: z.object({ made: z.number(), max: z.number() }),
  feed: z.string().optional(),
  chatbot: z.string().optional(),
  outcome: z.string(),
  summary: z.string(),
  report: z.unknown(),
  /** the worker process that ran it (worker-identity.ts); none: a foreground run, or one recorded before workers were named */
  worker: z.object({ host: z.string(), pid: z.number() }).optional(),
});
export type RunRecord = z.infer<typeof RunRecord>;

const feedKey = (prefix: string, feed: string) => keysOf(prefix).runsOfFeed(feed);
const chatbotKey = (prefix: string, sn: string) => keysOf(prefix).runsOfChatbot(sn);
const allKey = (prefix: string) => keysOf(prefix).runsAll;

/** Keys a run is recorded under: its feed, else its chatbot, and the all-runs list. */
function keysFor(prefix: string, target: RunTarget): string[] {
  const keys = [allKey(prefix)];
  if (target.feed) keys.push(feedKey(prefix, target.feed));
  else if (target.chatbot) keys.push(chatbotKey(prefix, target.chatbot));
  return keys;
}

export type RunToRecord = Omit<RunRecord, 'at' | 'outcome' | 'summary' | 'report'> & { report: RunReport };

/** The record of a run, stamped now. */
export function runRecord(run: RunToRecord): RunRecord {
  return { at: new Date().toISOString(), ...run, outcome: run.report.outcome, summary: run.report.summary };
}

/** Store a record in its target's list and the all-runs list (one MULTI: one slot on a cluster). */
export async function saveRunRecord(
  redis: RedisClient,
  prefix: string,
  size: number,
  record: RunRecord,
): Promise<void> {
  // what is stored is what may be shown: masked, every secret by value
  const json = JSON.stringify(maskDeep(boundReport(record), record.feed));
  const multi = redis.multi();
  for (const key of keysFor(prefix, record)) multi.lpush(key, json).ltrim(key, 0, size - 1);
  const results = await multi.exec();
  const failed = results?.find(([err]) => err)?.[0];
  if (!results || failed)
    throw new Error(
      `run history in Redis: the record of ${record.jobId} was not written${failed ? `: ${failed.message}` : ''}`,
    );
}

async function recordRun(redis: RedisClient, prefix: string, size: number, run: RunToRecord): Promise<RunRecord> {
  const record = runRecord(run);
  await saveRunRecord(redis, prefix, size, record);
  return record;
}

/** Records a writer keeps while Redis refuses them; past this the oldest is logged whole and counted. */
const HISTORY_KEPT_MAX = 1000;
const HISTORY_RETRY_MS = 2000;

export interface HistoryWriter {
  /** 'kept' when Redis refused it: it is written later, before the next record or on a timer */
  record(record: RunRecord): Promise<'written' | 'kept'>;
  /** records waiting to be written */
  readonly pending: number;
  /** records given up on (more than HISTORY_KEPT_MAX waiting): each was logged whole */
  readonly lost: number;
}

/**
 * The worker's run history writes: a record Redis refuses (an outage longer than a command waits,
 * a write refused during a failover) is kept in memory and written again, oldest first, before the
 * next record and every few seconds, so a run's history is written late rather than never. What a
 * long outage piles up past HISTORY_KEPT_MAX is logged whole (the log keeps it) and counted.
 */
export function createHistoryWriter(
  save: (record: RunRecord) => Promise<void>,
  opts: {
    onKept?: (record: RunRecord, err: unknown) => void;
    onLost?: (record: RunRecord) => void;
    retryMs?: number;
    max?: number;
  } = {},
): HistoryWriter {
  const waiting: RunRecord[] = [];
  let lost = 0;
  let timer: NodeJS.Timeout | undefined;
  let chain: Promise<boolean> = Promise.resolve(true);
  const drain = (): Promise<boolean> =>
    (chain = chain.then(async () => {
      while (waiting.length) {
        try {
          await save(waiting[0]!);
        } catch (err) {
          opts.onKept?.(waiting[0]!, err);
          schedule();
          return false;
        }
        waiting.shift();
      }
      return true;
    }));
  const schedule = () => {
    if (timer) return;
    timer = setTimeout(() => {
      timer = undefined;
      void drain();
    }, opts.retryMs ?? HISTORY_RETRY_MS);
    timer.unref();
  };
  return {
    async record(record) {
      waiting.push(record);
      if (waiting.length > (opts.max ?? HISTORY_KEPT_MAX)) {
        lost++;
        opts.onLost?.(waiting.shift()!);
      }
      return (await drain()) ? 'written' : 'kept';
    },
    get pending() {
      return waiting.length;
    },
    get lost() {
      return lost;
    },
  };
}

/** A run made outside the queue (`feedsync sync` in the foreground), recorded like a queued one. */
export function recordForegroundRun(
  redis: RedisClient,
  prefix: string,
  size: number,
  job: string,
  target: RunTarget,
  report: RunReport,
): Promise<RunRecord> {
  const jobId = `foreground-${new Date().toISOString().replace(/\D/g, '').slice(0, 14)}-${process.pid}`;
  return recordRun(redis, prefix, size, {
    jobId,
    job,
    queue: 'foreground',
    attempt: { made: 1, max: 1 },
    ...target,
    report,
  });
}

/** The newest `limit` runs of a feed, a chatbot, or (neither) of every target. */
export async function listRuns(
  redis: RedisClient,
  prefix: string,
  filter: RunTarget & { limit: number },
): Promise<RunRecord[]> {
  const key = filter.feed
    ? feedKey(prefix, filter.feed)
    : filter.chatbot
      ? chatbotKey(prefix, filter.chatbot)
      : allKey(prefix);
  const raw = await redis.lrange(key, 0, filter.limit - 1);
  return raw.flatMap((line) => {
    const parsed = RunRecord.safeParse(safeJson(line));
    return parsed.success ? [parsed.data] : [];
  });
}

/**
 * The recorded run of one job (its last attempt), for `enqueue --wait` on a failed job: in its
 * target's list, else in the all-runs list (a job of several feeds records a row per feed).
 */
export async function findRun(
  redis: RedisClient,
  prefix: string,
  target: RunTarget,
  jobId: string,
): Promise<RunRecord | undefined> {
  const own = (await listRuns(redis, prefix, { ...target, limit: 1000 })).find((r) => r.jobId === jobId);
  if (own || (!target.feed && !target.chatbot)) return own;
  return (await listRuns(redis, prefix, { limit: 1000 })).find((r) => r.jobId === jobId);
}

function safeJson(text: string): unknown {
  try {
    return JSON.parse(text);
  } catch {
    return undefined; // (not JSON: another version's record, skipped as one of another shape is)
  }
}
