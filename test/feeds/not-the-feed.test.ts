// A source that answered with something else than the feed is refused whole, naming what it is
// (FeedReadError.refused: the sync's run ends rejected, exit 6): a CSV file that is JSON or whose
// header lacks a column the mapping reads; an XML or MITS document the recordPath matches nothing in
// (its root named; an empty feed is not refused); a RESO 200 that is an HTML page or JSON without a
// `value` list, asked for again as any unreadable page is, then refused.
import { describe, expect, it } from 'vitest';
import { FeedReadError } from '../../src/errors.js';
import { readCsv } from '../../src/feeds/csv/csv-reader.js';
import { FeedSource, openFeed } from '../../src/feeds/index.js';
import { readMits } from '../../src/feeds/mits/mits-reader.js';
import { readXml } from '../../src/feeds/xml/xml-reader.js';
import { silentLogger } from '../../src/log.js';
import { columnsNeeded } from '../../src/mapping/columns-needed.js';
import { MappingConfig } from '../../src/mapping/config-schema.js';
import { useHostileServers } from '../helpers/hostile-server.js';
import { chunks, collectUntilError } from './helpers.js';

const csvOptions = { label: 'feed.csv', delimiter: ',', quote: '"', encoding: 'utf8' as const };

async function refusal(items: AsyncIterable<unknown>): Promise<FeedReadError> {
  const { error, items: read } = await collectUntilError(items as never);
  expect(read).toEqual([]);
  expect(error).toBeInstanceOf(FeedReadError);
  expect((error as FeedReadError).refused).toBe(true);
  return error as FeedReadError;
}

describe('a CSV file that is not the feed', () => {
  it('JSON saved as the CSV is named as JSON by its first line, whatever the chunks', async () => {
    for (const size of [1, 3, 1000]) {
      const err = await refusal(readCsv(chunks('{\n  "error": "quota exceeded"\n}\n', size), csvOptions));
      expect(err.message).toBe('feed.csv:1: the file is JSON, not CSV: it starts `{`; none of its rows was read');
    }
  });

  it('a header without any of the mapped columns names the file start; one without some names each and its nearest', async () => {
    const columns = columnsNeeded(
      MappingConfig.parse({ fields: { MLSNumber: 'MLS', Bedrooms: { from: ['Beds', 'BedsTotal'] }, City: 'City' } }),
    );
    const none = await refusal(readCsv(chunks('a;b;c\n1;2;3\n', 4), { ...csvOptions, columns }));
    expect(none.message).toBe(
      'feed.csv:1: none of the 3 columns the mapping reads is in the header (the file starts `a;b;c`); it has 1 column(s): `a;b;c`',
    );
    const some = await refusal(
      readCsv(chunks('MLS,City,BedroomsCount,Baths\nA1,Austin,3,2\n', 7), { ...csvOptions, columns }),
    );
    expect(some.message).toBe(
      'feed.csv:1: `Beds` or `BedsTotal` (read by Bedrooms) is not in the header; the nearest it has is `BedroomsCount`. It has 4 column(s): `MLS`, `City`, `BedroomsCount`, `Baths`. Map the new name (mapping.fields: from: [New, Old] reads either) or fix the export',
    );
    // a header with every column: read as before
    const { items, error } = await collectUntilError(
      readCsv(chunks('MLS,City,Beds\nA1,Austin,3\n', 5), { ...csvOptions, columns }),
    );
    expect(error).toBeUndefined();
    expect(items).toHaveLength(1);
  });
});

const ERROR_DOC =
  '<?xml version="1.0" encoding="UTF-8"?>\n<Error>\n  <Code>AccessDenied</Code>\n  <Message>Access Denied</Message>\n</Error>\n';

describe('a CSV file separated by another character than source.delimiter', () => {
  // (a European export: semicolons; before, the message listed one long column and left the reader to guess)
  it('its header read as one column that splits into mapped columns by another separator names that separator and the setting', async () => {
    const columns = columnsNeeded(
      MappingConfig.parse({ fields: { MLSNumber: 'MLS', Bedrooms: 'Beds', City: 'City' } }),
    );
    const semi = await refusal(
      readCsv(chunks('MLS;Beds;City;Zip\nA1;3;Austin;78704\n', 6), { ...csvOptions, columns }),
    );
    expect(semi.message).toBe(
      'feed.csv:1: none of the 3 columns the mapping reads is in the header (the file starts `MLS;Beds;City;Zip`); it has 1 column(s): `MLS;Beds;City;Zip`. Its columns look separated by `;`, not `,`: set feeds[].source.delimiter: ";"',
    );
    const tab = await refusal(readCsv(chunks('MLS\tBeds\tCity\nA1\t3\tAustin\n', 6), { ...csvOptions, columns }));
    expect(tab.message).toContain('Its columns look separated by a tab, not `,`: set feeds[].source.delimiter: "\\t"');
    // a comma file read with delimiter ";"
    const comma = await refusal(
      readCsv(chunks('MLS,Beds,City\nA1,3,Austin\n', 6), { ...csvOptions, delimiter: ';', columns }),
    );
    expect(comma.message).toContain('Its columns look separated by `,`, not `;`: set feeds[].source.delimiter: ","');
    // one column missing out of several: the separator is right, no hint
    const one = await refusal(readCsv(chunks('MLS,City\nA1,Austin\n', 6), { ...csvOptions, columns }));
    expect(one.message).not.toContain('separated by');
  });
});

describe('an XML or MITS document the recordPath matches nothing in', () => {
  it('names the root element and its text, for XML and MITS alike', async () => {
    const xml = await refusal(readXml(chunks(ERROR_DOC, 16), { label: 'feed.xml', recordPath: 'Listings.Listing' }));
    expect(xml.message).toBe(
      "feed.xml: recordPath `Listings.Listing` matches no element: the document's root is `<Error>`, its text: AccessDenied Access Denied",
    );
    const mits = await refusal(readMits(chunks(ERROR_DOC, 16), { label: 'feed.xml', recordPer: 'unit' }));
    expect(mits.message).toMatch(
      /^feed\.xml: recordPath `PhysicalProperty\.Property` matches no element: the document's root is `<Error>`/,
    );
    const html = await refusal(
      readXml(chunks('<!DOCTYPE html>\n<html><body><p>Maintenance</p></body></html>', 7), {
        label: 'feed.xml',
        recordPath: 'Listings.Listing',
      }),
    );
    expect(html.message).toMatch(
      /the document's root is `<html>` \(an HTML page: the feed host's error or login page\?\), its text: Maintenance$/,
    );
  });

  // (a recordPath naming the records wrongly read the feed as empty: outcome ok, 0 records, exit 0)
  it('a root that holds its records under another name: refused, naming that element, how many, and the recordPath to set', async () => {
    const doc = `<?xml version="1.0"?>\n<Listings>\n${Array.from({ length: 30 }, (_, i) => `  <Listing><Url>https://x.test/${i}</Url></Listing>\n`).join('')}</Listings>\n`;
    for (const size of [3, 64, 100_000]) {
      const err = await refusal(readXml(chunks(doc, size), { label: 'feed.xml', recordPath: 'Listings.Property' }));
      expect(err.message).toBe(
        'feed.xml: recordPath `Listings.Property` matches no element: `<Listings>` holds 30 `<Listing>` elements, no `<Property>`: set feeds[].source.recordPath: Listings.Listing',
      );
    }
  });

  // (a vendor that renamed the root: the message listed the records' text and left the setting to guess)
  it('a root of another name that holds the records: refused, naming the recordPath to set', async () => {
    const doc = `<?xml version="1.0"?>\n<!-- export -->\n<Properties generated="2026-12-01">\n${Array.from({ length: 30 }, (_, i) => `  <Listing><Url>https://x.test/${i}</Url></Listing>\n`).join('')}</Properties>\n`;
    for (const size of [3, 64, 100_000]) {
      const err = await refusal(readXml(chunks(doc, size), { label: 'feed.xml', recordPath: 'Listings.Listing' }));
      expect(err.message).toBe(
        "feed.xml: recordPath `Listings.Listing` matches no element: the document's root is `<Properties>`, which holds `<Listing>` elements: set feeds[].source.recordPath: Properties.Listing",
      );
    }
  });

  it("an empty feed (the path's first element opened, no record) is read as empty, not refused", async () => {
    // the second: an element the root holds once (an empty feed's header) is not taken for the records
    for (const doc of [
      '<?xml version="1.0"?>\n<Listings>\n</Listings>\n',
      '<Listings>\n  <Generated>2026-12-01</Generated>\n</Listings>\n',
    ]) {
      const { items, error } = await collectUntilError(
        readXml(chunks(doc, 5), { label: 'feed.xml', recordPath: 'Listings.Listing' }),
      );
      expect(error).toBeUndefined();
      expect(items).toEqual([]);
    }
  });
});

describe('a RESO server that answers 200 with something else than an OData page', () => {
  const hostile = useHostileServers();
  const open = (url: string) =>
    openFeed('f', FeedSource.parse({ kind: 'reso', url, paging: 'nextLink', retries: 1, timeoutMs: 2000 }), {
      baseDir: '/',
      logger: silentLogger,
    });

  it('an HTML page is asked for again, then refused, naming it and its first line', async () => {
    const server = await hostile((_req, res) => {
      res.writeHead(200, { 'content-type': 'text/html' }).end('<!DOCTYPE html>\n<html><title>Sign in</title></html>');
    });
    const err = await refusal(open(`${server.origin}/odata`).items);
    expect(server.received).toHaveLength(2);
    expect(err.message).toMatch(
      /: HTTP 200 with an HTML page, not an OData page \(.*\): it starts `<!DOCTYPE html>` \(asked 2 times\)$/,
    );
  });

  it('JSON without a value list says what it holds: an OData error, or its keys', async () => {
    const server = await hostile((_req, res) => {
      res
        .writeHead(200, { 'content-type': 'application/json' })
        .end(JSON.stringify({ error: { code: 'Quota', message: 'daily limit reached' } }));
    });
    const err = await refusal(open(`${server.origin}/odata`).items);
    expect(err.message).toMatch(
      /JSON that is not an OData page: expected \{ "value": \[\.\.\.\] \}, got an OData error: Quota: daily limit reached$/,
    );
  });
});
