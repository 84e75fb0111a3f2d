import { describe, expect, it } from 'vitest';
import { failedReport, summaryLine, type SyncOutcome } from '../../src/sync/report/report.js';

// The run's summary line goes to the log, the alert and `runs`: its first words say what the run
// came to, so a run that failed or was rejected never reads "synced".
const base = (outcome: SyncOutcome) => {
  const { summary: _s, ...r } = failedReport({ feed: 'homes', chatbot: 'SN-1', message: 'x', stateLocation: 's' });
  return {
    ...r,
    outcome,
    message: undefined,
    counts: { ...r.counts, created: 3, failed: outcome === 'partial' ? 2 : 0 },
  };
};

describe('summary line words', () => {
  it('says synced only when the run synced', () => {
    expect(summaryLine(base('ok'))).toMatch(/^synced homes → SN-1: 3 created, 0 updated, 0 deleted, 0 failed in 0 ms$/);
    const failedWrites = { ...base('partial'), source: { mode: 'full' as const, complete: true } };
    expect(summaryLine(failedWrites)).toMatch(
      /^synced homes → SN-1 in part \(some writes failed\): 3 created, .*2 failed/,
    );
    expect(summaryLine(base('guard'))).toMatch(/^synced homes → SN-1, deletes held by the delete guard: /);
  });

  // demo:partial: a feed cut off in its last row, every write made; the line names the cut, not writes
  it('a partial run says why: the feed not read whole, or writes that failed', () => {
    const cut = { ...base('partial'), counts: { ...base('partial').counts, failed: 0 } };
    expect(summaryLine(cut)).toMatch(
      /^synced homes → SN-1 in part \(the feed was not read whole\): 3 created, .*0 failed/,
    );
    expect(summaryLine(base('partial'))).toMatch(
      /^synced homes → SN-1 in part \(the feed was not read whole; some writes failed\): /,
    );
    const unconfirmed = { ...cut, source: { mode: 'full' as const, complete: true } };
    expect(summaryLine(unconfirmed)).toMatch(/^synced homes → SN-1 in part \(deletes withheld\): /);
  });

  it.each([
    ['failed', /^sync of homes → SN-1 failed: /],
    ['rejected', /^rejected: homes → SN-1 not synced, the feed cannot be used: /],
    ['unavailable', /^sync of homes → SN-1 broke off: a service it needs was unavailable: /],
    ['aborted', /^sync of homes → SN-1 aborted: /],
    ['cancelled', /^sync of homes → SN-1 cancelled: /],
  ] as const)('%s does not say synced', (outcome, words) => {
    const line = summaryLine(base(outcome));
    expect(line).toMatch(words);
    expect(line).not.toMatch(/\bsynced homes\b|— \w+$/);
  });

  it('a run that could not start says so the same way', () => {
    expect(failedReport({ feed: 'homes', chatbot: 'SN-1', message: 'lock held', stateLocation: 's' }).summary).toBe(
      'sync of homes → SN-1 failed: lock held',
    );
  });
});
