// Job schedulers from config: one per feed with `schedule`, one per chatbot and job with a cron in
// `chatbots[].schedule`. Upserted when a worker starts; those no longer in config are removed, so
// the config file stays the one source of truth for what runs when.
import type { Config } from '../config/schema.js';
import type { Logger } from '../log.js';
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

/**
 * Every scheduler the config asks for. Ids are stable: `sync:<feed>`, `sync-full:<feed>` (the full
 * pull of an incremental RESO feed, `schedule.full`), `settings:<sn>`, `smoke:<sn>`.
 */
export function plannedSchedules(config: Config, names: Record<JobKind, string>): PlannedSchedule[] {
  const out: PlannedSchedule[] = [];
  for (const feed of config.feeds) {
    if (!feed.schedule) continue;
    out.push({ kind: 'sync', id: `sync:${feed.name}`, pattern: feed.schedule.cron, tz: feed.schedule.tz, name: names.sync, data: { feed: feed.name } });
    if (feed.schedule.full) {
      out.push({ kind: 'sync', id: `sync-full:${feed.name}`, pattern: feed.schedule.full, tz: feed.schedule.tz, name: names.sync, data: { feed: feed.name, full: true } });
    }
  }
  for (const bot of config.chatbots) {
    for (const kind of ['settings', 'smoke'] as const) {
      const pattern = bot.schedule?.[kind];
      if (!pattern) continue;
      out.push({ kind, id: `${kind}:${bot.serialNumber}`, pattern, tz: bot.schedule?.tz, name: names[kind], data: { chatbot: bot.serialNumber } });
    }
  }
  return out;
}

export interface ScheduleChanges {
  upserted: string[];
  removed: string[];
}

export async function applySchedules(queues: Queues, planned: PlannedSchedule[], logger: Logger): Promise<ScheduleChanges> {
  const changes: ScheduleChanges = { upserted: [], removed: [] };
  for (const s of planned) {
    await queues[s.kind].upsertJobScheduler(s.id, { pattern: s.pattern, ...(s.tz ? { tz: s.tz } : {}) }, { name: s.name, data: s.data });
    changes.upserted.push(s.id);
  }
  const wanted = new Set(planned.map((s) => s.id));
  for (const queue of Object.values(queues)) {
    for (const existing of await queue.getJobSchedulers(0, -1)) {
      const id = existing.key;
      if (wanted.has(id)) continue;
      await queue.removeJobScheduler(id);
      changes.removed.push(id);
    }
  }
  if (changes.upserted.length || changes.removed.length) logger.info(changes, `job schedulers: ${changes.upserted.length} in config, ${changes.removed.length} removed`);
  return changes;
}
