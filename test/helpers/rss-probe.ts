// Run in a child process (`node --import tsx test/helpers/rss-probe.ts '<json>'`): does one bounded
// read against a hostile server and prints { error, peakRssMb } as one JSON line, so a test can
// assert on peak memory without the test runner's own heap in the figure.
import { createApiClient } from '../../src/api/client.js';
import { openSource } from '../../src/feeds/source.js';
import { FeedSource } from '../../src/feeds/config-schema.js';
import { silentLogger } from '../../src/log.js';

type Probe =
  | { kind: 'api'; url: string; timeoutMs: number; maxResponseBytes?: number }
  | { kind: 'feed'; source: unknown };

let peak = process.memoryUsage().rss;
const sampler = setInterval(() => (peak = Math.max(peak, process.memoryUsage().rss)), 20);

async function main(probe: Probe): Promise<unknown> {
  if (probe.kind === 'api') {
    const api = createApiClient({ baseUrl: probe.url, secretKey: 'k', sessionKey: 's', timeoutMs: probe.timeoutMs, maxResponseBytes: probe.maxResponseBytes, retry: { retries: 0 } });
    return api.listListings({ SerialNumber: 'SN-1' });
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
  outcome = { value: typeof value === 'number' ? value : 'ok' };
} catch (err) {
  outcome = { error: { name: (err as Error).name, message: (err as Error).message } };
}
clearInterval(sampler);
peak = Math.max(peak, process.memoryUsage().rss);
process.stdout.write(JSON.stringify({ ...outcome, peakRssMb: Math.round(peak / 1e6) }) + '\n');
process.exit(0);
