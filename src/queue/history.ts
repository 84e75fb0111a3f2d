// Run history: the last N reports per feed and per chatbot, newest first, one Redis list each
// (LPUSH + LTRIM), under the prefix. `feedsync runs` reads it.
import type { Redis } from 'ioredis';
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
});
export type RunRecord = z.infer<typeof RunRecord>;


const feedKey = (prefix: string, feed: string) => `${prefix}:runs:feed:${feed}`;
const chatbotKey = (prefix: string, sn: string) => `${prefix}:runs:chatbot:${sn}`;
const allKey = (prefix: string) => `${prefix}:runs:all`;

/** Keys a run is recorded under: its feed, else its chatbot, and the all-runs list. */
function keysFor(prefix: string, target: RunTarget): string[] {
  const keys = [allKey(prefix)];
  if (target.feed) keys.push(feedKey(prefix, target.feed));
  else if (target.chatbot) keys.push(chatbotKey(prefix, target.chatbot));
  return keys;
}

export async function recordRun(
  redis: Redis,
  prefix: string,
  size: number,
  run: Omit<RunRecord, 'at' | 'outcome' | 'summary' | 'report'> & { report: RunReport },
): Promise<RunRecord> {
  const record: RunRecord = {
    at: new Date().toISOString(),
    ...run,
    outcome: run.report.outcome,
    summary: run.report.summary,
  };
  // what is stored is what may be shown: masked, every secret by value
  const json = JSON.stringify(maskDeep(boundReport(record), run.feed));
  const multi = redis.multi();
  for (const key of keysFor(prefix, run)) multi.lpush(key, json).ltrim(key, 0, size - 1);
  await multi.exec();
  return record;
}

/** A run made outside the queue (`feedsync sync` in the foreground), recorded like a queued one. */
export function recordForegroundRun(redis: Redis, prefix: string, size: number, job: string, target: RunTarget, report: RunReport): Promise<RunRecord> {
  const jobId = `foreground-${new Date().toISOString().replace(/\D/g, '').slice(0, 14)}-${process.pid}`;
  return recordRun(redis, prefix, size, { jobId, job, queue: 'foreground', attempt: { made: 1, max: 1 }, ...target, report });
}

/** The newest `limit` runs of a feed, a chatbot, or (neither) of every target. */
export async function listRuns(redis: Redis, prefix: string, filter: RunTarget & { limit: number }): Promise<RunRecord[]> {
  const key = filter.feed ? feedKey(prefix, filter.feed) : filter.chatbot ? chatbotKey(prefix, filter.chatbot) : allKey(prefix);
  const raw = await redis.lrange(key, 0, filter.limit - 1);
  return raw.flatMap((line) => {
    const parsed = RunRecord.safeParse(safeJson(line));
    return parsed.success ? [parsed.data] : [];
  });
}

/** The recorded run of one job (its last attempt), for `enqueue --wait` on a failed job. */
export async function findRun(redis: Redis, prefix: string, target: RunTarget, jobId: string): Promise<RunRecord | undefined> {
  const runs = await listRuns(redis, prefix, { ...target, limit: 1000 });
  return runs.find((r) => r.jobId === jobId);
}

function safeJson(text: string): unknown {
  try {
    return JSON.parse(text);
  } catch {
    return undefined;
  }
}
