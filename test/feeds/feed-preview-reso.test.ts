// `feed preview` on a RESO server in enum mode: it warns about keys seen twice, counts records per
// rejection reason and lists the lookup values no map covers, before any sync.
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { generateResoRecords } from '../../fixtures/generate.js';
import { startResoServer, type ResoServer } from '../helpers/reso-server.js';
import { feedsync } from '../settings/run-cli.js';

let server: ResoServer;
let dir: string;

beforeAll(async () => {
  const records = generateResoRecords(20, { seed: 5 }).map((r, i) => ({
    ...r,
    StandardStatus: i < 3 ? 'Contingent' : 'Active Under Contract',
    ...(i === 4 && { BedroomsTotal: null }),
    // ListingId, the MLS number people see, repeated by two pairs of records (distinct ListingKeys)
    ...(i === 6 && { ListingId: 'DUP-1' }),
    ...(i === 7 && { ListingId: 'DUP-1' }),
    ...(i === 8 && { ListingId: 'DUP-2' }),
    ...(i === 9 && { ListingId: 'DUP-2' }),
  }));
  server = await startResoServer({ records, spelling: 'enum', maxPageSize: 4 });
  dir = await mkdtemp(join(tmpdir(), 'feedsync-preview-'));
  await writeFile(
    join(dir, 'feedsync.yaml'),
    `api: { baseUrl: embedded, secretKey: preview-secret-key-1, sessionKey: preview-session-key-2 }\nfeeds:\n  - name: mls\n    chatbot: SN-1\n    source: { kind: reso, url: "${server.url}", incremental: true }\n    mapping: { preset: reso, fields: { Url: { template: "https://broker.test/l/{ListingKey}" } } }\n    display: { statuses: [Active, Active Under Contract, Contingent] }\n`,
  );
});

afterAll(async () => {
  await server.close();
  await rm(dir, { recursive: true, force: true });
});

/** `feed preview` of the test feed, as a user runs it (test/settings/run-cli.ts) */
const preview = (args: string[], config = join(dir, 'feedsync.yaml')) =>
  feedsync(['feed', 'preview', '--config', config, '--feed', 'mls', ...args]);

describe('feed preview warns before a sync', () => {
  it('--json: keys seen twice, records per rejection reason, lookup values no map covers', async () => {
    const r = await preview(['--json']);
    expect(r.code).toBe(0);
    const doc = JSON.parse(r.stdout);
    expect(doc.complete).toBe(true);
    expect(doc.counts).toMatchObject({ records: 20, rejected: 4, valid: 16 });
    expect(doc.keysSeenTwice.count).toBe(2);
    expect(doc.keysSeenTwice.keys.map((k: { key: string; times: number }) => [k.key, k.times]).sort()).toEqual([
      ['DUP-1', 2],
      ['DUP-2', 2],
    ]);
    expect(doc.rejectionReasons).toEqual([
      { reason: 'Status must be one of Active, PreOnMarket, Sold', records: 3 },
      { reason: expect.stringMatching(/^Bedrooms /), records: 1 },
    ]);
    expect(doc.unmapped).toEqual([{ field: 'Status', value: 'Contingent', count: 3 }]);
  }, 60_000);

  it('prints the same as sections a person reads', async () => {
    const r = await preview(['--limit', '1']);
    expect(r.code).toBe(0);
    expect(r.stdout).toMatch(/keys seen more than once \(a sync keeps the later record\) \(2\):\n {2}DUP-\d ×2: /);
    expect(r.stdout).toContain('rejections by reason (2):\n       3  Status must be one of Active, PreOnMarket, Sold');
    expect(r.stdout).toContain('       3  Status: "Contingent"');
  }, 60_000);

  it.each([
    ['a 401 before any record', { token: 'the-right-token' }, 1, /HTTP 401/],
    ['a 500 from page 2 on', { failPages: { from: 2, status: 500 } }, 4, /page 2: the server answered HTTP 500/],
  ] as const)(
    'exits non-zero when the read failed: %s',
    async (_what, opts, status, message) => {
      const failing = await startResoServer({ records: generateResoRecords(10, { seed: 5 }), maxPageSize: 4, ...opts });
      try {
        const config = join(dir, `failing-${status}.yaml`);
        await writeFile(
          config,
          `api: { baseUrl: embedded, secretKey: preview-secret-key-1, sessionKey: preview-session-key-2 }\nfeeds:\n  - name: mls\n    chatbot: SN-1\n    source: { kind: reso, url: "${failing.url}", retries: 0 }\n    mapping: { preset: reso, fields: { Url: { template: "https://broker.test/l/{ListingKey}" } } }\n`,
        );
        const r = await preview(['--json'], config);
        expect(r.code).toBe(status);
        const doc = JSON.parse(r.stdout);
        expect(doc.complete).toBe(false);
        expect(doc.error).toMatch(message);
      } finally {
        await failing.close();
      }
    },
    60_000,
  );
});
