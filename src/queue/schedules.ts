// Job schedulers from config: one per group of feeds due together (below), one per chatbot and job
// with a cron in `chatbots[].schedule`, and `drift:<feed>` for each scheduled live RESO feed (its
// dictionary check, `schedule.driftCron`, hourly by default; the check reads the server at most
// once a day, jobs/source-drift.ts). Written when a worker starts, those missing or changed alone
// (an unchanged one keeps its next job); those no longer in config are removed, so the config file
// stays the one source of truth for what runs when; so is a scheduler whose next job Redis lost
// (schedule-state.ts). While it runs, a worker writes again those Redis lost (a restart without
// persistence), and lost next jobs. The start: schedule-sync.ts; the watch: schedule-watch.ts.
//
// Feeds due together: feeds whose `schedule.cron` and `schedule.tz` are written alike (spaces
// aside) and that share a chatbot, directly or through other such feeds, get one scheduler whose
// job runs them all (jobs/listing-sync.ts, payload `feeds`): each chatbot is paged once a tick for
// all of its feeds, as `feedsync sync` pages it. `schedule.full` groups the same way among the
// feeds whose full pulls are due together; a full pull stays a pull of the feeds whose
// `schedule.full` it is; `schedule.reconcileCron` likewise, for keys-only reconciles. A feed alone
// keeps its scheduler `sync:<feed>`.
import { getNextMillis, type Queue } from 'bullmq';
import { chatbotsOf } from '../config/feed-chatbots.js';
import { DEFAULT_DRIFT_CRON, type Config, type FeedConfig } from '../config/schema.js';
import type { JobKind } from './names.js';
import type { Queues } from './queues.js';

export interface PlannedSchedule {
  kind: JobKind;
  id: string;
  pattern: string;
  tz?: string;
  name: string;
  data: Record<string, unknown>;
}

/** How a scheduler's sync reads its feeds: as configured (`schedule.cron`), a full pull (`schedule.full`), a keys-only reconcile (`schedule.reconcileCron`). */
export type ScheduledRead = 'sync' | 'full' | 'reconcile';

/** One sync scheduler: the feeds it runs (config order), when, and how it reads them. */
export interface SyncSchedule {
  id: string;
  feeds: string[];
  pattern: string;
  tz?: string;
  read: ScheduledRead;
}

const ID_PREFIX: Record<ScheduledRead, string> = { sync: 'sync', full: 'sync-full', reconcile: 'sync-reconcile' };

/**
 * The sync schedulers of these feeds, grouped as said at the top. Ids are stable: `sync:<feed>`,
 * `sync-full:<feed>` and `sync-reconcile:<feed>` for a feed alone, `sync:<a>+<b>+…` (and so on) for a group
 * (its feeds' names sorted; `+` is not a feed name's character), so a scheduler changes only when
 * its group does.
 */
export function syncSchedules(feeds: readonly FeedConfig[]): SyncSchedule[] {
  const buckets = new Map<string, { pattern: string; tz?: string; read: ScheduledRead; feeds: FeedConfig[] }>();
  const add = (feed: FeedConfig, pattern: string, read: ScheduledRead) => {
    const tz = feed.schedule?.tz;
    const key = JSON.stringify([read, pattern.trim().split(/\s+/).join(' '), tz ?? '']);
    const bucket = buckets.get(key) ?? { pattern, ...(tz && { tz }), read, feeds: [] };
    bucket.feeds.push(feed);
    buckets.set(key, bucket);
  };
  for (const feed of feeds) {
    if (!feed.schedule) continue;
    add(feed, feed.schedule.cron, 'sync');
    if (feed.schedule.full) add(feed, feed.schedule.full, 'full');
    if (feed.schedule.reconcileCron) add(feed, feed.schedule.reconcileCron, 'reconcile');
  }
  const out: SyncSchedule[] = [];
  for (const bucket of buckets.values()) {
    for (const group of feedsSharingAChatbot(bucket.feeds)) {
      const names = group.map((f) => f.name);
      const id = `${ID_PREFIX[bucket.read]}:${[...names].sort().join('+')}`;
      out.push({ id, feeds: names, pattern: bucket.pattern, ...(bucket.tz && { tz: bucket.tz }), read: bucket.read });
    }
  }
  return out;
}

/**
 * The feeds split into groups that share a chatbot, directly or through other feeds of the group
 * (what one run of them pages once per chatbot); config order kept.
 */
export function feedsSharingAChatbot(feeds: readonly FeedConfig[]): FeedConfig[][] {
  let groups: Array<{ feeds: FeedConfig[]; chatbots: Set<string> }> = [];
  for (const feed of feeds) {
    const own = chatbotsOf(feed);
    const touching = groups.filter((g) => own.some((sn) => g.chatbots.has(sn)));
    const merged = {
      feeds: [...touching.flatMap((g) => g.feeds), feed],
      chatbots: new Set([...touching.flatMap((g) => [...g.chatbots]), ...own]),
    };
    groups = [...groups.filter((g) => !touching.includes(g)), merged];
  }
  const order = new Map(feeds.map((f, i) => [f, i]));
  return groups
    .map((g) => g.feeds.sort((a, b) => order.get(a)! - order.get(b)!))
    .sort((a, b) => order.get(a[0]!)! - order.get(b[0]!)!);
}

/** The scheduler of each scheduled feed's regular syncs (`schedule.cron`), by feed name. */
export function syncSchedulerOf(feeds: readonly FeedConfig[]): Map<string, string> {
  return new Map(
    syncSchedules(feeds)
      .filter((s) => s.read === 'sync')
      .flatMap((s) => s.feeds.map((f) => [f, s.id] as const)),
  );
}

/**
 * Every scheduler the config asks for: the sync schedulers (syncSchedules), `settings:<sn>` and
 * `smoke:<sn>`. A sync scheduler's job names its feed (`feed`), or its group's (`feeds`).
 */
export function plannedSchedules(config: Config, names: Record<JobKind, string>): PlannedSchedule[] {
  const out: PlannedSchedule[] = [];
  for (const s of syncSchedules(config.feeds)) {
    const data = {
      ...(s.feeds.length === 1 ? { feed: s.feeds[0] } : { feeds: s.feeds }),
      ...(s.read !== 'sync' && { [s.read]: true }),
    };
    out.push({ kind: 'sync', id: s.id, pattern: s.pattern, ...(s.tz && { tz: s.tz }), name: names.sync, data });
  }
  for (const feed of config.feeds) {
    const pattern = feed.schedule?.driftCron ?? DEFAULT_DRIFT_CRON;
    if (!feed.schedule || pattern === false || feed.source.kind !== 'reso' || !feed.source.url) continue;
    out.push({
      kind: 'drift',
      id: `drift:${feed.name}`,
      pattern,
      ...(feed.schedule.tz && { tz: feed.schedule.tz }),
      name: names.drift,
      data: { feed: feed.name },
    });
  }
  for (const bot of config.chatbots) {
    for (const kind of ['settings', 'smoke'] as const) {
      const pattern = bot.schedule?.[kind];
      if (!pattern) continue;
      out.push({
        kind,
        id: `${kind}:${bot.serialNumber}`,
        pattern,
        tz: bot.schedule?.tz,
        name: names[kind],
        data: { chatbot: bot.serialNumber },
      });
    }
  }
  return out;
}

/**
 * Write one scheduler (BullMQ's upsert: one script). Upserting one that exists replaces its next
 * job (taken out of delayed, or of wait if it is due) by one at the pattern's next time after now:
 * the same tick while that is ahead, the following one once it is due; so a scheduler known to be
 * there with its next job is not written again (schedule-sync.ts). One whose next job is not there
 * gets one at the same tick while that is ahead (nothing to replace). Never at a tick already run
 * (firstTickNotRun). `now`: its next job due now instead (BullMQ's `immediately`, which the
 * definition does not keep: the job after it is the pattern's next). The next job's id.
 */
export async function upsertSchedule(
  queues: Queues,
  s: PlannedSchedule,
  o: { now?: boolean } = {},
): Promise<string | undefined> {
  const queue = queues[s.kind];
  const startDate = o.now ? undefined : await firstTickNotRun(queue, s, Date.now());
  const job = await queue.upsertJobScheduler(
    s.id,
    { ...repeatOf(s), ...(o.now && { immediately: true }), ...(startDate !== undefined && { startDate }) },
    { name: s.name, data: s.data },
  );
  return job?.id;
}

/**
 * Where an upsert of `s` must start its pattern (a `startDate`) so that it makes no tick already run,
 * or undefined: from now on, BullMQ's own. A job of the scheduler taken before its tick (a promote in
 * a queue UI) leaves that tick run and the scheduler's next job at the tick after it; BullMQ's upsert
 * makes the pattern's next time after now, that tick again, and where it replaced the next job it
 * writes over the finished job's hash and queues it (addJobScheduler-11.lua checks the id only when
 * it replaced nothing; else -10, the write refused). So: the pattern and tz kept, a next job past that
 * tick stays where it is (the ticks before it ran, early, whether their jobs are kept or not); a job
 * of that tick there and run or being run (another pattern that has it too, or the definition lost)
 * gets the tick after it. BullMQ stores the `startDate`, which is before the next tick and so changes
 * no later tick (its next-job making starts from the later of the two): differingSchedules reads one
 * so as no difference. Two reads, before the write: nothing is left half-written when one fails.
 */
async function firstTickNotRun(queue: Queue, s: PlannedSchedule, now: number): Promise<number | undefined> {
  const tick = getNextMillis(now, repeatOf(s)); // the tick BullMQ's upsert makes
  if (tick === undefined) return undefined;
  const stored = await queue.getJobScheduler(s.id);
  const samePattern = stored?.pattern === s.pattern && (stored.tz ?? undefined) === (s.tz ?? undefined);
  if (samePattern && typeof stored.next === 'number' && stored.next > tick) return stored.next - 1;
  const state = await queue.getJobState(`repeat:${s.id}:${tick}`);
  return state === 'completed' || state === 'failed' || state === 'active' ? tick + 1 : undefined;
}

/** When a scheduler runs, as BullMQ's RepeatOptions take it: its pattern, and its time zone when it has one. */
function repeatOf(s: PlannedSchedule): { pattern: string; tz?: string } {
  return { pattern: s.pattern, ...(s.tz ? { tz: s.tz } : {}) };
}

/**
 * Make a scheduler's next job after `tick`, the tick of its job that a worker took and that finished
 * without a later one made (its next-make failed): what that worker would have done (BullMQ 6.7
 * classes/worker.js, nextJobFromJobData: an upsert without override, its producer the taken job, from
 * that job's tick on). updateJobScheduler-12.lua adds the job only while the scheduler's score still
 * names the producer, so it never makes a second. An upsert with override cannot: it builds the next
 * job at the pattern's next time after now, which is that same tick while it is ahead, and the
 * finished job holds its id (addJobScheduler-11.lua: -10). The next job's id.
 */
export async function makeNextAfter(queues: Queues, s: PlannedSchedule, tick: number): Promise<string | undefined> {
  const queue = queues[s.kind];
  const job = await (
    await queue.jobScheduler
  ).upsertJobScheduler(
    s.id,
    repeatOf(s),
    s.name,
    s.data,
    { ...queue.defaultJobOptions, prevMillis: tick },
    { override: false, producerId: `repeat:${s.id}:${tick}` },
  );
  return job?.id;
}
