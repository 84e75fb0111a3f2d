// `feedsync feed drift --feed F` as a cron runs it (bin/feedsync.js, a child process, its state in
// the config's folder): exit 0 when the mapping matches the source, 5 when drift is found (a lookup
// value no map covers), 2 for a feed that is not a live RESO one, 1 when the server cannot be read
// ($metadata refused). `--json` is one document; each run reads the server now, `--stored` sends nothing.
import { readFile, writeFile } from 'node:fs/promises';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { generateResoRecords } from '../../fixtures/generate.js';
import { startResoServer, type ResoServer } from '../helpers/reso-server.js';
import { feedsync, writeTestConfig } from '../settings/run-cli.js';

const statuses = (values: string[]) =>
  values.map((v) => ({ LookupName: 'StandardStatus', LookupValue: v, StandardLookupValue: v }));
const COVERED = ['Active', 'Active Under Contract', 'Pending', 'Closed', 'Expired'];
const servers: ResoServer[] = [];
let plain: ResoServer;
let drifted: ResoServer;
let broken: ResoServer;

beforeAll(async () => {
  const records = generateResoRecords(5, { seed: 3 });
  const lookupNames = { StandardStatus: 'StandardStatus' };
  plain = await startResoServer({ records, lookups: statuses(COVERED), lookupNames });
  drifted = await startResoServer({ records, lookups: statuses([...COVERED, 'Temporarily Off Market']), lookupNames });
  broken = await startResoServer({ records, metadata: false });
  servers.push(plain, drifted, broken);
});
afterAll(() => Promise.all(servers.map((s) => s.close())));

async function configFor(feed: string): Promise<string> {
  const { config } = await writeTestConfig('embedded', ['  - serialNumber: SN-DRIFT']);
  await writeFile(config, `${await readFile(config, 'utf8')}\nfeeds:\n${feed}\n`);
  return config;
}
const reso = (server: ResoServer) =>
  `  - { name: mls, chatbot: SN-DRIFT, source: { kind: reso, url: "${server.url}", retries: 0 }, mapping: { preset: reso } }`;

describe('feedsync feed drift', () => {
  // each case runs the CLI two or three times as a child process: seconds each on a loaded machine
  const CLI_TIME = { timeout: 120_000 };

  // issue 53: each run reads the server now (it read at most once a day, so a change went unseen the
  // same day); --stored compares the last read kept and sends nothing (counted at the server)
  it('exit 0 when the mapping matches; a second run reads again, --stored sends nothing', CLI_TIME, async () => {
    const config = await configFor(reso(plain));
    const first = await feedsync(['feed', 'drift', '--feed', 'mls', '--config', config]);
    expect(first.stderr).toBe('');
    expect(first.code).toBe(0);
    expect(first.stdout).toMatch(/checked \$metadata and the Lookup resource, read now \(2 requests\)/);
    expect(first.stdout).toMatch(/no drift/);
    expect(first.stdout).not.toMatch(/not offered.*Media/);
    const second = await feedsync(['feed', 'drift', '--feed', 'mls', '--config', config, '--json']);
    expect(second.code).toBe(0);
    expect(JSON.parse(second.stdout)).toMatchObject({ feed: 'mls', how: 'now', read: true, requests: 2, findings: [] });
    expect(plain.lookupRequests).toBe(2);
    expect(plain.metadataRequests).toBe(2);
    const received = plain.received;
    const stored = await feedsync(['feed', 'drift', '--feed', 'mls', '--config', config, '--stored']);
    expect(stored.code).toBe(0);
    expect(stored.stdout).toMatch(/--stored: no request sent/);
    expect(plain.received).toBe(received);
  });

  it('exit 5 when drift is found, naming it', CLI_TIME, async () => {
    const config = await configFor(reso(drifted));
    const r = await feedsync(['feed', 'drift', '--feed', 'mls', '--config', config]);
    expect(r.code).toBe(5);
    expect(r.stdout).toMatch(
      /drift found \(1\):\n {2}value: StandardStatus value "Temporarily Off Market" \(lookup StandardStatus\) is listed by the server and no map of Status covers it/,
    );
    const json = await feedsync(['feed', 'drift', '--feed', 'mls', '--config', config, '--json']);
    expect(json.code).toBe(5);
    expect(JSON.parse(json.stdout).findings).toEqual([
      expect.objectContaining({ kind: 'value', field: 'StandardStatus', value: 'Temporarily Off Market' }),
    ]);
  });

  it('exit 2 for a feed that is not a live RESO one, 1 when the server cannot be read', CLI_TIME, async () => {
    const csv = await configFor(
      '  - { name: mls, chatbot: SN-DRIFT, source: { kind: csv, path: homes.csv }, mapping: { preset: reso } }',
    );
    const usage = await feedsync(['feed', 'drift', '--feed', 'mls', '--config', csv]);
    expect(usage.code).toBe(2);
    expect(usage.stderr).toMatch(/not read from a RESO server/);
    const failed = await feedsync(['feed', 'drift', '--feed', 'mls', '--config', await configFor(reso(broken))]);
    expect(failed.code).toBe(1);
    expect(failed.stderr).toMatch(/\$metadata/);
  });
});
