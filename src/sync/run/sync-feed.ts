// One feed synced to its chatbot: a run (sync-run.ts) of the feed's one lane. A routed feed
// (feeds[].chatbots) has a lane per chatbot: run it with runSync(lanesOf(feed)).
import type { FeedConfig } from '../../config/schema.js';
import type { ChangeSink } from '../model/changes.js';
import { lanesOf } from '../read/lanes.js';
import type { SyncReport } from '../report/report.js';
import type { SyncDeps, SyncOptions, SyncTestHooks } from './context.js';
import { runSync } from './sync-run.js';

export async function syncFeed(
  feed: FeedConfig,
  deps: Omit<SyncDeps, 'changes'> & { changes?: ChangeSink },
  opts: SyncOptions = {},
  hooks: SyncTestHooks = {},
): Promise<SyncReport> {
  const lanes = lanesOf(feed);
  if (lanes.length !== 1)
    throw new Error(`feed ${feed.name} writes into ${lanes.length} chatbots: run it with runSync(lanesOf(feed))`);
  const { changes, ...rest } = deps;
  const [report] = await runSync(lanes, { ...rest, ...(changes && { changes: () => changes }) }, opts, hooks);
  return report!;
}
