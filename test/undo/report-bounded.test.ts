// An undo's report as `enqueue undo RUN --wait` prints it: the job's return value, whose lists Redis
// keeps bounded (src/queue/report-size.ts, the first 50 of each and `omitted` beside them), read
// back and formatted. The lines left out are counted in one number, the report's own and the
// bound's together.
import { describe, expect, it } from 'vitest';
import { boundReport, REPORT_LIST_ITEMS } from '../../src/queue/report-size.js';
import { feedsyncCommand } from '../../src/format/invocation.js';
import { formatUndoReport, type UndoReport } from '../../src/undo/index.js';

function undoReport(deletes: number, omitted?: UndoReport['plan']['omitted']): UndoReport {
  const keys = Array.from({ length: deletes }, (_, i) => `MLS${1000 + i}`);
  return {
    runId: 'undo-1.1',
    undoOf: 'sync-a.1',
    feed: 'homes',
    chatbot: 'SN-1',
    outcome: 'ok',
    retryable: false,
    dryRun: false,
    force: false,
    counts: {
      deleted: deletes + (omitted?.deletes ?? 0),
      updated: 0,
      created: 0,
      unchanged: 0,
      conflicts: 0,
      cannot: 0,
      failed: 0,
      duplicatesNotRecreated: 0,
      removedByRuleNotRecreated: 0,
    },
    plan: { creates: [], updates: [], deletes: keys, ...(omitted && { omitted }) },
    conflicts: [],
    cannot: [],
    failures: [],
    next: { full: 'the next sync reads the feed whole' },
    calls: 1,
    summary: 'undid run sync-a.1 of homes → SN-1',
    startedAt: '2026-12-07T00:00:00.000Z',
    finishedAt: '2026-12-07T00:00:01.000Z',
    durationMs: 1000,
  };
}

describe('an undo report kept by the queue, printed', () => {
  it('counts the deletes the bound left out', () => {
    const text = formatUndoReport(boundReport(undoReport(87)));
    expect(text).not.toContain('[object Object]');
    expect(text.match(/would delete|delete \(/g)).toHaveLength(REPORT_LIST_ITEMS);
    expect(text).toContain(
      `… and ${87 - REPORT_LIST_ITEMS} more (every one: \`${feedsyncCommand()} runs show undo-1.1\`)`,
    );
  });

  it("adds the report's own omitted ones (past the first 200) to those", () => {
    const text = formatUndoReport(boundReport(undoReport(200, { deletes: 60 })));
    expect(text).toContain(`… and ${60 + 200 - REPORT_LIST_ITEMS} more`);
  });
});
