import iconv from 'iconv-lite';
import { describe, expect, it } from 'vitest';
import { FeedReadError } from '../../src/errors.js';
import { readXml } from '../../src/feeds/xml/xml-reader.js';
import { createXmlScanner } from '../../src/feeds/xml/xml-scanner.js';
import { chunks, collectUntilError } from './helpers.js';

const opts = { label: 'feed.xml', recordPath: 'Listings.Listing' };
const read = (input: string | Buffer, size = 13, o: Partial<typeof opts> = {}) =>
  collectUntilError(readXml(chunks(input, size), { ...opts, ...o }));

const DOC = `<?xml version="1.0" encoding="UTF-8"?>
<!DOCTYPE Listings [ <!ENTITY xxe "EXPANDED"> ]>
<Listings>
  <!-- a comment with <Listing> in it -->
  <Listing id="1">
    <Location><StreetAddress>1 Oak St</StreetAddress><Zip>01234</Zip></Location>
    <ListingDetails><MlsId>007</MlsId><Price currency="USD">450000</Price></ListingDetails>
    <Pictures><Picture><PictureUrl>https://p/1.jpg</PictureUrl></Picture><Picture><PictureUrl>https://p/2.jpg</PictureUrl></Picture></Pictures>
    <Description><![CDATA[Big <b>yard</b> & "pool"]]></Description>
    <Note>Smith &amp; Sons &#8364;5 &xxe; &nbsp;</Note>
  </Listing>
  <Listing id="2"><ListingDetails><MlsId>008</MlsId></ListingDetails><Empty/></Listing>
  <Listing id="3"/>
</Listings>
`;

describe('readXml', () => {
  it('yields one record per element with nested elements, attributes, arrays, CDATA and leading zeros kept', async () => {
    const { items, error } = await read(DOC);
    expect(error).toBeUndefined();
    expect(items.map((i) => [i.kind, i.position.index])).toEqual([
      ['record', 0],
      ['record', 1],
      ['record', 2],
    ]);
    const first = items[0]!.kind === 'record' ? items[0]!.data : {};
    expect(first).toMatchObject({
      '@_id': '1',
      Location: { StreetAddress: '1 Oak St', Zip: '01234' },
      ListingDetails: { MlsId: '007', Price: { '#text': '450000', '@_currency': 'USD' } },
      Pictures: { Picture: [{ PictureUrl: 'https://p/1.jpg' }, { PictureUrl: 'https://p/2.jpg' }] },
      Description: 'Big <b>yard</b> & "pool"',
    });
  });

  it('decodes the predefined entities and character references but expands no DOCTYPE entity', async () => {
    const { items } = await read(DOC);
    const note = items[0]!.kind === 'record' ? items[0]!.data.Note : undefined;
    expect(note).toBe('Smith & Sons €5 &xxe; &nbsp;');
  });

  it('finds the same records whatever the chunk boundaries', async () => {
    const whole = await read(DOC, DOC.length);
    for (const size of [1, 2, 3, 5, 8, 17, 64]) {
      const { items, error } = await read(DOC, size);
      expect(error).toBeUndefined();
      expect(items).toEqual(whole.items);
    }
  });

  it('splits records at every chunk boundary in the scanner too (multi-byte text intact)', () => {
    const doc =
      '<Listings><Listing a=">x"><T>é€</T></Listing>\n<Listing><T>b</T><!-- c --><![CDATA[d]]></Listing></Listings>';
    for (let cut = 1; cut < doc.length; cut++) {
      const s = createXmlScanner({ recordPath: 'Listings.Listing', label: 'x' });
      const records = [...s.push(doc.slice(0, cut)), ...s.push(doc.slice(cut)), ...s.end()];
      expect(records).toEqual([
        { line: 1, data: { '@_a': '>x', T: 'é€' } },
        { line: 2, data: { T: 'b', '#text': 'd' } },
      ]);
    }
  });

  it('matches the record path: elements of the same name elsewhere are not records', async () => {
    const doc =
      '<Root><Archive><Listing><A>old</A></Listing></Archive><Listings><Listing><A>new</A></Listing></Listings></Root>';
    const { items } = await read(doc, 5);
    expect(items.map((i) => i.kind === 'record' && i.data.A)).toEqual(['new']);
  });

  it('reports a malformed record as a per-record error and reads on', async () => {
    const doc =
      '<Listings><Listing><A>1</A></Listing><Listing><A>2</B></Listing><Listing><A>3 < 4</A></Listing><Listing><A>5</A></Listing></Listings>';
    const { items, error } = await read(doc, 9);
    expect(error).toBeUndefined();
    expect(items.map((i) => i.kind)).toEqual(['record', 'error', 'error', 'record']);
    const bad = items[1]!;
    // the place now gives the line as well as the record number (the message used to give the line within the record)
    expect(bad.kind === 'error' && bad.error.message).toBe(
      'feed.xml:1, record 1: malformed <Listing> record: </B> where </A> was expected (line 1)',
    );
    expect(items[3]!.kind === 'record' && items[3]!.data.A).toBe('5');
  });

  it('keeps one unclosed record from swallowing the next ones', async () => {
    const doc = '<Listings><Listing><A>1</A><Listing><A>2</A></Listing><Listing><A>3</A></Listing></Listings>';
    const { items } = await read(doc);
    expect(items.map((i) => i.kind)).toEqual(['error', 'record', 'record']);
  });

  it('throws FeedReadError when the document ends before the root closes (truncated), after the records it read', async () => {
    const cut = DOC.slice(0, DOC.indexOf('<Listing id="2">') + 30);
    const { items, error } = await read(cut);
    expect(items.map((i) => i.kind)).toEqual(['record']);
    expect(error).toBeInstanceOf(FeedReadError);
    expect(error!.message).toMatch(/truncated/);
    expect((error as FeedReadError).retryable).toBe(false);
  });

  it('throws FeedReadError for a document with no elements', async () => {
    const { error } = await read('not xml at all');
    expect(error).toBeInstanceOf(FeedReadError);
  });

  it('honours a declared ISO-8859-1 and windows-1252 encoding', async () => {
    const text = (enc: string) =>
      `<?xml version="1.0" encoding="${enc}"?><Listings><Listing><D>Café “€”</D></Listing></Listings>`;
    const latin = await read(iconv.encode(text('ISO-8859-1').replace('“€”', ''), 'latin1'), 4);
    expect(latin.items[0]!.kind === 'record' && latin.items[0]!.data.D).toBe('Café');
    const cp = await read(iconv.encode(text('windows-1252'), 'windows-1252'), 3);
    expect(cp.items[0]!.kind === 'record' && cp.items[0]!.data.D).toBe('Café “€”');
    // the same bytes read as UTF-8 would not give é
    const wrong = await read(iconv.encode(text('UTF-8').replace('“€”', ''), 'latin1'));
    expect(wrong.items[0]!.kind === 'record' && wrong.items[0]!.data.D).not.toBe('Café');
  });

  it('reads UTF-8 with a BOM', async () => {
    const { items } = await read(
      Buffer.concat([Buffer.from([0xef, 0xbb, 0xbf]), Buffer.from('<Listings><Listing><D>é</D></Listing></Listings>')]),
      2,
    );
    expect(items[0]!.kind === 'record' && items[0]!.data.D).toBe('é');
  });
});
