// `enqueue --wait` checks a job's return value before its kind's formatter reads it
// (src/cli/job-report.ts), since a worker of another version or a hand in Redis may have written it.
// The sync formatter reads the feed server's HTTP status (a read refused at its first request:
// "the first request was refused (HTTP 401); nothing read"), which the sync schema did not check: a
// report whose status was no number was taken, and printed "(HTTP [object Object])" or called a
// refusal an error. It is said now, by its field, as any other field of the wrong shape.
import { describe, expect, it } from 'vitest';
import { readJobReport } from '../../src/cli/job-report.js';
import { failedReport, formatSyncReport } from '../../src/sync/index.js';

/** A lane whose feed server answered its first request with `status`: nothing read. */
function refusedAtFirst(status: unknown) {
  const r = failedReport({
    feed: 'homes',
    chatbot: 'SN-R',
    message: 'the feed server refused the request (HTTP 401); check source.auth',
    stateLocation: 'redis',
  });
  return { ...r, source: { ...r.source, pages: 0, requests: 1, status } };
}

/** What `enqueue --wait` prints of the value (enqueue.ts format): the lanes its check took, formatted. */
function printed(value: unknown): string {
  const read = readJobReport('sync', value);
  return 'report' in read && read.report.kind === 'sync' ? read.report.lanes.map(formatSyncReport).join('') : '';
}

describe('enqueue --wait, a sync report whose source status is not a number', () => {
  it('an object: named, not printed as "(HTTP [object Object])"', () => {
    const value = refusedAtFirst({ code: 401 });
    expect(printed(value)).not.toContain('[object Object]');
    expect(readJobReport('sync', value)).toEqual({ problem: 'source.status: expected number, received object' });
  });

  it('a string: named, not printed as an error when it was a refusal', () => {
    const value = refusedAtFirst('401');
    expect(printed(value)).not.toContain('answered with an error');
    expect(readJobReport('sync', value)).toEqual({ problem: 'source.status: expected number, received string' });
  });

  it('a number: taken, and the refusal said', () => {
    expect(printed(refusedAtFirst(401))).toContain('source: the first request was refused (HTTP 401); nothing read');
  });
});
