// `feed preview` of a feed with display rules (docs/display-rules.md): per listing, what the rules
// did to it; per record kept off, the rule that hides it; the counts per rule. `--key` says what a
// sync does with a listing a rule hides.
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { flaggedRecord, SECRET_MARK } from '../helpers/flagged-reso.js';
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
const cli = (args: string[]) =>
  feedsync(['feed', 'preview', '--config', join(dir, 'feedsync.yaml'), '--feed', 'mls', ...args]);

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
    expect(doc.display).toEqual({
      purpose: 'idx',
      soldDays: 0,
      hidden: { InternetEntireListingDisplayYN: 1, 'sold-window': 1 },
      addressWithheld: 1,
      held: 1,
    });
  }, 60_000);

  it('prints the rules beside each listing and record, and the counts', async () => {
    const r = await cli(['--limit', '5']);
    expect(r.code, r.stderr).toBe(0);
    expect(r.stdout).toMatch(/FL-03\n {4}display rules: address withheld \(InternetAddressDisplayYN\); attribution\n/);
    expect(r.stdout).toMatch(
      /FL-02: InternetEntireListingDisplayYN is false \(display rule InternetEntireListingDisplayYN\)/,
    );
    expect(r.stdout).toContain(
      'display rules (idx, docs/display-rules.md): not shown: InternetEntireListingDisplayYN false × 1, sold (display.soldDays 0) × 1; address withheld × 1; held back without their attribution × 1',
    );
  }, 60_000);

  it('--key: a listing a rule hides is named with its rule, and what a sync does', async () => {
    const r = await cli(['--key', 'FL-02']);
    expect(r.code, r.stderr).toBe(0);
    expect(r.stdout).toContain(
      'not shown (display rule InternetEntireListingDisplayYN): InternetEntireListingDisplayYN is false',
    );
    expect(r.stdout).toMatch(
      /display rule InternetEntireListingDisplayYN hides it .*the chatbot does not hold it: a sync does not create it/,
    );
  }, 60_000);
});

describe('feed preview --key keeps restricted and withheld values to itself (issue 49)', () => {
  it('prints no restricted field of an idx feed, naming each one it left out; --show-restricted prints them', async () => {
    const r = await cli(['--key', 'FL-01']);
    expect(r.code, r.stderr).toBe(0);
    expect(r.stdout).not.toContain(SECRET_MARK);
    expect(r.stdout).toMatch(
      /PrivateRemarks +\(left out: restricted: private and office remarks; --show-restricted prints it\)/,
    );
    expect(r.stdout).toMatch(/AccessCode +\(left out: restricted: lockbox and access codes/);
    expect(r.stdout).toContain('101 Oak Street');
    const json = await cli(['--key', 'FL-01', '--json']);
    expect(json.stdout).not.toContain(SECRET_MARK);
    expect(JSON.parse(json.stdout).source.leftOut).toEqual(
      expect.arrayContaining([{ field: 'OwnerName', why: 'restricted: owner and occupant names and phones' }]),
    );

    const shown = await cli(['--key', 'FL-01', '--show-restricted']);
    expect(shown.code, shown.stderr).toBe(0);
    expect(shown.stdout).toContain(`${SECRET_MARK}private-remarks-01`);
    expect(shown.stdout).toContain(`${SECRET_MARK}owner-01`);
  }, 60_000);

  it('a record whose address is withheld: its street and coordinates are left out of the source record too', async () => {
    const r = await cli(['--key', 'FL-03']);
    expect(r.code, r.stderr).toBe(0);
    expect(r.stdout).not.toContain('103 Oak Street');
    expect(r.stdout).not.toContain('30.263');
    expect(r.stdout).toMatch(/UnparsedAddress +\(left out: address withheld \(InternetAddressDisplayYN\)/);
    expect(r.stdout).toContain('Austin');
    expect((await cli(['--key', 'FL-03', '--show-restricted'])).stdout).toContain('103 Oak Street');
  }, 60_000);

  it('display.flags naming a restricted field is a config error: its values never reach a rejection reason', async () => {
    const flagged = join(dir, 'flags-restricted.yaml');
    await writeFile(
      flagged,
      `api: { baseUrl: embedded, secretKey: preview-secret-key-1, sessionKey: preview-session-key-2 }\nfeeds:\n  - name: mls\n    chatbot: SN-1\n    source: { kind: reso, url: "${server.url}" }\n    display: { flags: { IDXParticipationYN: PrivateRemarks } }\n    mapping: { preset: reso, fields: { Url: { template: "https://broker.test/l/{ListingKey}" } } }\n`,
    );
    const r = await feedsync(['feed', 'preview', '--config', flagged, '--feed', 'mls']);
    expect(r.code).toBe(2);
    expect(r.stderr).toMatch(
      /display\.flags\.IDXParticipationYN reads PrivateRemarks, restricted: private and office remarks/,
    );
    expect(r.stdout + r.stderr).not.toContain(SECRET_MARK);
  }, 60_000);
});
