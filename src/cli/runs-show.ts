// `feedsync runs show RUN`: one run from the change log — outcome, counts, and every change it made
// (or, a dry run, planned), listing by listing; `--json` prints { run, changes }.
import { loadConfig } from '../config/load.js';
import { ConfigError } from '../errors.js';
import { earlierAttemptNote, shownEntry, type RunEntry } from '../change-log/change-log.js';
import { openChangeLog } from '../change-log/open.js';
import { describeChange } from '../sync/index.js';
import { EXIT, printJson } from './exit.js';
import { feedsyncCommand } from '../format/invocation.js';

export interface RunsShowOptions {
  config: string;
  run: string;
  limit: number;
  json?: boolean;
}

export async function run(opts: RunsShowOptions): Promise<number> {
  if (opts.limit < 1) throw new ConfigError('--limit must be at least 1');
  const loaded = await loadConfig(opts.config);
  const log = await openChangeLog(loaded);
  try {
    const found = await log.run(opts.run, opts.limit);
    const { run, changes, total } = found;
    if (!run && !changes.length) {
      const recent = (await log.runs(undefined, 5)).map((r) => r.runId);
      throw new ConfigError(
        `no run ${JSON.stringify(opts.run)} in the change log (${log.location}; kept ${loaded.config.changeLog.retentionDays} days)` +
          (recent.length ? `; recent runs: ${recent.join(', ')}` : ''),
      );
    }
    if (opts.json) {
      printJson({ run, changes: changes.map(shownEntry) });
      return EXIT.ok;
    }
    const out: string[] = run ? runLines(run) : [];
    const earlier = earlierAttemptNote(found);
    if (earlier) out.push(`  ${earlier}`);
    out.push(`  changes (${total}${run?.dropped ? `, and ${run.dropped} past changeLog.maxPerRun not kept` : ''}):`);
    for (const e of changes) out.push(`    ${describeChange(e.change, e.dryRun)}`);
    if (total > changes.length) out.push(`    … ${total - changes.length} more (--limit, or --json)`);
    process.stdout.write(out.join('\n') + '\n');
    return EXIT.ok;
  } finally {
    await log.close();
  }
}

/** The run's head: what ran, when, its summary, and what it kept for undo, said or checked. */
function runLines(run: RunEntry): string[] {
  const out = [
    `run ${run.runId}${run.jobId ? ` (job ${run.jobId})` : ''}: ${run.dryRun ? 'dry run of ' : ''}${run.feed} → ${run.chatbot}, ${run.outcome}`,
    `  ${run.startedAt.replace('T', ' ').slice(0, 19)} UTC, ${run.durationMs} ms`,
    `  ${run.summary}`,
  ];
  if (run.undoOf) out.push(`  an undo of run ${run.undoOf}`);
  if (run.wholes)
    out.push(
      `  kept for undo: ${run.wholes.kept} whole listing(s), ${run.wholes.bytes} bytes${run.wholes.notKept ? `; ${run.wholes.notKept} not kept (\`${feedsyncCommand()} undo ${run.runId} --dry-run\` names them)` : ''}`,
    );
  if (run.message) out.push(`  ${run.message}`);
  if (run.chat)
    out.push(
      `  chat check: answerable ${run.chat.answerable}/${run.chat.asked}${run.chat.missing.length ? ` — not answered: ${run.chat.missing.join(', ')}` : ''}`,
    );
  return out;
}
