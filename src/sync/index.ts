export { syncFeed } from './run/sync-feed.js';
export { runSync, type SyncDeps, type SyncOptions, type SyncProgress } from './run/sync-run.js';
export { lanesOf, chatbotsOf, writersOf, laneId, type Lane } from './read/lanes.js';
export type { SyncReport, SyncOutcome, SyncCounts, PlanView } from './report/report.js';
export { failedReport } from './report/report.js';
export { formatSyncReport } from './report/report-format.js';
export { evaluateGuards } from './settle/guards.js';
export { fetchRemote } from './remote/remote.js';
export { fingerprintNamespace, missingNamespace, MARK_NAMESPACE, loadChatbotState, type ChatbotState, type ChatbotFeed } from './settle/state.js';
