// The report's words, as a person reads them from the CLI: a record's place (line and record number
// for XML, ListingKey and ListingId for RESO), "is missing" for a missing field, the same rejected
// count from `sync` and `feed preview`, and a network error said once.
import { readFile, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { beforeAll, describe, expect, it } from 'vitest';
import { feedsync } from '../settings/run-cli.js';
import { apiYaml, COLUMNS, rows, SN, type Row, useEmulatorSync } from './helpers/feed.js';

let config: string;

function xml(data: Row[]): string {
  const record = (r: Row) =>
    `  <Listing>\n${COLUMNS.filter((c) => r[c] !== undefined)
      .map((c) => `    <${c}>${r[c]}</${c}>`)
      .join('\n')}\n  </Listing>`;
  return `<?xml version="1.0"?>\n<Listings>\n${data.map(record).join('\n')}\n  <Listing><MLSNumber>MLS0099</MLSNumber><Status>Active</Sta></Listing>\n</Listings>\n`;
}

const sync = useEmulatorSync({ perFile: true });
beforeAll(async () => {
  const data = rows(3);
  delete data[1]!.Status;
  await writeFile(join(sync.env().dir, 'homes.xml'), xml(data));
  // three RESO records from the sample replay
  const pages = JSON.parse(await readFile(join(import.meta.dirname, '../../fixtures/feeds/reso-pages.json'), 'utf8'));
  const value = pages[0].value.slice(0, 3);
  delete value[1].ListPrice;
  await writeFile(
    join(sync.env().dir, 'reso.json'),
    JSON.stringify([{ ...pages[0], value, '@odata.nextLink': undefined }]),
  );
  config = join(sync.env().dir, 'feedsync.yaml');
  await writeFile(
    config,
    [
      ...apiYaml(sync.te().url),
      'feeds:',
      '  - name: homes',
      `    chatbot: ${SN}`,
      '    source: { kind: xml, path: homes.xml, recordPath: Listings.Listing }',
      '    mapping:',
      '      fields:',
      ...COLUMNS.map((c) => `        ${c}: ${c}`),
      '  - name: reso',
      `    chatbot: ${SN}-R`,
      '    source: { kind: reso, path: reso.json }',
      '    mapping:',
      '      preset: reso',
      '      fields:',
      '        Url: { template: "https://broker.test/l/{ListingId}" }',
    ].join('\n'),
  );
});

describe('report words', () => {
  it('an XML record: its line and record number; a missing field "is missing"', async () => {
    const sync = await feedsync(['sync', '--config', config, '--feed', 'homes', '--dry-run']);
    const place = 'homes.xml:22, record 1';
    expect(sync.stderr).toContain(
      `    ${place} (MLS0002): Status is missing (must be one of Active, PreOnMarket, Sold)\n`,
    );
    const preview = await feedsync(['feed', 'preview', '--config', config, '--feed', 'homes']);
    expect(preview.stdout).toContain(
      `  ${place}  MLS0002\n    - Status is missing (must be one of Active, PreOnMarket, Sold)\n`,
    );
  });

  it('sync and feed preview count rejected records (parse errors among them) the same', async () => {
    const sync = JSON.parse(
      (await feedsync(['sync', '--config', config, '--feed', 'homes', '--dry-run', '--json'])).stdout,
    );
    const preview = JSON.parse(
      (await feedsync(['feed', 'preview', '--config', config, '--feed', 'homes', '--json'])).stdout,
    );
    expect(preview.counts).toMatchObject({ records: 4, valid: 2, rejected: 2, parseErrors: 1 });
    expect(sync.reports[0].counts).toMatchObject({ feedRecords: 4, valid: 2, rejected: 2 });
    expect(preview.rejected.map((r: { key?: string }) => r.key)).toEqual(
      sync.reports[0].rejected.map((r: { key?: string }) => r.key),
    );
  });

  it('a RESO record: record number, ListingKey and ListingId', async () => {
    const preview = await feedsync(['feed', 'preview', '--config', config, '--feed', 'reso']);
    expect(preview.stdout).toContain('  reso.json, record 1 (ListingKey K1000001, ListingId RES1000001)  RES1000001\n');
  });

  it('a network error says what failed once', async () => {
    const down = join(sync.env().dir, 'down.yaml');
    await writeFile(
      down,
      [
        'api: { baseUrl: "http://127.0.0.1:1", secretKey: k-secret-9, sessionKey: k-session-9, retries: 0 }',
        'chatbots: [{ serialNumber: SN-1, settings: { Name: X } }]',
      ].join('\n'),
    );
    const r = await feedsync(['settings', '--config', down]);
    expect(r.stderr).toContain('/chat/Chatbot/Edit: network error: connect ECONNREFUSED 127.0.0.1:1\n');
    expect(r.stderr.match(/ECONNREFUSED/g)).toHaveLength(1);
  });
});
