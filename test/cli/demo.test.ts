// The first command a new user runs (`npm start`: `sync --config fixtures/demo.yaml`) succeeds, and
// still shows what a real feed brings: rejected records with their place and reasons, and a lookup
// value no map covers. `npm run demo:partial` shows a feed that cannot be read whole (exit 4).
// Dry runs on a copy of fixtures/: the same verdicts as real runs, with nothing written beside the
// committed fixtures.
import { cpSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, describe, expect, it } from 'vitest';
import { feedsync } from '../settings/run-cli.js';

const fixtures = fileURLToPath(new URL('../../fixtures/', import.meta.url));
const dir = mkdtempSync(join(tmpdir(), 'feedsync-demo-'));
for (const f of ['demo.yaml', 'demo-partial.yaml', 'feeds'])
  cpSync(join(fixtures, f), join(dir, f), { recursive: true });
afterAll(() => rmSync(dir, { recursive: true, force: true }));

interface Report {
  feed: string;
  outcome: string;
  source: { complete: boolean };
  rejected: { position: { file: string; index: number; line?: number }; reasons: string[] }[];
  unmapped?: { field: string; value: string }[];
}

async function dryRun(config: string): Promise<{ code: number; reports: Report[] }> {
  const r = await feedsync(['sync', '--config', join(dir, config), '--dry-run', '--json']);
  return { code: r.code, reports: JSON.parse(r.stdout).reports };
}

describe('the demo', () => {
  it('npm start: every feed is read whole and the run exits 0, with rejected records and unmapped values shown', async () => {
    const { code, reports } = await dryRun('demo.yaml');
    expect(reports.map((r) => [r.feed, r.outcome, r.source.complete])).toEqual([
      ['austin-csv', 'ok', true],
      ['zillow-xml', 'ok', true],
      ['listhub-xml', 'ok', true],
      ['reso-replay', 'ok', true],
    ]);
    expect(code).toBe(0);
    for (const r of reports) {
      expect(r.rejected.length, r.feed).toBeGreaterThan(0);
      for (const rej of r.rejected) {
        expect(rej.position.file).toMatch(/^feeds\//);
        expect(rej.reasons.length).toBeGreaterThan(0);
      }
    }
    expect(reports.flatMap((r) => r.unmapped ?? []).map((u) => `${u.field}: ${u.value}`)).toEqual([
      'Status: Under Review',
      'Status: Auction',
    ]);
  }, 60_000);

  it('npm run demo:partial: a keyless record and a cut-off last row end the run partial, exit 4', async () => {
    const { code, reports } = await dryRun('demo-partial.yaml');
    expect(code).toBe(4);
    expect(reports).toMatchObject([{ feed: 'partial-csv', outcome: 'partial', source: { complete: false } }]);
    expect(reports[0]!.rejected.map((r) => r.position)).toEqual([
      { file: 'feeds/partial.csv', index: 12, line: 14 },
      { file: 'feeds/partial.csv', index: 29, line: 31 },
    ]);
  }, 60_000);
});
