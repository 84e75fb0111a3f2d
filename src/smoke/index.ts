export { runSmoke, type SmokeDeps, type SmokeOptions } from './run-smoke.js';
export type { ChatbotSmokeResult, SmokeCheck, SmokeReport } from './report.js';
export { formatSmokeReport, type SmokeReportView } from './report-format.js';
export { answerChecks, joinCheck } from './checks.js';
