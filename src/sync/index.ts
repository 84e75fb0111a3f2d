export { syncFeed, type SyncDeps, type SyncOptions, type SyncProgress } from './sync-feed.js';
export type { SyncReport, SyncOutcome, SyncCounts, PlanView } from './report.js';
export { failedReport } from './report.js';
export { formatSyncReport } from './report-format.js';
export { planSync } from './plan.js';
export { evaluateGuards } from './guards.js';
export { executePlan } from './execute.js';
export { fetchRemote } from './remote.js';
export { fingerprintNamespace, missingNamespace, MARK_NAMESPACE, feedsOfChatbot, loadChatbotState, type ChatbotState, type ChatbotFeed } from './state.js';
