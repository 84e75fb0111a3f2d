// Listing sync benchmark against the emulator (20 ms latency a request, in a child process): a
// first sync, a rerun with 1% changed (and 0.2% removed), and a rerun with no change, for feedsync
// and, on the same emulator and the same feed, the scripts a user would otherwise write
// (test/bench/naive-peers.ts): per record "list by MLSNumber, then update or create", and "delete
// all, recreate". For each: API calls (feedsync: against the minimum of list pages + changed writes
// + delete batches), wall time against the latency bound (calls × latency / concurrency), CPU time,
// and feedsync's per-phase times and peak RSS.
// Targets: calls = minimum; wall ≤ 1.25 × bound (a no-change rerun: ≤ 2 × bound); RSS < 400 MB at
// 100k, < 2 GB at 1M.
// feedsync runs as the CLI and the worker run it (runFeed, with the change log in a file), so the
// memory the change log's old → new costs is in the figures. Its runs keep the page echo in files
// as the CLI does; the last scenario forgets what the process remembers first, as a new process
// (a cron `feedsync sync`) starts: it reads the echo file the run before it left.
// At 1M listings the first sync only seeds the chatbot: it runs with the emulator at
// BENCH_SEED_LATENCY_MS (default 0) and its wall/bound is not judged; the reruns run at 20 ms.
// The child's heap: BENCH_HEAP_MB sets --max-old-space-size (default: 1000 from 1M listings, else node's own).
//
//   npm run bench -- sync                  sizes 10k (with the naive peers) and 100k, each in a child process
//   BENCH_SYNC_SIZES=20000,100000          other sizes; the peers run at the smallest
//   BENCH_PEERS=0                          feedsync only
//   BENCH_SYNC_1M=1                        also 1,000,000 listings in one chatbot (seeded at 0 ms latency, then reruns at 20 ms)
//   BENCH_SEED_AT=200000                   sizes from which the first sync seeds at BENCH_SEED_LATENCY_MS (default 1,000,000)
//   BENCH_PROF=dir                         a CPU profile of each feedsync run, dir/sync-<listings>-<scenario>.cpuprofile (slower)
//   node --import tsx test/bench/sync.bench.ts run 20000 [peers]   (one size, prints JSON)
import { fork, spawnSync, type ChildProcess } from 'node:child_process';
import { Session } from 'node:inspector/promises';
import { mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { availableParallelism, tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { generateCsv, generateListings, writeFeed } from '../../fixtures/generate.js';
import { createApiClient } from '../../src/api/client.js';
import { createCallCounter } from '../../src/api/call-counter.js';
import type { ChatbotApi } from '../../src/api/index.js';
import { loadConfig } from '../../src/config/load.js';
import { ApiConfig, FeedConfig } from '../../src/config/schema.js';
import { silentLogger } from '../../src/log.js';
import { createFileStore } from '../../src/state/file-store.js';
import { createFileChangeLog } from '../../src/history/file-change-log.js';
import { runLanes } from '../../src/runs/run-lanes.js';
import { lanesOf } from '../../src/sync/index.js';
import { createEchoFiles } from '../../src/state/echo-files.js';
import { ECHO_ROWS, forgetEchoes } from '../../src/sync/page-echo.js';
import { recreatePeer, upsertPeer, type PeerCounts } from './naive-peers.js';

const LATENCY_MS = 20;
const CONCURRENCY = 16;
const PAGE_SIZE = 100;
const BATCH_SIZE = 100;
const CHANGED = 0.01;
const REMOVED = 0.002;
const SIZES = [...(process.env.BENCH_SYNC_SIZES ?? '10000,100000').split(',').map(Number), ...(process.env.BENCH_SYNC_1M === '1' ? [1_000_000] : [])];
const PEERS = process.env.BENCH_PEERS !== '0';
const SEED_AT = Number(process.env.BENCH_SEED_AT ?? 1_000_000);
const SEED_LATENCY_MS = Number(process.env.BENCH_SEED_LATENCY_MS ?? 0);
/**
 * The child's old-space cap, sized for the work: under node's own default the heap fills with
 * garbage far past the live data (200k listings: peak RSS 655 MB; capped at 240 or 320 MB: 405
 * and 412 MB, the same work). From 1M listings: 1000 MB, three times the live heap after a
 * collection there (328 MB); RSS ≈ cap + the change log's kept values (about 420 MB at 1M) + the
 * feed and decoding threads (about 100 MB each). 1200 MB, the cap before the feed thread, peaked
 * at 2,064 MB with it. Below 1M, node's default unless BENCH_HEAP_MB says otherwise.
 */
const heapMb = (n: number): string | undefined => process.env.BENCH_HEAP_MB ?? (n >= 1_000_000 ? '1000' : undefined);
const here = fileURLToPath(import.meta.url);

const FEEDSYNC = 'feedsync';
const NO_CHANGE = 'rerun, no change';
const NEW_PROCESS = 'rerun, no change, new process';
const UPSERT = 'per record: list, update or create';
const RECREATE = 'delete all, recreate';

interface Row {
  n: number;
  tool: string;
  scenario: string;
  calls: number;
  /** feedsync only: the fewest calls that can do it */
  minimum?: number;
  retries: number;
  wallMs: number;
  cpuMs: number;
  boundMs: number;
  /** the emulator's latency in this scenario */
  latencyMs: number;
  /** the emulator's CPU in the run (its process shares the cores) */
  emulatorCpuMs?: number;
  /** feedsync: paging the remote side */
  pagingMs?: number;
  /** feedsync: reading the feed, with its creates and updates sent as it is read */
  streamMs?: number;
  rssMb?: number;
  counts: string;
}

if (process.argv[2] === 'run') {
  const rows = await runSize(Number(process.argv[3]), process.argv[4] === 'peers');
  process.stdout.write(JSON.stringify(rows) + '\n');
} else {
  const rows: Row[] = [];
  const smallest = Math.min(...SIZES);
  for (const n of SIZES) {
    const heap = heapMb(n);
    const args = ['--expose-gc', ...(heap ? [`--max-old-space-size=${heap}`] : []), '--import', 'tsx', here, 'run', String(n), ...(PEERS && n === smallest ? ['peers'] : [])];
    if (heap) process.stderr.write(`sync bench for ${n} listings: --max-old-space-size=${heap}\n`);
    const r = spawnSync(process.execPath, args, { encoding: 'utf8', stdio: ['ignore', 'pipe', 'inherit'], maxBuffer: 1 << 24 });
    if (r.status !== 0) {
      // the other sizes' figures are still printed; the bench fails at the end
      process.stderr.write(`sync bench for ${n} listings failed (exit ${r.status})\n`);
      process.exitCode = 1;
      continue;
    }
    rows.push(...(JSON.parse(r.stdout.trim().split('\n').pop()!) as Row[]));
  }
  print(rows);
}

async function runSize(n: number, peers: boolean): Promise<Row[]> {
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
    const apiConfig = ApiConfig.parse({
      baseUrl: url,
      secretKey: 'bench-secret',
      sessionKey: 'bench-session',
      concurrency: CONCURRENCY,
      ratePerSecond: 10_000,
      pageSize: PAGE_SIZE,
      retries: 2,
    });
    const store = await createFileStore(join(dir, 'state.json'));
    const changeLog = await createFileChangeLog(join(dir, 'changes.jsonl'));
    const kept = n - Math.round(n * REMOVED);
    const changed = countChanged(kept);
    // paging reads until a short page (VirtualCount is only a hint), so a list that fills its last
    // page whole takes one more, empty, page to end
    const pages = (remote: number) => Math.floor(remote / PAGE_SIZE) + 1;
    const seeding = n >= SEED_AT;
    const scenarios = [
      {
        scenario: seeding ? `first sync (seeding at ${SEED_LATENCY_MS} ms)` : 'first sync',
        rows: n,
        changeRate: 0,
        minimum: pages(0) + n,
        latencyMs: seeding ? SEED_LATENCY_MS : LATENCY_MS,
      },
      {
        scenario: `rerun, ${CHANGED * 100}% changed, ${REMOVED * 100}% removed`,
        rows: kept,
        changeRate: CHANGED,
        minimum: pages(n) + changed + Math.ceil((n - kept) / BATCH_SIZE),
        latencyMs: LATENCY_MS,
      },
      { scenario: NO_CHANGE, rows: kept, changeRate: CHANGED, minimum: pages(kept), latencyMs: LATENCY_MS },
      // (past ECHO_ROWS nothing is remembered, in memory or in files: the rerun above is the figure)
      ...(n <= ECHO_ROWS ? [{ scenario: NEW_PROCESS, rows: kept, changeRate: CHANGED, minimum: pages(kept), latencyMs: LATENCY_MS, newProcess: true }] : []),
    ];
    const echoFiles = createEchoFiles(join(dir, 'page-echo'), silentLogger);
    const out: Row[] = [];
    const client = (onCall: ReturnType<typeof createCallCounter>['onCall']) =>
      createApiClient({
        baseUrl: url,
        secretKey: apiConfig.secretKey,
        sessionKey: apiConfig.sessionKey,
        timeoutMs: 30_000,
        retry: { retries: 2 },
        ratePerSecond: apiConfig.ratePerSecond,
        concurrency: CONCURRENCY,
        onCall,
      });
    for (const s of scenarios) {
      await writeFeed(join(dir, 'feed.csv'), generateCsv(s.rows, { changeRate: s.changeRate, changeSeed: 2 }));
      emulator.send({ latencyMs: s.latencyMs });
      globalThis.gc?.();
      const calls = createCallCounter();
      const api = client(calls.onCall);
      const profile = await startProfile();
      const e0 = await emulatorCpu(emulator);
      const t0 = performance.now();
      const c0 = process.cpuUsage();
      if (s.newProcess) forgetEchoes();
      const report = (
        await runLanes(lanesOf(feed), { api, store, configFeeds: [feed], logger: silentLogger, baseDir: dir, apiConfig, calls, echoFiles }, {}, { config: demo, changeLog })
      )[0]!;
      await echoFiles.settled(); // (as the CLI does before it exits)
      const wallMs = Math.round(performance.now() - t0);
      const cpuMs = cpuSince(c0);
      const emulatorCpuMs = (await emulatorCpu(emulator)) - e0;
      await profile?.(`sync-${n}-${s.scenario.replace(/[^a-z0-9]+/gi, '-')}.cpuprofile`);
      if (process.env.BENCH_DEBUG) {
        const m = process.memoryUsage();
        globalThis.gc?.();
        const g = process.memoryUsage();
        process.stderr.write(
          `${s.scenario}: rss ${m.rss >> 20} heap ${m.heapUsed >> 20}/${m.heapTotal >> 20} ext ${m.external >> 20} ab ${m.arrayBuffers >> 20}; after gc heap ${g.heapUsed >> 20} rss ${g.rss >> 20} cpu ${JSON.stringify(process.cpuUsage())}\n`,
        );
      }
      if (report.outcome !== 'ok') throw new Error(`${s.scenario}: ${report.summary} ${report.message ?? ''}`);
      const total = report.calls.total;
      out.push({
        n,
        tool: FEEDSYNC,
        scenario: s.scenario,
        calls: total,
        minimum: s.minimum,
        retries: report.retries,
        wallMs,
        cpuMs,
        emulatorCpuMs,
        boundMs: bound(total, s.latencyMs),
        latencyMs: s.latencyMs,
        pagingMs: report.timings.remoteMs,
        streamMs: report.timings.feedMs - report.timings.remoteMs,
        rssMb: Math.round(process.resourceUsage().maxRSS / 1024),
        counts: `${report.counts.created} created, ${report.counts.updated} updated, ${report.counts.deleted} deleted, ${report.counts.unchanged} unchanged (${report.counts.unchangedByStamp} by stamp), ${report.remote.recalled ?? 0} recalled`,
      });
      if (!peers || s.newProcess) continue;
      for (const [tool, chatbot, run] of [
        [UPSERT, 'SN-PEER-UPSERT', (a: ChatbotApi, f: FeedConfig) => upsertPeer(a, f, dir, CONCURRENCY)],
        [RECREATE, 'SN-PEER-RECREATE', (a: ChatbotApi, f: FeedConfig) => recreatePeer(a, f, dir, CONCURRENCY, PAGE_SIZE)],
      ] as const) {
        const peerCalls = createCallCounter();
        const e1 = await emulatorCpu(emulator);
        const t1 = performance.now();
        const c1 = process.cpuUsage();
        const counts: PeerCounts = await run(client(peerCalls.onCall), { ...feed, chatbot });
        const done = peerCalls.snapshot();
        out.push({
          n,
          tool,
          scenario: s.scenario,
          calls: done.total,
          retries: done.retries,
          wallMs: Math.round(performance.now() - t1),
          cpuMs: cpuSince(c1),
          emulatorCpuMs: (await emulatorCpu(emulator)) - e1,
          boundMs: bound(done.total, s.latencyMs),
          latencyMs: s.latencyMs,
          counts: `${counts.created} created, ${counts.updated} updated, ${counts.deleted} deleted`,
        });
      }
    }
    await changeLog.close();
    await store.close();
    return out;
  } finally {
    emulator.disconnect();
    await rm(dir, { recursive: true, force: true });
  }
}

/** BENCH_PROF: profiles until the returned function is called, which writes the profile into that folder. */
async function startProfile(): Promise<((file: string) => Promise<void>) | undefined> {
  const dir = process.env.BENCH_PROF;
  if (!dir) return undefined;
  const session = new Session();
  session.connect();
  await session.post('Profiler.enable');
  await session.post('Profiler.start');
  return async (file) => {
    const { profile } = await session.post('Profiler.stop');
    session.disconnect();
    await mkdir(dir, { recursive: true });
    await writeFile(join(dir, file), JSON.stringify(profile));
  };
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

/** The emulator process's CPU time so far, in ms. */
function emulatorCpu(emulator: ChildProcess): Promise<number> {
  return new Promise((resolve) => {
    const onMessage = (m: { cpuMs?: number }) => {
      if (typeof m.cpuMs !== 'number') return;
      emulator.off('message', onMessage);
      resolve(m.cpuMs);
    };
    emulator.on('message', onMessage);
    emulator.send({ cpu: true });
  });
}

function bound(calls: number, latencyMs: number): number {
  return Math.round((calls * latencyMs) / CONCURRENCY);
}

function cpuSince(start: NodeJS.CpuUsage): number {
  const d = process.cpuUsage(start);
  return Math.round((d.user + d.system) / 1000);
}

function print(rows: Row[]): void {
  const head = [
    'listings',
    'tool',
    'scenario',
    'API calls',
    'minimum',
    'retries',
    'wall ms',
    'bound ms',
    'wall/bound',
    'CPU ms',
    'emulator CPU ms',
    'paging ms',
    'feed + writes ms',
    'peak RSS MB',
    'result',
  ];
  const body = rows.map((r) => {
    const target = r.scenario === NO_CHANGE || r.scenario === NEW_PROCESS ? 2 : 1.25;
    return [
      String(r.n),
      r.tool,
      r.scenario,
      String(r.calls),
      r.minimum === undefined ? '' : `${r.minimum}${r.calls === r.minimum ? ' ✓' : ' ✗'}`,
      String(r.retries),
      String(r.wallMs),
      String(r.boundMs),
      r.boundMs === 0
        ? '(seeding)'
        : r.tool === FEEDSYNC
          ? `${(r.wallMs / r.boundMs).toFixed(2)}${r.wallMs <= target * r.boundMs ? ' ✓' : ' ✗'}`
          : (r.wallMs / r.boundMs).toFixed(2),
      String(r.cpuMs),
      r.emulatorCpuMs === undefined ? '' : String(r.emulatorCpuMs),
      r.pagingMs === undefined ? '' : String(r.pagingMs),
      r.streamMs === undefined ? '' : String(r.streamMs),
      r.rssMb === undefined ? '' : `${r.rssMb}${r.n < 100_000 || r.rssMb < 400 ? ' ✓' : r.n >= 1_000_000 && r.rssMb < 2048 ? ' ✓' : ' ✗'}`,
      r.counts,
    ];
  });
  const widths = head.map((h, i) => Math.max(h.length, ...body.map((b) => b[i]!.length)));
  const line = (cells: string[]) => cells.map((c, i) => c.padEnd(widths[i]!)).join('  ');
  process.stdout.write(
    [
      `sync: emulator in a child process with ${LATENCY_MS} ms latency a request; concurrency ${CONCURRENCY} (the peers too), PageSize ${PAGE_SIZE}, delete batches of ${BATCH_SIZE}`,
      `ratePerSecond 10,000 (16 × 1000 ms / 20 ms = 800 calls/s at most) so the token bucket does not dominate; bound = calls × latency / concurrency; CPU ms = this process; emulator CPU ms = the emulator's process (both share this machine's ${availableParallelism()} cores)`,
      'targets (feedsync): calls = minimum (list pages + changed writes + delete batches); wall ≤ 1.25 × bound (no-change rerun ≤ 2 × bound); peak RSS < 400 MB at 100k, < 2 GB at 1M',
      `"new process": what the process remembered of the last paging forgotten first, the page echo read back from the file the run before left (as a cron \`feedsync sync\` runs; up to ${ECHO_ROWS.toLocaleString('en-US')} listings)`,
      '',
      line(head),
      ...body.map(line),
      '',
      ...peerSummary(rows),
    ].join('\n'),
  );
}

/** feedsync against each peer, per scenario, as ratios within this run. */
function peerSummary(rows: Row[]): string[] {
  const out: string[] = [];
  for (const r of rows.filter((x) => x.tool !== FEEDSYNC)) {
    const ours = rows.find((x) => x.tool === FEEDSYNC && x.n === r.n && x.scenario === r.scenario);
    if (!ours) continue;
    out.push(
      `${r.n} listings, ${r.scenario}: feedsync ${ours.calls} calls in ${ours.wallMs} ms; "${r.tool}" ${r.calls} calls (${(r.calls / ours.calls).toFixed(1)}×) in ${r.wallMs} ms (${(r.wallMs / ours.wallMs).toFixed(1)}× feedsync's time)`,
    );
  }
  return out.length ? ['feedsync beside the naive scripts (same emulator, feed and concurrency):', ...out, ''] : [];
}
