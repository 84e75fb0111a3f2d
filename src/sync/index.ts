// sync/'s front door: what the rest of src/ (cli/, runs/, undo/, change-log/, smoke/, server/) and
// jobs/ use of a sync. They import it from here, never from a room of sync/ (eslint.config.js says
// so); tests may reach into the rooms.
export { syncFeed } from './run/sync-feed.js';
export { runSync } from './run/sync-run.js';
export type { SyncDeps, SyncOptions, SyncProgress, SyncTestHooks } from './run/context.js';
export { lanesOf, chatbotsOf, laneId, type Lane } from './read/lanes.js';
export { ruleOf, type PlannedCreate, type PlannedDelete, type PlannedUpdate } from './model/plan-types.js';
export { withheldChanges } from './plan/plan.js';
export { fetchRemote, remoteKey, remotePages } from './remote/remote.js';
// undo writes through the sync's own write step (one write-job builder for both)
export { createBeforeCapture, type PagedItems } from './write/capture-before.js';
export { createExecutor, deleteJobs, writeJobs, type ExecutionResult, type ItemFailure } from './write/execute.js';
export { commitChanges, emptyChanges } from './settle/state.js';
export { lanesDoneBy, LANE_DONE_NAMESPACE, type LaneDone } from './settle/lane-done.js';
export { fingerprintNamespace, MARK_NAMESPACE } from './model/state-names.js';
export { stoppedOutcome, thrownOutcome } from './model/outcome.js';
// (undo reports its own writes: a refused credential in the sync's words)
export { authFailure } from './util/auth.js';
export type { SyncReport } from './report/report.js';
export type { ItemFailureView, SourceView, SyncReportView } from './report/report-view.js';
export { failedReport, displayCounts, displayCountsLine, displayLine } from './report/report.js';
export { formatSyncReport, requestsLine } from './report/report-format.js';
export { describeChange, type ChangeSink, type Headline, type ListingChange } from './model/changes.js';
export {
  createProgressLine,
  createRunProgress,
  describeProgress,
  progressWords,
  RunProgress,
} from './report/progress.js';
