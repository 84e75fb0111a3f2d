// Listing sync benchmark: 20k and 100k listings against the emulator (20 ms latency a request, in a
// child process), for a first sync, a rerun with 1% changed (and 0.2% removed), and a rerun with no
// change. For each: API calls made against the minimum (list pages + changed writes + delete
// batches), wall time against the latency bound (calls × latency / concurrency), and peak RSS.
// Targets: calls = minimum; wall ≤ 1.25 × bound; RSS < 400 MB at 100k.
//
//   npm run bench -- sync          (both sizes; each in a child process of its own, for a clean RSS)
//   node --import tsx test/bench/sync.bench.ts run 20000   (one size, prints JSON)
import { fork, spawnSync } from 'node:child_process';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { generateCsv, generateListings, writeFeed } from '../../fixtures/generate.js';
import { createApiClient } from '../../src/api/client.js';
import { createCallCounter } from '../../src/api/call-counter.js';
import { loadConfig } from '../../src/config/load.js';
import { ApiConfig, FeedConfig } from '../../src/config/schema.js';
import { silentLogger } from '../../src/log.js';
import { createFileStore } from '../../src/state/file-store.js';
import { syncFeed } from '../../src/sync/index.js';

const LATENCY_MS = 20;
const CONCURRENCY = 16;
const PAGE_SIZE = 100;
const BATCH_SIZE = 100;
const CHANGED = 0.01;
const REMOVED = 0.002;
const SIZES = [20_000, 100_000];
const here = fileURLToPath(import.meta.url);

interface Row {
  n: number;
  scenario: string;
  calls: number;
  minimum: number;
  retries: number;
  wallMs: number;
  boundMs: number;
  /** paging the remote side */
  pagingMs: number;
  /** reading the feed, with its creates and updates sent as it is read */
  streamMs: number;
  rssMb: number;
  counts: string;
}

if (process.argv[2] === 'run') {
  const rows = await runSize(Number(process.argv[3]));
  process.stdout.write(JSON.stringify(rows) + '\n');
} else {
  const rows: Row[] = [];
  for (const n of SIZES) {
    const r = spawnSync(process.execPath, ['--expose-gc', '--import', 'tsx', here, 'run', String(n)], { encoding: 'utf8', stdio: ['ignore', 'pipe', 'inherit'], maxBuffer: 1 << 24 });
    if (r.status !== 0) {
      process.stderr.write(`sync bench for ${n} listings failed (exit ${r.status})\n`);
      process.exit(1);
    }
    rows.push(...(JSON.parse(r.stdout.trim().split('\n').pop()!) as Row[]));
  }
  print(rows);
}

async function runSize(n: number): Promise<Row[]> {
  const emulator = fork(join(here, '../sync-emulator.ts'), [String(LATENCY_MS)], { execArgv: ['--import', 'tsx'], stdio: ['ignore', 'ignore', 'inherit', 'ipc'] });
  const url = await new Promise<string>((resolve, reject) => {
    emulator.once('message', (m) => resolve((m as { url: string }).url));
    emulator.once('exit', (code) => reject(new Error(`emulator exited ${code}`)));
  });
  const dir = await mkdtemp(join(tmpdir(), 'feedsync-bench-'));
  try {
    const demo = await loadConfig(join(here, '../../../fixtures/demo.yaml'));
    const austin = demo.config.feeds.find((f) => f.name === 'austin-csv')!;
    const feed = FeedConfig.parse({
      ...austin,
      name: 'bench',
      chatbot: 'SN-BENCH',
      source: { kind: 'csv', path: 'feed.csv' },
      deletes: { mode: 'mirror', maxFraction: 0.05, maxCount: 10_000, batchSize: BATCH_SIZE },
      schedule: undefined,
    });
    const apiConfig = ApiConfig.parse({ baseUrl: url, secretKey: 'bench-secret', sessionKey: 'bench-session', concurrency: CONCURRENCY, ratePerSecond: 1_000_000, pageSize: PAGE_SIZE, retries: 2 });
    const store = await createFileStore(join(dir, 'state.json'));
    const kept = n - Math.round(n * REMOVED);
    const changed = countChanged(kept);
    const pages = (remote: number) => Math.max(1, Math.ceil(remote / PAGE_SIZE));
    const scenarios = [
      { scenario: 'first sync', rows: n, changeRate: 0, minimum: pages(0) + n },
      { scenario: `rerun, ${CHANGED * 100}% changed, ${REMOVED * 100}% removed`, rows: kept, changeRate: CHANGED, minimum: pages(n) + changed + Math.ceil((n - kept) / BATCH_SIZE) },
      { scenario: 'rerun, no change', rows: kept, changeRate: CHANGED, minimum: pages(kept) },
    ];
    const out: Row[] = [];
    for (const s of scenarios) {
      await writeFeed(join(dir, 'feed.csv'), generateCsv(s.rows, { changeRate: s.changeRate, changeSeed: 2 }));
      globalThis.gc?.();
      const calls = createCallCounter();
      const api = createApiClient({ baseUrl: url, secretKey: apiConfig.secretKey, sessionKey: apiConfig.sessionKey, timeoutMs: 30_000, retry: { retries: 2 }, ratePerSecond: apiConfig.ratePerSecond, onCall: calls.onCall });
      const t0 = performance.now();
      const report = await syncFeed(feed, { api, store, chatbotFeeds: [feed], logger: silentLogger, baseDir: dir, apiConfig, calls });
      const wallMs = Math.round(performance.now() - t0);
      if (process.env.BENCH_DEBUG) { const m = process.memoryUsage(); globalThis.gc?.(); const g = process.memoryUsage(); process.stderr.write(`${s.scenario}: rss ${m.rss >> 20} heap ${m.heapUsed >> 20}/${m.heapTotal >> 20} ext ${m.external >> 20} ab ${m.arrayBuffers >> 20}; after gc heap ${g.heapUsed >> 20} rss ${g.rss >> 20} cpu ${JSON.stringify(process.cpuUsage())}\n`); }
      if (report.outcome !== 'ok') throw new Error(`${s.scenario}: ${report.summary} ${report.message ?? ''}`);
      const total = report.calls.total;
      out.push({
        n,
        scenario: s.scenario,
        calls: total,
        minimum: s.minimum,
        retries: report.retries,
        wallMs,
        boundMs: Math.round((total * LATENCY_MS) / CONCURRENCY),
        pagingMs: report.timings.remoteMs,
        streamMs: report.timings.feedMs - report.timings.remoteMs,
        rssMb: Math.round(process.resourceUsage().maxRSS / 1024),
        counts: `${report.counts.created} created, ${report.counts.updated} updated, ${report.counts.deleted} deleted, ${report.counts.unchanged} unchanged`,
      });
    }
    await store.close();
    return out;
  } finally {
    emulator.disconnect();
    await rm(dir, { recursive: true, force: true });
  }
}

/** Listings of the generator whose price the 1% change set moves (the writes a rerun must make). */
function countChanged(n: number): number {
  const base = generateListings(n);
  let count = 0;
  for (const changed of generateListings(n, { changeRate: CHANGED, changeSeed: 2 })) {
    if (changed.price !== base.next().value!.price) count++;
  }
  return count;
}

function print(rows: Row[]): void {
  const head = ['listings', 'scenario', 'API calls', 'minimum', 'retries', 'wall ms', 'bound ms', 'wall/bound', 'paging ms', 'feed + writes ms', 'peak RSS MB', 'result'];
  const body = rows.map((r) => [
    String(r.n),
    r.scenario,
    String(r.calls),
    `${r.minimum}${r.calls === r.minimum ? ' ✓' : ' ✗'}`,
    String(r.retries),
    String(r.wallMs),
    String(r.boundMs),
    `${(r.wallMs / r.boundMs).toFixed(2)}${r.wallMs <= 1.25 * r.boundMs ? ' ✓' : ' ✗'}`,
    String(r.pagingMs),
    String(r.streamMs),
    `${r.rssMb}${r.n < 100_000 || r.rssMb < 400 ? ' ✓' : ' ✗'}`,
    r.counts,
  ]);
  const widths = head.map((h, i) => Math.max(h.length, ...body.map((b) => b[i]!.length)));
  const line = (cells: string[]) => cells.map((c, i) => c.padEnd(widths[i]!)).join('  ');
  process.stdout.write(
    [
      `sync: emulator in a child process with ${LATENCY_MS} ms latency a request; concurrency ${CONCURRENCY}, PageSize ${PAGE_SIZE}, delete batches of ${BATCH_SIZE}`,
      'ratePerSecond 1,000,000 so the token bucket does not dominate; bound = calls × latency / concurrency',
      'targets: calls = minimum (list pages + changed writes + delete batches); wall ≤ 1.25 × bound; peak RSS < 400 MB at 100k',
      '',
      line(head),
      ...body.map(line),
      '',
    ].join('\n'),
  );
}
