// `feed preview` of a feed with display rules (docs/display-rules.md): per listing, what the rules
// did to it; per record kept off, the rule that hides it; the counts per rule. `--key` says what a
// sync does with a listing a rule hides.
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { flaggedRecord } from '../helpers/flagged-reso.js';
import { startResoServer, type ResoServer } from '../helpers/reso-server.js';
import { feedsync } from '../settings/run-cli.js';

let server: ResoServer;
let dir: string;

beforeAll(async () => {
  const records = [
    flaggedRecord(1),
    flaggedRecord(2, { InternetEntireListingDisplayYN: 'N' }),
    flaggedRecord(3, { InternetAddressDisplayYN: false }),
    flaggedRecord(4, { StandardStatus: 'Closed', CloseDate: '2025-01-02' }),
    flaggedRecord(5, { ListOfficeName: null }),
  ];
  server = await startResoServer({ records });
  dir = await mkdtemp(join(tmpdir(), 'feedsync-preview-display-'));
  await writeFile(
    join(dir, 'feedsync.yaml'),
    `api: { baseUrl: embedded, secretKey: preview-secret-key-1, sessionKey: preview-session-key-2 }\nfeeds:\n  - name: mls\n    chatbot: SN-1\n    source: { kind: reso, url: "${server.url}" }\n    mapping: { preset: reso, fields: { Url: { template: "https://broker.test/l/{ListingKey}" } } }\n`,
  );
});

afterAll(async () => {
  await server.close();
  await rm(dir, { recursive: true, force: true });
});

/** `feed preview` of the test feed, as a user runs it (test/settings/run-cli.ts) */
const cli = (args: string[]) => feedsync(['feed', 'preview', '--config', join(dir, 'feedsync.yaml'), '--feed', 'mls', ...args]);

describe('feed preview shows the display rules', () => {
  it('--json: the rules each listing was shown by, the rule of each record kept off, the counts per rule', async () => {
    const r = await cli(['--json']);
    expect(r.code, r.stderr).toBe(0);
    const doc = JSON.parse(r.stdout);
    expect(doc.listings.map((l: { key: string; rules?: string[] }) => [l.key, l.rules])).toEqual([
      ['FL-01', ['attribution']],
      ['FL-03', ['address withheld (InternetAddressDisplayYN)', 'attribution']],
    ]);
    expect(doc.skipped.map((s: { key: string; rule?: string }) => [s.key, s.rule])).toEqual([
      ['FL-02', 'InternetEntireListingDisplayYN'],
      ['FL-04', 'sold-window'],
    ]);
    expect(doc.rejected).toEqual([expect.objectContaining({ key: 'FL-05', held: true })]);
    expect(doc.display).toEqual({ purpose: 'idx', soldDays: 0, hidden: { InternetEntireListingDisplayYN: 1, 'sold-window': 1 }, addressWithheld: 1, held: 1 });
  }, 60_000);

  it('prints the rules beside each listing and record, and the counts', async () => {
    const r = await cli(['--limit', '5']);
    expect(r.code, r.stderr).toBe(0);
    expect(r.stdout).toMatch(/FL-03\n {4}display rules: address withheld \(InternetAddressDisplayYN\); attribution\n/);
    expect(r.stdout).toMatch(/FL-02: InternetEntireListingDisplayYN is false \(display rule InternetEntireListingDisplayYN\)/);
    expect(r.stdout).toContain(
      'display rules (idx, docs/display-rules.md): not shown: InternetEntireListingDisplayYN false × 1, sold (display.soldDays 0) × 1; address withheld × 1; held back without their attribution × 1',
    );
  }, 60_000);

  it('--key: a listing a rule hides is named with its rule, and what a sync does', async () => {
    const r = await cli(['--key', 'FL-02']);
    expect(r.code, r.stderr).toBe(0);
    expect(r.stdout).toContain('not shown (display rule InternetEntireListingDisplayYN): InternetEntireListingDisplayYN is false');
    expect(r.stdout).toMatch(/display rule InternetEntireListingDisplayYN hides it .*the chatbot does not hold it: a sync does not create it/);
  }, 60_000);
});
