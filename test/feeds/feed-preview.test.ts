// `feedsync feed preview` as a new user runs it, on every feed of fixtures/demo.yaml.
import { spawnSync } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';

const root = fileURLToPath(new URL('../..', import.meta.url));

function preview(args: string[]) {
  const r = spawnSync(
    process.execPath,
    ['bin/feedsync.js', 'feed', 'preview', '--config', 'fixtures/demo.yaml', ...args],
    {
      cwd: root,
      encoding: 'utf8',
      env: { ...process.env, LOG_LEVEL: 'warn' },
    },
  );
  return { status: r.status, stdout: r.stdout, stderr: r.stderr };
}

describe('feedsync feed preview', () => {
  it.each([
    ['austin-csv', { records: 300, valid: 293, rejected: 6, skipped: 1, removed: 0, parseErrors: 2 }],
    ['zillow-xml', { records: 250, valid: 245, rejected: 4, skipped: 1, removed: 0, parseErrors: 1 }],
    ['listhub-xml', { records: 250, valid: 245, rejected: 4, skipped: 1, removed: 0, parseErrors: 1 }],
    // (an idx feed: its display rules keep Closed and off-market records off, and MlgCanView false: fixtures/README.md)
    ['reso-replay', { records: 240, valid: 212, rejected: 2, skipped: 26, removed: 0, parseErrors: 0 }],
  ])(
    '--json on %s: one document with counts, rejected records with place and reasons',
    (feed, counts) => {
      const r = preview(['--feed', feed, '--json', '--limit', '2']);
      expect(r.status).toBe(0);
      const doc = JSON.parse(r.stdout);
      expect(doc.counts).toEqual(counts);
      expect(doc.complete).toBe(true);
      expect(doc.listings).toHaveLength(2);
      expect(doc.rejected).toHaveLength(counts.rejected);
      for (const rej of doc.rejected) {
        expect(rej.position).toMatch(/^feeds\//);
        expect(rej.issues.length).toBeGreaterThan(0);
      }
    },
    60_000,
  );

  it('prints a readable report, exit 0 with rejected rows', () => {
    const r = preview(['--feed', 'austin-csv', '--limit', '1']);
    expect(r.status).toBe(0);
    expect(r.stdout).toContain(
      'feeds/austin.csv:45, record 42  ATX1000042\n    - Status must be one of Active, PreOnMarket, Sold (got "Under Review")',
    );
    expect(r.stdout).toMatch(/records\s+300\n\s+valid\s+293/);
    // a reason is worded as on the record it counts ("Bedrooms is missing", not "is required")
    expect(r.stdout).toMatch(/rejections by reason \(5\):\n(?:.*\n)*\s+1 {2}Bedrooms is missing\n/);
    // the unreadable records are some of the rejected ones: said under them (below `removed` they read as removed)
    expect(r.stdout).toContain('  rejected                     6\n    of which unreadable        2\n  skipped');
  }, 60_000);

  it('exits 2 naming the feeds when the feed is unknown', () => {
    const r = preview(['--feed', 'nope']);
    expect(r.status).toBe(2);
    expect(r.stderr).toContain('unknown feed nope; feeds in');
    expect(r.stderr).toContain('austin-csv');
  }, 60_000);
});
