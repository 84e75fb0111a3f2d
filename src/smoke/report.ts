// The smoke report: plain JSON, the job's return value and what `feedsync smoke --json` prints.
import type { StoppedOutcome } from '../errors.js';

export interface SmokeCheck {
  /** e.g. ask.success, ask.suffix, stream.join */
  name: string;
  ok: boolean;
  detail: string;
}

export interface ChatbotSmokeResult {
  serialNumber: string;
  ok: boolean;
  checks: SmokeCheck[];
  /** the plain call, request to answer */
  latencyMs: number;
  /** the streamed call: request to first fragment (undefined: no fragment came, or no stream asked) */
  firstFragmentMs?: number;
  /** the streamed call: request to the end of the stream */
  streamMs?: number;
  /** the first failed check, "stream.join: ..." */
  reason?: string;
}

export interface SmokeReport {
  kind: 'smoke';
  /** stopped by its signal: the sync's words (errors.ts stoppedOutcome) */
  outcome: 'ok' | 'failed' | StoppedOutcome;
  chatbots: ChatbotSmokeResult[];
  startedAt: string;
  finishedAt: string;
  durationMs: number;
  /** one line, e.g. "smoke: 1 passed, 1 failed (SN-2 ask.suffix: ...) in 340 ms" */
  summary: string;
}
