// The change log in Redis. Per feed a stream of every change (XADD MAXLEN ~ maxPerFeed, and trimmed
// by MINID to retentionDays): `history` reads it newest first. Per run a list of its changes and a
// record of the run, both expiring after retentionDays: `runs show`. Per feed (and for all) a list of
// the newest runs, LTRIMmed. Every text stored is masked of secrets first.
import type { RedisClient } from '../redis/client.js';
import { keysOf } from '../redis/keys.js';
import { maskDeep } from '../secrets.js';
import { DEFAULT_LIMITS, type ChangeEntry, type ChangeLog, type ChangeLogLimits, type RunEntry } from './change-log.js';

const RUNS_KEPT = 1000;
const SCAN_CHUNK = 1000;

export function createRedisChangeLog(redis: RedisClient, prefix: string, limits: ChangeLogLimits = DEFAULT_LIMITS): ChangeLog {
  const keys = keysOf(prefix);
  const feedStream = keys.changesOfFeed;
  const runList = keys.changesOfRun;
  const runInfo = keys.runInfo;
  const runsOf = keys.changeRuns;
  const ttl = Math.max(1, Math.round(limits.retentionDays * 86_400));
  const cutoffId = () => `${Date.now() - ttl * 1000}-0`;

  return {
    location: `redis ${keys.changesPattern}`,
    async append(entries) {
      if (!entries.length) return;
      const multi = redis.multi();
      const feeds = new Set<string>();
      for (const e of entries) {
        const json = JSON.stringify(maskDeep(e, e.feed)); // values masked, never the serialized text
        multi.xadd(feedStream(e.feed), 'MAXLEN', '~', limits.maxPerFeed, '*', 'e', json);
        multi.rpush(runList(e.runId), json);
        feeds.add(e.feed);
      }
      for (const runId of new Set(entries.map((e) => e.runId))) multi.expire(runList(runId), ttl);
      for (const feed of feeds) multi.xtrim(feedStream(feed), 'MINID', '~', cutoffId());
      await multi.exec();
    },
    async finishRun(run) {
      const json = JSON.stringify(maskDeep(run, run.feed));
      const multi = redis.multi().set(runInfo(run.runId), json, 'EX', ttl).expire(runList(run.runId), ttl);
      for (const key of [runsOf(run.feed), runsOf(undefined)]) multi.lpush(key, json).ltrim(key, 0, RUNS_KEPT - 1);
      await multi.exec();
    },
    async run(runId, limit) {
      const [info, raw] = await Promise.all([redis.get(runInfo(runId)), redis.lrange(runList(runId), 0, limit - 1)]);
      return { run: info ? parse<RunEntry>(info) : undefined, changes: raw.flatMap((l) => parseList<ChangeEntry>(l)) };
    },
    async history(feed, key, limit) {
      // newest first, a chunk at a time, until enough are found or the stream (bounded) ends
      const out: ChangeEntry[] = [];
      let end = '+';
      for (;;) {
        const chunk = (await redis.xrevrange(feedStream(feed), end, '-', 'COUNT', SCAN_CHUNK)) as Array<[string, string[]]>;
        for (const [, fields] of chunk) {
          const e = parse<ChangeEntry>(fields[1] ?? '');
          if (e?.change.key === key) out.push(e);
          if (out.length >= limit) return out;
        }
        if (chunk.length < SCAN_CHUNK) return out;
        end = `(${chunk[chunk.length - 1]![0]}`;
      }
    },
    async runs(feed, limit) {
      const raw = await redis.lrange(runsOf(feed), 0, limit - 1);
      return raw.flatMap((l) => parseList<RunEntry>(l));
    },
    close: async () => {},
  };
}

function parse<T>(text: string): T | undefined {
  try {
    return JSON.parse(text) as T;
  } catch {
    return undefined;
  }
}

function parseList<T>(text: string): T[] {
  const v = parse<T>(text);
  return v === undefined ? [] : [v];
}
