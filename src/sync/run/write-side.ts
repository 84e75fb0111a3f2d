// Where a run's writes go, chosen once for the run (sync-run.ts startRun): sent, each lane's state
// committed after (write/execute.ts, settle/lane-commit.ts), or, in a dry run, recorded
// (write/record.ts: the plan view and the change log) with nothing committed. What a dry run does
// differently follows from the side chosen, not from the option read again: the paging keeps each
// compared row (the view names each change old → new), the media mirror plans its photos instead of
// fetching them, and the report says what would be (report/lane-report.ts: a lane with a view).
import { createMediaStep } from '../../media/index.js';
import { failedReport } from '../report/report.js';
import { recordAcked, type AckedWrites } from '../settle/acked.js';
import { commitLanes } from '../settle/lane-commit.js';
import { createBeforeCapture } from '../write/capture-before.js';
import { createExecutor, type Executor } from '../write/execute.js';
import { createRecordingExecutor } from '../write/record.js';
import type { Lane } from '../read/lanes.js';
import type { FeedContext, LaneWriteParts, SyncDeps, SyncOptions, WriteSide } from './context.js';

/** whole listings kept a run when the caller sets no budget (changeLog.maxWholeBytesPerRun's default) */
const DEFAULT_WHOLE_BYTES = 8 << 20;

/** The run's write side: the one place a dry run is told apart. */
export function writeSideOf(opts: SyncOptions, deps: SyncDeps): WriteSide {
  return opts.dryRun ? recordingSide() : sendingSide(deps);
}

/** What a recording side tells those it does not write for (the media mirror, a lane left unreported): a dry run. */
const DRY = { dryRun: true } as const;

/** A dry run's side: each lane's jobs recorded (write/record.ts), nothing committed, nothing fetched or deleted by the mirror. */
function recordingSide(): WriteSide {
  return {
    keepsCompared: () => true,
    lane: (_l, ctx, { changes }) => {
      const executor = createRecordingExecutor({ signal: ctx.clock.signal, ...(changes && { changes }) });
      return { executor, view: executor.view, acked: async () => 0 };
    },
    commit: async () => undefined,
    mediaStep: (options) => createMediaStep({ ...options, ...DRY }),
    unreported: (r) => ({ ...failedReport(r), ...DRY }),
  };
}

/** A real run's side: each lane's jobs sent, what the API acknowledged recorded as it lands, its state committed after. */
function sendingSide(deps: SyncDeps): WriteSide {
  return {
    // the change log names each changed field old → new, in real runs too
    keepsCompared: (lanes) => lanes.some((l) => deps.changes?.(l) !== undefined),
    lane: (l, ctx, parts) => {
      // what the API acknowledged, recorded as it lands; all of it in the store before the commit (which may delete a key of it)
      const acked = recordAcked(ctx.deps.store, l.id, (err) =>
        ctx.logger.warn({ chatbot: l.chatbot, err }, 'acknowledged writes not recorded yet (the commit records them)'),
      );
      return { executor: executorOf(l, ctx, { ...parts, acked }), acked: () => acked.drain() };
    },
    commit: (inputs) => commitLanes(deps.store, inputs),
    mediaStep: createMediaStep,
    unreported: failedReport,
  };
}

/** The write step of one lane: its executor (with the change log, the listings kept before for undo). */
function executorOf(
  l: Lane,
  ctx: FeedContext,
  { remote, ignore, changes, acked }: LaneWriteParts & { acked: AckedWrites },
): Executor {
  const { feed, deps } = ctx;
  return createExecutor({
    api: deps.api,
    callScope: l.id,
    serialNumber: l.chatbot,
    keyBy: feed.keyBy,
    concurrency: deps.apiConfig.concurrency,
    batchSize: feed.deletes.batchSize,
    retries: deps.apiConfig.retries,
    logger: ctx.logger.child({ chatbot: l.chatbot }),
    feed: feed.name,
    signal: ctx.clock.signal,
    onProgress: () => ctx.wrote(),
    acked,
    ...(changes && { changes }),
    ...(changes && {
      before: createBeforeCapture({
        paged: remote,
        store: deps.store,
        feed: l.id,
        serialNumber: l.chatbot,
        keyBy: feed.keyBy,
        ignore,
        maxBytes: deps.maxWholeBytes ?? DEFAULT_WHOLE_BYTES,
      }),
    }),
  });
}
