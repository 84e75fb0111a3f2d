// Run in a child process (`node --import tsx test/helpers/rss-probe.ts '<json>'`): does one bounded
// read against a hostile server and prints { error, peakRssMb } as one JSON line, so a test can
// assert on peak memory without the test runner's own heap in the figure.
import { createApiClient } from '../../src/api/client.js';
import { openSource } from '../../src/feeds/source/source.js';
import { FeedSource } from '../../src/feeds/config-schema.js';
import { silentLogger } from '../../src/log.js';
import { readCsv } from '../../src/feeds/csv/csv-reader.js';

type Probe =
  | { kind: 'api'; url: string; timeoutMs: number; maxResponseBytes?: number }
  | { kind: 'feed'; source: unknown }
  /** a generated CSV of `megabytes`, read by the CSV reader: returns the bytes it took in before it stopped */
  | { kind: 'csv'; shape: 'unclosed-quote' | 'wide-header'; megabytes: number; fastPath: boolean };

/** MB of CSV made on the fly (nothing on disk): a quote opened on line 3 and never closed, or a header of 1M+ columns */
async function* hostileCsv(
  shape: 'unclosed-quote' | 'wide-header',
  megabytes: number,
  taken: { bytes: number },
): AsyncIterable<Buffer> {
  const chunk = Buffer.alloc(64 * 1024, shape === 'unclosed-quote' ? 'x' : ',c');
  const head = shape === 'unclosed-quote' ? 'MLS,Remarks\nA1,fine\nA2,"never closed ' : 'MLS,c';
  taken.bytes += head.length;
  yield Buffer.from(head);
  for (let sent = 0; sent < megabytes * 1024 * 1024; sent += chunk.length) {
    taken.bytes += chunk.length;
    yield chunk;
  }
  yield Buffer.from('\nA3,end\n');
}

let peak = process.memoryUsage().rss;
const sampler = setInterval(() => (peak = Math.max(peak, process.memoryUsage().rss)), 20);

async function main(probe: Probe): Promise<unknown> {
  if (probe.kind === 'api') {
    const api = createApiClient({
      baseUrl: probe.url,
      secretKey: 'k',
      sessionKey: 's',
      timeoutMs: probe.timeoutMs,
      maxResponseBytes: probe.maxResponseBytes,
      retry: { retries: 0 },
    });
    return api.listListings({ SerialNumber: 'SN-1' });
  }
  if (probe.kind === 'csv') {
    const taken = { bytes: 0 };
    const items = readCsv(
      hostileCsv(probe.shape, probe.megabytes, taken),
      { label: 'hostile.csv', delimiter: ',', quote: '"', encoding: 'utf8' },
      { fastPath: probe.fastPath },
    );
    let records = 0;
    try {
      for await (const item of items) if (item.kind === 'record') records++;
    } catch (err) {
      throw Object.assign(err as Error, {
        message: `${(err as Error).message} [records ${records}, bytes taken ${taken.bytes}]`,
      });
    }
    return `no error: records ${records}, bytes taken ${taken.bytes}`;
  }
  const source = FeedSource.parse(probe.source);
  const { bytes } = openSource(source, { baseDir: process.cwd(), logger: silentLogger });
  let n = 0;
  for await (const chunk of bytes) n += chunk.length;
  return n;
}

const probe = JSON.parse(process.argv[2] ?? '{}') as Probe;
let outcome: { value?: unknown; error?: { name: string; message: string } };
try {
  const value = await main(probe);
  outcome = { value: typeof value === 'number' || typeof value === 'string' ? value : 'ok' };
} catch (err) {
  outcome = { error: { name: (err as Error).name, message: (err as Error).message } };
}
clearInterval(sampler);
peak = Math.max(peak, process.memoryUsage().rss);
process.stdout.write(JSON.stringify({ ...outcome, peakRssMb: Math.round(peak / 1e6) }) + '\n');
process.exit(0);
