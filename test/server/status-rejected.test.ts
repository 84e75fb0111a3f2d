// The status page of a feed whose last run was rejected: its outcome shown by name in red (the
// colour of a run that failed), and "last good sync" the run before it, not the rejected one.
import { describe, expect, it } from 'vitest';
import type { RunEntry } from '../../src/change-log/change-log.js';
import { outcomeHeadline, type SyncOutcome } from '../../src/sync/report/report.js';
import { page } from '../../src/server/status/html.js';
import { renderStatus } from '../../src/server/status/status-page.js';

const run = (runId: string, outcome: SyncOutcome, finishedAt: string): RunEntry => ({
  runId,
  feed: 'homes',
  chatbot: 'SN-1',
  dryRun: false,
  startedAt: finishedAt,
  finishedAt,
  durationMs: 900,
  outcome,
  summary: `${outcomeHeadline(outcome, 'homes', 'SN-1')}: 0 created`,
  counts: { created: 0, updated: 0, deleted: 0, rejected: 49 },
  recorded: 49,
  dropped: 0,
});

describe('the status page of a rejected run', () => {
  it('shows the outcome by name in red, and the last good sync as the run before it', () => {
    const now = Date.parse('2026-12-06T02:00:00Z');
    const last = run('r2', 'rejected', '2026-12-06T01:00:00Z');
    const ok = run('r1', 'ok', '2026-12-05T01:00:00Z');
    const html = page(
      'status',
      renderStatus({
        at: new Date(now).toISOString(),
        staleHours: 36,
        feeds: [
          {
            feed: 'homes',
            lane: 'homes',
            chatbot: 'SN-1',
            runs: [last, ok],
            last,
            lastOk: ok,
            ageMs: now - Date.parse(ok.finishedAt),
            stale: false,
            state: 'idle',
            alerts: [],
          },
        ],
      }),
    );
    expect(html).toContain('<span class="outcome rejected">rejected</span>');
    expect(html).toMatch(/\.outcome\.rejected[^{]*\{ background: #ffebee; color: #b71c1c; \}/);
    expect(html).toContain('<td class="freshness"><span class="fresh">25.0 h ago</span></td>');
  });
});
