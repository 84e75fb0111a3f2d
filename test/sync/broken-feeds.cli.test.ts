// A broken feed fails loudly, named by what is wrong with the file (issue 50): `feedsync sync` run as
// a process over real files against the emulator. A mapped column renamed in the header, the feed
// host's HTML error page saved as the CSV, a quote left open mid-file, and an XML error document in
// place of the XML feed each end non-zero and not ok, the feed's report's first line naming what is
// wrong, with nothing deleted and nothing written; each feed restored then syncs with 0 writes.
// `feed preview` exits 6 on the renamed column, saying so first.
import { writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { beforeAll, describe, expect, it } from 'vitest';
import { TEST_SECRET_KEY, TEST_SESSION_KEY } from '../helpers/emulator.js';
import { feedsync } from '../settings/run-cli.js';
import { apiYaml, COLUMNS, csv, rows, SN, useEmulatorSync, writeCounts, type Row } from './helpers/feed.js';

const SN_XML = 'SN-XML';
const sync = useEmulatorSync({ perFile: true });
let config: string;
const file = (name: string) => join(sync.env().dir, name);

beforeAll(async () => {
  config = file('feedsync.yaml');
  const mapping = ['    mapping:', '      fields:', ...COLUMNS.map((c) => `        ${c}: ${c}`)];
  await writeFile(
    config,
    [
      ...apiYaml(sync.te().url, { secretKey: TEST_SECRET_KEY, sessionKey: TEST_SESSION_KEY }),
      '  ratePerSecond: 1000',
      'feeds:',
      '  - name: homes',
      `    chatbot: ${SN}`,
      '    source: { kind: csv, path: homes.csv }',
      '    deletes: { maxFraction: 0.5 }',
      ...mapping,
      '  - name: homes-xml',
      `    chatbot: ${SN_XML}`,
      '    source: { kind: xml, path: homes.xml, recordPath: Listings.Listing }',
      '    deletes: { maxFraction: 0.5 }',
      ...mapping,
    ].join('\n'),
  );
});

const run = (feed: string) => feedsync(['sync', '--config', config, '--feed', feed]);
/** the first line of the feed's report on stderr */
const reportLine = (stderr: string, feed: string) => stderr.split('\n').find((l) => l.startsWith(`feed ${feed} → `));

function xml(data: Row[]): string {
  const cell = (v: unknown) =>
    String(v ?? '')
      .replace(/&/g, '&amp;')
      .replace(/</g, '&lt;');
  const listing = (r: Row) => `  <Listing>${COLUMNS.map((c) => `<${c}>${cell(r[c])}</${c}>`).join('')}</Listing>`;
  return ['<?xml version="1.0" encoding="UTF-8"?>', '<Listings>', ...data.map(listing), '</Listings>', ''].join('\n');
}

describe('a CSV feed broken at the source', () => {
  it('renamed column, HTML page, unclosed quote: each ends non-zero naming the file first; nothing deleted; restored, 0 writes', async () => {
    const good = csv(rows(10));
    await writeFile(file('homes.csv'), good);
    expect((await run('homes')).code).toBe(0);
    const before = await writeCounts(sync.te());
    expect(await sync.te().listings(SN)).toHaveLength(10);

    // the export renamed a mapped column: one message naming it, the header's columns and the nearest
    await writeFile(file('homes.csv'), good.replace(/^(.*?)Bedrooms/, '$1BedroomsCount'));
    const renamed = await run('homes');
    expect(renamed.code).toBe(6);
    expect(reportLine(renamed.stderr, 'homes')).toMatch(
      /^feed homes → chatbot SN-SYNC: rejected — homes\.csv:1: `Bedrooms` \(read by Bedrooms\) is not in the header; the nearest it has is `BedroomsCount`\. It has 17 column\(s\): `MLSNumber`, `Url`, /,
    );
    const preview = await feedsync(['feed', 'preview', '--config', config, '--feed', 'homes']);
    expect(preview.code).toBe(6);
    expect(preview.stdout.split('\n')[0]).toMatch(
      /^rejected: homes\.csv:1: `Bedrooms` \(read by Bedrooms\) is not in the header/,
    );

    // the feed host's error page saved as the file
    await writeFile(
      file('homes.csv'),
      '<!DOCTYPE html>\n<html><head><title>502 Bad Gateway</title></head><body><h1>502 Bad Gateway</h1></body></html>\n',
    );
    const html = await run('homes');
    expect(html.code).toBe(6);
    expect(reportLine(html.stderr, 'homes')).toMatch(
      /^feed homes → chatbot SN-SYNC: rejected — homes\.csv:1: the file is an HTML page, not CSV: it starts `<!DOCTYPE html>`/,
    );

    // a quote opened on line 6 (row 5) and closed by the one that opens row 8's quoted field (line 9)
    const lines = good.split('\n');
    lines[5] = lines[5]!.replace(',Austin,', ',"Austin,');
    lines[8] = lines[8]!.replace(',Austin,', ',"Round Rock, TX",');
    await writeFile(file('homes.csv'), lines.join('\n'));
    const quote = await run('homes');
    expect(quote.code).toBe(4);
    const first = reportLine(quote.stderr, 'homes')!;
    expect(first).toMatch(
      /^feed homes → chatbot SN-SYNC: partial — the feed was not read whole, so 4 delete\(s\) withheld: homes\.csv:6: /,
    );
    expect(first).toContain(
      'a quote opened on this line is not closed on it: the field runs on to line 9, where "R" follows a quote; lines 6–9 could not be read',
    );
    // nothing swallowed without a word: each line inside the quote is a record of its own
    const json = JSON.parse(
      (await feedsync(['sync', '--config', config, '--feed', 'homes', '--dry-run', '--json'])).stdout,
    ) as {
      reports: Array<{
        counts: { feedRecords: number };
        rejected: Array<{ position: { line: number }; reasons: string[] }>;
      }>;
    };
    expect(json.reports[0]!.counts.feedRecords).toBe(10);
    expect(json.reports[0]!.rejected.map((r) => r.position.line)).toEqual([6, 7, 8, 9]);
    expect(json.reports[0]!.rejected[1]!.reasons.join()).toContain('read inside the quote opened on line 6');

    expect(await sync.te().listings(SN)).toHaveLength(10);
    expect(await writeCounts(sync.te())).toEqual(before);

    await writeFile(file('homes.csv'), good);
    const restored = await run('homes');
    expect(restored.code).toBe(0);
    expect(await writeCounts(sync.te())).toEqual(before);
  }, 240_000);
});

describe('an XML feed broken at the source', () => {
  it('an XML error document in place of the feed ends rejected, naming its root; nothing deleted; restored, 0 writes', async () => {
    const good = xml(rows(5));
    await writeFile(file('homes.xml'), good);
    expect((await run('homes-xml')).code).toBe(0);
    expect(await sync.te().listings(SN_XML)).toHaveLength(5);
    const before = await writeCounts(sync.te());

    await writeFile(
      file('homes.xml'),
      '<?xml version="1.0" encoding="UTF-8"?>\n<Error><Code>AccessDenied</Code><Message>Access Denied</Message></Error>\n',
    );
    const denied = await run('homes-xml');
    expect(denied.code).toBe(6);
    expect(reportLine(denied.stderr, 'homes-xml')).toBe(
      "feed homes-xml → chatbot SN-XML: rejected — homes.xml: recordPath `Listings.Listing` matches no element: the document's root is `<Error>`, its text: AccessDenied Access Denied; 5 delete(s) withheld, and the last good sync stays as it was",
    );
    expect(await sync.te().listings(SN_XML)).toHaveLength(5);
    expect(await writeCounts(sync.te())).toEqual(before);

    // an empty feed is not an error document: the guard judges it (exit 3), nothing deleted
    await writeFile(file('homes.xml'), '<?xml version="1.0"?>\n<Listings>\n</Listings>\n');
    expect((await run('homes-xml')).code).toBe(3);

    await writeFile(file('homes.xml'), good);
    expect((await run('homes-xml')).code).toBe(0);
    expect(await writeCounts(sync.te())).toEqual(before);
    expect(await sync.te().listings(SN_XML)).toHaveLength(5);
  }, 120_000);
});
