// Child process of xml-hostile.test.ts: reads an XML feed whose records are separated by a 200 MB
// comment, 50 MB of blank text and a 20 MB processing instruction, streamed in 64 KB chunks, and
// prints the records read and the peak RSS. Run with a small heap: buffering any of these whole
// runs it out of memory.
import { readXml } from '../../src/feeds/xml/xml-reader.js';

const MB = 1024 * 1024;
const piece = (s: string) => s.repeat(Math.ceil(65536 / s.length)).slice(0, 65536);

async function* feed(): AsyncIterable<Buffer> {
  const listing = (id: string) => Buffer.from(`<Listing><MlsNumber>${id}</MlsNumber></Listing>\n`);
  yield Buffer.from('<?xml version="1.0"?>\n<Listings>\n');
  yield listing('A1');
  const filler = (open: string, body: string, close: string, bytes: number) =>
    function* () {
      yield Buffer.from(open);
      const chunk = Buffer.from(piece(body));
      for (let n = 0; n < bytes; n += chunk.length) yield chunk;
      yield Buffer.from(close);
    };
  yield* filler('<!--', '- <Listing> -', '-->', 200 * MB)();
  yield listing('A2');
  yield* filler('', ' \n', '', 50 * MB)();
  yield* filler('<?pi ', '? > <Listing>', '?>', 20 * MB)();
  yield listing('A3');
  yield Buffer.from('</Listings>\n');
}

let peak = 0;
const timer = setInterval(() => (peak = Math.max(peak, process.memoryUsage().rss)), 10);
const out: unknown[] = [];
for await (const item of readXml(feed(), { label: 'big.xml', recordPath: 'Listings.Listing' })) {
  out.push(item.kind === 'record' ? [item.position.line, item.data.MlsNumber] : item.kind);
}
clearInterval(timer);
peak = Math.max(peak, process.memoryUsage().rss);
process.stdout.write(JSON.stringify({ items: out, peakRssMb: Math.round(peak / MB) }) + '\n');
