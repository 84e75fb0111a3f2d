export { syncFeed } from './sync-feed.js';
export { runSync, type SyncDeps, type SyncOptions, type SyncProgress } from './sync-run.js';
export { lanesOf, chatbotsOf, writersOf, laneId, type Lane } from './lanes.js';
export type { SyncReport, SyncOutcome, SyncCounts, PlanView } from './report.js';
export { failedReport } from './report.js';
export { formatSyncReport } from './report-format.js';
export { evaluateGuards } from './guards.js';
export { fetchRemote } from './remote.js';
export { fingerprintNamespace, missingNamespace, MARK_NAMESPACE, loadChatbotState, type ChatbotState, type ChatbotFeed } from './state.js';
