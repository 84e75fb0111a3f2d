// The change log in Redis. Per feed a stream of every change (XADD MAXLEN ~ maxPerFeed, and trimmed
// by MINID to retentionDays): `history` reads it newest first. Per run a list of its changes and a
// record of the run, both expiring after retentionDays: `runs show`. Per feed (and for all) a list of
// the newest runs, LTRIMmed. Every value stored is masked of secrets first.
// Whole listings (undo) are kept apart, once: per run a hash key → the packed listing before the
// run's first write of that key (the entries say `before: "@"`), expiring with the run; per feed the
// runs that kept some, with their bytes: past maxWholeBytesPerFeed the oldest runs' are dropped
// (their entries then read as not kept). Packed listings are compressed bytes, not text: not masked.
import type { RedisClient } from '../redis/client.js';
import { keysOf } from '../redis/keys.js';
import { maskDeep, maskedJson } from '../secrets.js';
import { DEFAULT_LIMITS, type ChangeEntry, type ChangeLog, type ChangeLogLimits, type RunEntry } from './change-log.js';

const RUNS_KEPT = 1000;
const SCAN_CHUNK = 1000;

/** What every part of one Redis change log shares. */
interface LogParts {
  redis: RedisClient;
  keys: ReturnType<typeof keysOf>;
  limits: ChangeLogLimits;
  /** seconds a run's records live (retentionDays) */
  ttl: number;
}

export function createRedisChangeLog(
  redis: RedisClient,
  prefix: string,
  limits: ChangeLogLimits = DEFAULT_LIMITS,
): ChangeLog {
  const keys = keysOf(prefix);
  const { changesOfRun: runList, runInfo, changeRuns: runsOf, wholeOfRun: wholeOf, wholeRuns, wholeBytes } = keys;
  const ttl = Math.max(1, Math.round(limits.retentionDays * 86_400));
  const log: LogParts = { redis, keys, limits, ttl };

  return {
    location: `redis ${keys.changesPattern}`,
    append: (entries) => appendEntries(log, entries),
    async finishRuns(runs) {
      if (!runs.length) return;
      // one MULTI for every run (a routed feed's 100 lanes: one round trip, not 100), each list pushed
      // once with its runs in order: LPUSH of several values pushes them one after another, as one LPUSH each would
      const multi = redis.multi();
      const lists = new Map<string, string[]>();
      for (const run of runs) {
        const json = JSON.stringify(maskDeep(run, run.feed));
        multi.set(runInfo(run.runId), json, 'EX', ttl).expire(runList(run.runId), ttl);
        for (const key of [runsOf(run.feed), runsOf(undefined)]) {
          const list = lists.get(key) ?? [];
          list.push(json);
          lists.set(key, list);
        }
        if (run.wholes?.kept)
          multi
            .expire(wholeOf(run.runId), ttl)
            .rpush(wholeRuns(run.feed), run.runId)
            .expire(wholeRuns(run.feed), ttl)
            .expire(wholeBytes(run.feed), ttl);
      }
      for (const [key, jsons] of lists) multi.lpush(key, ...jsons).ltrim(key, 0, RUNS_KEPT - 1);
      await multi.exec();
      for (const feed of new Set(runs.filter((r) => r.wholes?.kept).map((r) => r.feed))) await boundWholes(log, feed);
    },
    async run(runId, limit) {
      const [info, raw, total, wholes] = await Promise.all([
        redis.get(runInfo(runId)),
        redis.lrange(runList(runId), 0, limit - 1),
        redis.llen(runList(runId)),
        redis.hgetall(wholeOf(runId)),
      ]);
      const changes = raw.flatMap((l) => parseList<ChangeEntry>(l));
      return {
        run: info ? parse<RunEntry>(info) : undefined,
        changes: attachWholes(changes, new Map(Object.entries(wholes))),
        total,
      };
    },
    history: (feed, key, limit) => historyOf(log, feed, key, limit),
    async runs(feed, limit) {
      const raw = await redis.lrange(runsOf(feed), 0, limit - 1);
      return raw.flatMap((l) => parseList<RunEntry>(l));
    },
    close: async () => {},
  };
}

/** The entries into the feed's stream and their runs' lists, their whole listings kept apart, in one MULTI. */
async function appendEntries({ redis, keys, limits, ttl }: LogParts, entries: readonly ChangeEntry[]): Promise<void> {
  if (!entries.length) return;
  const multi = redis.multi();
  const feeds = new Set<string>();
  const wholeRunIds = new Set<string>();
  for (const e of entries) {
    const before = 'before' in e.change ? e.change.before : undefined;
    if (before) {
      multi.hsetnx(keys.wholeOfRun(e.runId), e.change.key!, before);
      multi.hincrby(keys.wholeBytes(e.feed), e.runId, before.length);
      wholeRunIds.add(e.runId);
    }
    // values masked, never the serialized text (serialized once when no secret can be in it)
    const json = maskedJson(before ? { ...e, change: { ...e.change, before: KEPT_APART } } : e, e.feed);
    multi.xadd(keys.changesOfFeed(e.feed), 'MAXLEN', '~', limits.maxPerFeed, '*', 'e', json);
    multi.rpush(keys.changesOfRun(e.runId), json);
    feeds.add(e.feed);
  }
  for (const runId of new Set(entries.map((e) => e.runId))) multi.expire(keys.changesOfRun(runId), ttl);
  for (const runId of wholeRunIds) multi.expire(keys.wholeOfRun(runId), ttl);
  const cutoffId = `${Date.now() - ttl * 1000}-0`;
  for (const feed of feeds) multi.xtrim(keys.changesOfFeed(feed), 'MINID', '~', cutoffId);
  await multi.exec();
}

/** A key's changes in the feed's stream, newest first, a chunk at a time, until enough are found or the stream (bounded) ends. */
async function historyOf({ redis, keys }: LogParts, feed: string, key: string, limit: number): Promise<ChangeEntry[]> {
  const out: ChangeEntry[] = [];
  let end = '+';
  for (;;) {
    const chunk = (await redis.xrevrange(keys.changesOfFeed(feed), end, '-', 'COUNT', SCAN_CHUNK)) as Array<
      [string, string[]]
    >;
    for (const [, fields] of chunk) {
      const e = parse<ChangeEntry>(fields[1] ?? '');
      if (e?.change.key === key) out.push(e);
      if (out.length >= limit) return out;
    }
    if (chunk.length < SCAN_CHUNK) return out;
    end = `(${chunk[chunk.length - 1]![0]}`;
  }
}

/** The feed's runs' whole listings within maxWholeBytesPerFeed: the oldest runs' are dropped first. */
async function boundWholes({ redis, keys, limits }: LogParts, feed: string): Promise<void> {
  const maxWholePerFeed = limits.maxWholeBytesPerFeed ?? DEFAULT_LIMITS.maxWholeBytesPerFeed;
  const runIds = await redis.lrange(keys.wholeRuns(feed), 0, -1);
  const sizes = runIds.length ? await redis.hmget(keys.wholeBytes(feed), ...runIds) : [];
  let total = sizes.reduce((n, b) => n + Number(b ?? 0), 0);
  let drop = 0;
  while (total > maxWholePerFeed && drop < runIds.length - 1) total -= Number(sizes[drop++] ?? 0);
  if (!drop) return;
  const gone = runIds.slice(0, drop);
  await redis
    .multi()
    .del(...gone.map(keys.wholeOfRun))
    .hdel(keys.wholeBytes(feed), ...gone)
    .ltrim(keys.wholeRuns(feed), drop, -1)
    .exec();
}

/** What an entry holds in place of a whole listing kept apart (the run's whole hash). */
const KEPT_APART = '@';

/** Each key's whole listing back on the first of the run's changes that kept it apart; the others say where it is. */
function attachWholes(changes: ChangeEntry[], wholes: ReadonlyMap<string, string>): ChangeEntry[] {
  const used = new Set<string>();
  return changes.map((e) => {
    const c = e.change;
    if (!('before' in c) || c.before !== KEPT_APART) return e;
    const { before: _marker, ...rest } = c;
    const whole = used.has(c.key) ? undefined : wholes.get(c.key);
    used.add(c.key);
    if (whole !== undefined) return { ...e, change: { ...rest, before: whole } };
    const beforeMissing = wholes.has(c.key)
      ? 'kept with the first change of this key in the run'
      : 'trimmed: the whole listings of this run were dropped (changeLog.maxWholeBytesPerFeed, or retention)';
    return { ...e, change: { ...rest, beforeMissing } };
  });
}

function parse<T>(text: string): T | undefined {
  try {
    return JSON.parse(text) as T;
  } catch {
    return undefined; // (not JSON: another version's entry, skipped)
  }
}

function parseList<T>(text: string): T[] {
  const v = parse<T>(text);
  return v === undefined ? [] : [v];
}
