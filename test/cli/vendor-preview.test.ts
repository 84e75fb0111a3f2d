// `feed preview` and `config check` on an MLS Grid feed configured the way a new user would (vendor,
// url, bearerToken, originatingSystem): both say what will be sent; the preview reads the vendor's
// server without one refusal and names the values it replaced.
import { spawn } from 'node:child_process';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { generateResoRecords } from '../../fixtures/generate.js';
import { startVendorServer, type VendorServer } from '../helpers/vendor-server.js';

const root = fileURLToPath(new URL('../..', import.meta.url));
let server: VendorServer;
let dir: string;

beforeAll(async () => {
  const records = generateResoRecords(30, { seed: 9 }).map((r, i) => ({
    ...r,
    OriginatingSystemName: 'actris',
    ...(i < 4 && { DaysOnMarket: 72_725, ParkingTotal: 510864656077.79 }),
  }));
  server = await startVendorServer({
    vendor: 'mlsgrid',
    records,
    token: 'mlsgrid-token-1',
    originatingSystem: 'actris',
  });
  dir = await mkdtemp(join(tmpdir(), 'feedsync-vendor-'));
  await writeFile(
    join(dir, 'feedsync.yaml'),
    [
      'api: { baseUrl: embedded, secretKey: preview-secret-key-1, sessionKey: preview-session-key-2 }',
      'feeds:',
      '  - name: mls',
      '    chatbot: SN-1',
      '    source:',
      '      kind: reso',
      '      vendor: mlsgrid',
      `      url: ${server.url}`,
      '      bearerToken: mlsgrid-token-1',
      '      originatingSystem: actris',
      '    mapping: { preset: reso, fields: { Url: { template: "https://broker.test/l/{ListingId}" } } }',
      '',
    ].join('\n'),
  );
});

afterAll(async () => {
  await server.close();
  await rm(dir, { recursive: true, force: true });
});

function cli(args: string[]): Promise<{ status: number | null; stdout: string; stderr: string }> {
  return new Promise((resolve) => {
    const child = spawn(process.execPath, ['bin/feedsync.js', ...args, '--config', join(dir, 'feedsync.yaml')], {
      cwd: root,
      env: { ...process.env, LOG_LEVEL: 'warn' },
    });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (d) => (stdout += d));
    child.stderr.on('data', (d) => (stderr += d));
    child.on('close', (status) => resolve({ status, stdout, stderr }));
  });
}

describe('vendor mlsgrid in the CLI', () => {
  it("config check and feed preview show the profile's rules; the preview reads with no refusal and names replaced values", async () => {
    const check = await cli(['config', 'check']);
    expect(check.status).toBe(0);
    expect(check.stderr).toContain(
      "vendor mlsgrid (MLS Grid API 2.0): paging nextLink, no $orderby, $top 1000 a page, every $filter: OriginatingSystemName eq 'actris'",
    );
    expect(check.stderr).toContain('2 req/s, 7200/hour, 40000/day, 4 GB/hour');

    const preview = await cli(['feed', 'preview', '--feed', 'mls']);
    expect(preview.status, preview.stderr).toBe(0);
    expect(preview.stdout).toContain('vendor mlsgrid (MLS Grid API 2.0)');
    expect(preview.stdout).toContain('read: 1 pages, 1 requests');
    expect(preview.stdout).toMatch(
      /values replaced by their rule's default \(onInvalid: default\) \(2\):\n {2}DaysOnMarket × 4\n {2}ParkingSpots × 4/,
    );
    expect(server.refused).toEqual([]);
    expect(decodeURIComponent(server.requests[0]!.url)).toContain(
      "$filter=(OriginatingSystemName eq 'actris') and (MlgCanView eq true)",
    );
  });
});
