// What a finished run's report makes of its job (retry-policy.ts decides): delayed until a spent
// budget resets, failed (retried or not), or completed with the report as its return value; and
// the run's one summary line.
import { DelayedError, type Job } from 'bullmq';
import type { Logger } from '../log.js';
import { maskDeep, maskError } from '../secrets.js';
import type { JobDefinition, RunReport, RunTarget } from './job-definition.js';
import { boundReport } from './report-size.js';
import { reportError, verdictFor } from './retry-policy.js';

/**
 * What a finished run's report makes of the job: delayed until a spent budget resets, failed (to be
 * retried or not), or done with the report as its return value; and the run's one summary line.
 */
export async function settle<P>(
  def: JobDefinition<P, RunReport>,
  job: Job,
  token: string | undefined,
  report: RunReport,
  run: { target: RunTarget; attempt: { made: number; max: number }; logger: Logger },
): Promise<RunReport> {
  const { target, attempt, logger } = run;
  const verdict = verdictFor(report, attempt);
  const retryAt = verdict === 'retry' && report.retryAt ? Date.parse(report.retryAt) : NaN;
  if (!Number.isNaN(retryAt)) {
    // A spent budget: try again once it resets; a backoff retry before that would fail for sure. A
    // reset already past by now (a slow end of the run) is still a budget wait, never a failed attempt.
    logger.warn(
      { outcome: report.outcome, retryAt: report.retryAt },
      `${def.name} ${describe(target)}: retried at ${report.retryAt}, when the request budget resets`,
    );
    await job.moveToDelayed(Math.max(retryAt, Date.now() + 1), token);
    throw new DelayedError();
  }
  // One summary line per run: the job's own, or this one.
  const decision =
    verdict === 'done' ? '' : verdict === 'retry' && attempt.made < attempt.max ? 'will retry' : 'job failed, no retry';
  if (!def.logsSummary)
    logger[verdict === 'done' ? 'info' : 'warn'](
      { outcome: report.outcome },
      decision ? `${report.summary} — ${decision}` : report.summary,
    );
  else if (decision)
    logger.warn(
      { outcome: report.outcome, attempt: `${attempt.made}/${attempt.max}` },
      `${def.name} ${describe(target)}: ${decision}`,
    );
  if (verdict !== 'done') throw maskError(reportError(report, verdict));
  // the return value is stored in Redis and shown by the queue UI and `enqueue --wait`
  return maskDeep(boundReport(report), target.feed);
}

/** What a run is about, for its lines: its feed, its feeds, or its chatbot. */
export function describe(target: RunTarget): string {
  return target.feed ?? (target.feeds ? `feeds ${target.feeds.join(', ')}` : (target.chatbot ?? ''));
}
