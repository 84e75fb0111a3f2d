// Child process of xml-hostile.test.ts: reads a 120 MB XML feed (100k records with a 1 KB
// description each) and keeps every record's key, as the sync does, then prints the heap in use.
// A key that were a view of the text it was read from would keep all 120 MB alive.
import { readXml } from '../../src/feeds/xml/xml-reader.js';

const description = 'A long description of a house with a garden. '.repeat(25);
async function* feed(): AsyncIterable<Buffer> {
  yield Buffer.from('<Listings>\n');
  let chunk = '';
  for (let i = 0; i < 100_000; i++) {
    chunk += `<Listing><Url>https://broker.example/listings/${String(i).padStart(8, '0')}</Url><Description>${description}</Description></Listing>\n`;
    if (chunk.length > 60_000) {
      yield Buffer.from(chunk);
      chunk = '';
    }
  }
  yield Buffer.from(`${chunk}</Listings>\n`);
}

const keys = new Set<unknown>();
for await (const item of readXml(feed(), { label: 'keys.xml', recordPath: 'Listings.Listing' }))
  if (item.kind === 'record') keys.add(item.data.Url);
globalThis.gc?.();
process.stdout.write(
  JSON.stringify({ keys: keys.size, heapUsedMb: Math.round(process.memoryUsage().heapUsed / 1024 / 1024) }) + '\n',
);
