// The settings push report: plain JSON, the job's return value and what `feedsync settings --json` prints.
import type { EditSettingsRequest } from '../api/schemas.js';
import type { StoppedOutcome, ValidationIssue } from '../errors.js';

export type SettingsStatus = 'pushed' | 'unchanged' | 'invalid' | 'failed' | 'would-push';

export interface ReportedError {
  message: string;
  code: string;
  retryable: boolean;
}

export interface ChatbotSettingsResult {
  serialNumber: string;
  status: SettingsStatus;
  /** the settings fields sent (or that would be) */
  fields: string[];
  /** invalid: every problem, each with its path in the config */
  issues?: ValidationIssue[];
  /** failed: why */
  error?: ReportedError;
  /** dry run: the Edit body that would be sent */
  body?: EditSettingsRequest;
}

export interface SettingsReport {
  kind: 'settings';
  /** stopped by its signal: the sync's words (errors.ts stoppedOutcome) */
  outcome: 'ok' | 'failed' | StoppedOutcome;
  /** a rerun may help: every failure was transient (network, 5xx, 429) and none was invalid */
  retryable: boolean;
  dryRun: boolean;
  force: boolean;
  counts: Record<SettingsStatus, number>;
  chatbots: ChatbotSettingsResult[];
  stateLocation: string;
  startedAt: string;
  finishedAt: string;
  durationMs: number;
  /** one line, e.g. "settings: 1 pushed, 1 unchanged, 0 invalid, 0 failed in 120 ms" */
  summary: string;
}
