// Listing sync benchmark against the emulator (20 ms latency a request by default, in a child process): a
// first sync, a rerun with 1% changed (and 0.2% removed), and a rerun with no change, for feedsync
// and, on the same emulator and the same feed, the scripts a user would otherwise write
// (test/bench/naive-peers.ts): per record "list by MLSNumber, then update or create", and "delete
// all, recreate". For each: API calls (feedsync: against the minimum of list pages + changed writes
// + delete batches), wall time against the latency bound (calls × latency / concurrency), CPU time,
// and feedsync's per-phase times and peak RSS.
// Targets: calls = minimum; wall ≤ 1.25 × bound (a no-change rerun: ≤ 2 × bound); peak RSS < 400 MB
// at 100k and < 1.5 GB at 1M, with node's default heap settings.
// feedsync runs as a cron `feedsync sync` runs it: each scenario in a new process of its own (so
// its peak RSS is its own), on the production path (runLanes, the file state store, the change log
// in a file, the page echo in files in the state folder, read back from the run before). One more
// row runs a no-change rerun twice in one process, as a queue worker runs (the page echo in memory
// only, no files), and reports the second, which finds the process as the first left it (the
// threads kept, the paging remembered): that row's peak is the process's over both runs. And the
// no-change rerun once more as the command itself (`feedsync sync --json`, bundled from the same
// build as `npm run build` bundles it, spawn to exit: what a cron job waits for), beside the bare
// paging client of its turn.
// At 1M listings the first sync only seeds the chatbot: it runs with the emulator at
// BENCH_SEED_LATENCY_MS (default 0) and its wall/bound is not judged; the reruns run at 20 ms (BENCH_LATENCY_MS).
// The runs' heap: node's default; BENCH_HEAP_MB sets --max-old-space-size (then the targets are not judged).
// The runs' code: compiled by tsc and bundled by scripts/bundle.js, as `npm run build` builds the
// command and bin/feedsync.js runs it (dist/bundle/), built once into a temporary folder; BENCH_TSX=1
// runs the TypeScript sources through tsx instead, as a clone without a build does (its loader
// costs RSS of its own).
//
//   npm run bench -- sync                  sizes 10k (with the naive peers) and 100k, each in a child process
//   BENCH_SYNC_SIZES=20000,100000          other sizes; the peers run at the smallest
//   BENCH_PEERS=0                          feedsync only
//   BENCH_FIRST_ONLY=1                     the first sync only (with its bare writing client), no reruns
//   BENCH_LATENCY_MS=10                    the emulator's latency a request (default 20)
//   BENCH_SYNC_1M=1                        also 1,000,000 listings in one chatbot (seeded at 0 ms latency, then reruns at 20 ms)
//   BENCH_SEED_AT=200000                   sizes from which the first sync seeds at BENCH_SEED_LATENCY_MS (default 1,000,000)
//   BENCH_SYNC_SKIP_FIRST=1                the first sync only seeds the chatbot for the reruns (at BENCH_SEED_LATENCY_MS, not judged,
//                                          no bare writing client): the rerun rows alone
//   BENCH_PROF=dir                         a CPU profile of each feedsync run, dir/sync-<listings>-<scenario>.cpuprofile (slower);
//                                          the build is kept in dir/build (profile-summary.mjs names the bundle's functions through its source maps)
//   BENCH_TSX=1                            the feedsync runs through tsx (the sources), not compiled
//   BENCH_BESIDE=0                         a rerun's feed is read only once its chatbot is paged (src/sync/read/beside-paging.ts off)
//   BENCH_SEAL=0                           a rerun reads its feed even where the lane's seal holds (src/sync/run/feed-seal.ts off;
//                                          the worker row and the scenario rows; BENCH_NOCHANGE_AB=0 BENCH_NOCHANGE_AB_VAR=BENCH_SEAL)
//   BENCH_DEBUG=1                          each feedsync run's memory (sampled every 20 ms: at the peak, and after a collection) on stderr
//   BENCH_NOCHANGE_RUNS=5                  the no-change rerun, the bare client and the command run 5 times in turn, each rerun from the state the
//                                          1% rerun left (its folder copied back); the pair of the median wall ratio is the row, each on stderr
//   BENCH_NOCHANGE_AB=0,1                  with BENCH_NOCHANGE_RUNS, each turn also runs the rerun with BENCH_BESIDE set to each value
//   BENCH_NOCHANGE_AB_VAR=NAME             the variable BENCH_NOCHANGE_AB's values are given in (default BENCH_BESIDE): a toggle of
//                                          the sources' own, made for a measurement
//   BENCH_NOCHANGE_UNSHIFTED=1             with BENCH_NOCHANGE_RUNS, each turn also runs the rerun after a no-change rerun (no page shifted)
//   BENCH_ALLOC_PROF=dir                   a sampling heap profile of each feedsync run counting every allocation, collected or not
//                                          (dir/sync-<listings>-<scenario>.heapprofile: what a run allocates, where; the build kept in dir/build);
//                                          BENCH_ALLOC_PROF_MINOR=0 leaves out what scavenges collected: what was promoted to the old space
//   BENCH_NODE_ARGS='--trace-gc'           node flags for the scenarios' processes (their output goes on stderr's side: stdout's last line is the row)
//   BENCH_PROC_PROF=dir                    the no-change rerun's whole process profiled (node --cpu-prof: its start and every thread);
//                                          the build kept in dir/build, as with BENCH_PROF
//   node --import tsx test/bench/sync.bench.ts run 20000 [peers]   (one size, prints JSON)
import { fork, spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { Session } from 'node:inspector/promises';
import { getHeapSpaceStatistics } from 'node:v8';
import { cp, mkdir, mkdtemp, open, readdir, readFile, rm, symlink, writeFile } from 'node:fs/promises';
import { availableParallelism, tmpdir } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { parse as parseYaml, stringify as stringifyYaml } from 'yaml';
import { generateCsv, generateListings, writeFeed } from '../../fixtures/generate.js';
import { createApiClient } from '../../src/api/client.js';
import { createCallCounter } from '../../src/api/call-counter.js';
import type { ChatbotApi } from '../../src/api/index.js';
import { loadConfig } from '../../src/config/load.js';
import { ApiConfig, FeedConfig } from '../../src/config/schema.js';
import { silentLogger } from '../../src/log.js';
import { createFileStore } from '../../src/state/file-store.js';
import type { KvStore } from '../../src/state/kv-store.js';
import { createFileChangeLog } from '../../src/change-log/file-change-log.js';
import { runLanes } from '../../src/runs/run-lanes.js';
import { lanesOf } from '../../src/sync/index.js';
import { createEchoFiles } from '../../src/state/echo-files.js';
import { recordChecked } from '../../src/state/store-walk.js';
import { ECHO_ROWS } from '../../src/sync/remote/page-echo.js';
import { listingBatches, recreatePeer, upsertPeer, type PeerCounts } from './naive-peers.js';
import { mdTable, num, sec, writeMdPart } from './bench-md.js';

/** BENCH_LATENCY_MS: the emulator's latency a request for the reruns (issue 55's own reference ran at 10 ms) */
const LATENCY_MS = Number(process.env.BENCH_LATENCY_MS ?? 20);
const CONCURRENCY = 16;
const PAGE_SIZE = 100;
const BATCH_SIZE = 100;
const CHANGED = 0.01;
const REMOVED = 0.002;
/** What the bench's feed changes of the demo's austin-csv feed. */
const BENCH_FEED = {
  name: 'bench',
  chatbot: 'SN-BENCH',
  source: { kind: 'csv', path: 'feed.csv' },
  deletes: { mode: 'mirror', maxFraction: 0.05, maxCount: 10_000, batchSize: BATCH_SIZE },
};

// (a size given twice, as BENCH_SYNC_SIZES=1000000 with BENCH_SYNC_1M=1, runs once)
const SIZES = [
  ...new Set([
    ...(process.env.BENCH_SYNC_SIZES ?? '10000,100000').split(',').map(Number),
    ...(process.env.BENCH_SYNC_1M === '1' ? [1_000_000] : []),
  ]),
];
const PEERS = process.env.BENCH_PEERS !== '0';
/** BENCH_FIRST_ONLY=1: only the first sync (and the bare writing client beside it) */
const FIRST_ONLY = process.env.BENCH_FIRST_ONLY === '1';
const SEED_AT = Number(process.env.BENCH_SEED_AT ?? 1_000_000);
const SEED_LATENCY_MS = Number(process.env.BENCH_SEED_LATENCY_MS ?? 0);
/** BENCH_SYNC_SKIP_FIRST=1: the first sync of every size seeds (as at SEED_AT), without its bare writing client */
const SKIP_FIRST = process.env.BENCH_SYNC_SKIP_FIRST === '1';
/** BENCH_HEAP_MB: --max-old-space-size of the feedsync runs (default: node's own; the memory targets are judged only then) */
const HEAP_MB = process.env.BENCH_HEAP_MB;
const RSS_TARGET_MB = (n: number): number | undefined =>
  HEAP_MB ? undefined : n >= 1_000_000 ? 1536 : n >= 100_000 ? 400 : undefined;
const here = fileURLToPath(import.meta.url);
const TSX = process.env.BENCH_TSX === '1';
/** the compiled bench (BENCH_BUILT, set by the top process for the sizes' processes), or undefined: through tsx */
const BUILT = process.env.BENCH_BUILT;
/** the command bundled from the same build (BENCH_CLI: its cli.js), as `npm run build` bundles dist/bundle/cli.js */
const CLI = process.env.BENCH_CLI;
/** BENCH_PROF: the folder the runs' CPU profiles are written into (and the build kept in) */
const PROF = process.env.BENCH_PROF;
/** BENCH_NOCHANGE_RUNS: turns of the no-change rerun beside the bare client (the median pair is kept) */
const NOCHANGE_RUNS = Math.max(1, Number(process.env.BENCH_NOCHANGE_RUNS ?? 1));
/** BENCH_NOCHANGE_AB: with BENCH_NOCHANGE_RUNS, each turn also runs the rerun with BENCH_BESIDE set to each of these (comma-separated; on stderr only) */
const NOCHANGE_AB = process.env.BENCH_NOCHANGE_AB?.split(',') ?? [];
/** BENCH_NOCHANGE_AB_VAR: the variable BENCH_NOCHANGE_AB's values are given in */
const NOCHANGE_AB_VAR = process.env.BENCH_NOCHANGE_AB_VAR ?? 'BENCH_BESIDE';
/**
 * BENCH_NOCHANGE_UNSHIFTED=1: with BENCH_NOCHANGE_RUNS, each turn also runs the rerun after a no-change
 * rerun (unmeasured) of the same list: every page then known whole by the page echo, where after the 1%
 * rerun its deletes shifted every page (on stderr only)
 */
const NOCHANGE_UNSHIFTED = process.env.BENCH_NOCHANGE_UNSHIFTED === '1';
/** BENCH_PROC_PROF: the folder node --cpu-prof writes the no-change rerun's processes' profiles into */
const PROC_PROF = process.env.BENCH_PROC_PROF;
/** where the build is kept beside the profiles, so profile-summary.mjs names the bundle's functions through its source maps */
const PROFILES = PROF ?? PROC_PROF ?? process.env.BENCH_ALLOC_PROF;
/** BENCH_NODE_ARGS: node flags the scenarios' processes get beside the bench's own (space-separated: `--trace-gc`, which NODE_OPTIONS refuses) */
const NODE_ARGS = (process.env.BENCH_NODE_ARGS ?? '').split(' ').filter(Boolean);
/** BENCH_ALLOC_PROF: the folder the runs' allocation profiles are written into */
const ALLOC_PROF = process.env.BENCH_ALLOC_PROF;

const FEEDSYNC = 'feedsync';
const NO_CHANGE = 'rerun, no change';
const WORKER = 'rerun, no change, 2nd in one process (worker)';
const UPSERT = 'per record: list, update or create';
const RECREATE = 'delete all, recreate';
const BARE = 'bare paging client (new process)';
/** the no-change rerun as cron runs it: the command, `feedsync sync --json`, a new process from spawn to exit */
const COMMAND = 'feedsync sync (the command)';
/** the first sync's reference: node:http sending the same creates, nothing else (bare-writer.mjs) */
const BARE_WRITE = 'bare writing client (new process)';
/** issue 55 point 6a: a first sync's wall within this many times its latency bound */
const FIRST_WALL = 1.1;
/** the no-change rerun's targets against the bare client: its wall (issue 55 point 6b; issue 39 had 1.5) and its CPU (issue 39) */
const BARE_WALL = 1.2;
const BARE_CPU = 2;

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
  /** feedsync: the peak RSS of the run's process (its threads included), since the process started */
  rssMb?: number;
  /** feedsync: the run's state commits (KvStore.apply of the state store): their time and the entries they set or deleted */
  commit?: { ms: number; entries: number };
  /** the bare writing client: from its first create to its last answer (its start and its file's read left out) */
  writingMs?: number;
  /** the bare writing client's same creates sent at latency-only-server.mjs: the host's floor under the latency bound */
  floorMs?: number;
  /** the command's row: its run's own duration (its report's durationMs), start and exit left out */
  runMs?: number;
  /** the command's row: the bare client's row of the same turn */
  besideBare?: Row;
  /** the whole process, its start included: wall from spawn to exit, CPU since it started (feedsync rows and the bare clients) */
  process?: { wallMs: number; cpuMs: number };
  counts: string;
}

/** One feedsync scenario, run in a process of its own. */
interface ScenarioTask {
  n: number;
  url: string;
  /** the repository (the demo config is read from it) */
  root: string;
  dir: string;
  scenario: string;
  minimum: number;
  latencyMs: number;
  /** runs in the process: the row is the last one's (2: a worker's second run) */
  runs: number;
}

if (process.argv[2] === 'run') {
  const rows = await runSize(Number(process.argv[3]), process.argv[4] === 'peers');
  process.stdout.write(JSON.stringify(rows) + '\n');
} else if (process.argv[2] === 'scenario') {
  const row = await runScenario(JSON.parse(process.argv[3]!) as ScenarioTask);
  process.stdout.write(JSON.stringify(row) + '\n');
  process.exit(0); // (the threads kept for a next run do not hold the process, but say it plainly)
} else {
  const rows: Row[] = [];
  const smallest = Math.min(...SIZES);
  const build = TSX ? undefined : await buildBench();
  for (const n of SIZES) {
    const r = spawnSync(
      process.execPath,
      ['--expose-gc', '--import', 'tsx', here, 'run', String(n), ...(PEERS && n === smallest ? ['peers'] : [])],
      {
        encoding: 'utf8',
        stdio: ['ignore', 'pipe', 'inherit'],
        maxBuffer: 1 << 24,
        env: { ...process.env, ...(build && { BENCH_BUILT: build.bench, BENCH_CLI: build.cli }) },
      },
    );
    if (r.status !== 0) {
      // the other sizes' figures are still printed; the bench fails at the end
      process.stderr.write(`sync bench for ${n} listings failed (exit ${r.status})\n`);
      process.exitCode = 1;
      continue;
    }
    rows.push(...(JSON.parse(r.stdout.trim().split('\n').pop()!) as Row[]));
  }
  print(rows);
  writeMdPart(syncMarkdown(rows));
  if (build && !PROFILES) await rm(build.dir, { recursive: true, force: true });
}

/**
 * The project built as `npm run build` builds the command: compiled by tsc (with the tests and the
 * fixtures the bench imports) into a temporary folder whose node_modules is the repository's, and
 * the compiled sync.bench.js bundled by scripts/bundle.js (what the scenario processes run).
 */
async function buildBench(): Promise<{ dir: string; bench: string; cli: string }> {
  const root = repoRoot();
  const dir = PROFILES ? join(resolve(PROFILES), 'build') : await mkdtemp(join(tmpdir(), 'feedsync-bench-build-'));
  if (PROFILES) await rm(dir, { recursive: true, force: true });
  const tsc = join(root, 'node_modules/typescript/bin/tsc');
  const r = spawnSync(
    process.execPath,
    [tsc, '-p', join(root, 'tsconfig.json'), '--outDir', dir, '--noEmit', 'false'],
    { stdio: 'inherit' },
  );
  if (r.status !== 0) throw new Error(`the bench's build failed (tsc exit ${r.status})`);
  await symlink(join(root, 'node_modules'), join(dir, 'node_modules'), 'dir');
  const b = spawnSync(
    process.execPath,
    [join(root, 'scripts/bundle.js'), join(dir, 'test/bench/sync.bench.js'), dir, join(dir, 'bundle')],
    { stdio: 'inherit' },
  );
  if (b.status !== 0) throw new Error(`the bench's bundle failed (exit ${b.status})`);
  const c = spawnSync(
    process.execPath,
    [join(root, 'scripts/bundle.js'), join(dir, 'src/cli.js'), dir, join(dir, 'bundle-cli')],
    { stdio: 'inherit' },
  );
  if (c.status !== 0) throw new Error(`the command's bundle failed (exit ${c.status})`);
  return { dir, bench: join(dir, 'bundle/sync.bench.js'), cli: join(dir, 'bundle-cli/cli.js') };
}

/** the repository: two folders up from this file, its TypeScript source (the compiled copy is told it) */
function repoRoot(): string {
  return resolve(dirname(here), '../..');
}

/** The bench's API settings, as a config spells them. */
function benchApi(url: string) {
  return {
    baseUrl: url,
    secretKey: 'bench-secret',
    sessionKey: 'bench-session',
    concurrency: CONCURRENCY,
    ratePerSecond: 10_000,
    pageSize: PAGE_SIZE,
    retries: 2,
  };
}

/** The feed, the API settings and the config of every run of the bench (its own and the peers'). */
async function benchSetup(url: string, root: string) {
  const demo = await loadConfig(join(root, 'fixtures/demo.yaml'));
  const austin = demo.config.feeds.find((f) => f.name === 'austin-csv')!;
  const feed = FeedConfig.parse({ ...austin, ...BENCH_FEED, schedule: undefined });
  const apiConfig = ApiConfig.parse(benchApi(url));
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
  return { demo, feed, apiConfig, client };
}

/** One size: the emulator and the state folder live here; each feedsync scenario runs in a new process (runScenario), the peers here. */
async function runSize(n: number, peers: boolean): Promise<Row[]> {
  const emulator = fork(join(here, '../sync-emulator.ts'), [String(LATENCY_MS)], {
    execArgv: ['--import', 'tsx'],
    stdio: ['ignore', 'ignore', 'inherit', 'ipc'],
  });
  const url = await new Promise<string>((resolve, reject) => {
    emulator.once('message', (m) => resolve((m as { url: string }).url));
    emulator.once('exit', (code) => reject(new Error(`emulator exited ${code}`)));
  });
  const dir = await mkdtemp(join(tmpdir(), 'feedsync-bench-'));
  try {
    const { feed, client } = await benchSetup(url, repoRoot());
    await writeCommandConfig(dir, url);
    const kept = n - Math.round(n * REMOVED);
    const changed = countChanged(kept);
    // paging reads until a short page (VirtualCount is only a hint), so a list that fills its last
    // page whole takes one more, empty, page to end
    const pages = (remote: number) => Math.floor(remote / PAGE_SIZE) + 1;
    const seeding = n >= SEED_AT || SKIP_FIRST;
    const scenarios = [
      {
        scenario: seeding ? `first sync (seeding at ${SEED_LATENCY_MS} ms)` : 'first sync',
        rows: n,
        changeRate: 0,
        minimum: pages(0) + n,
        latencyMs: seeding ? SEED_LATENCY_MS : LATENCY_MS,
        runs: 1,
      },
      {
        scenario: `rerun, ${CHANGED * 100}% changed, ${REMOVED * 100}% removed`,
        rows: kept,
        changeRate: CHANGED,
        minimum: pages(n) + changed + Math.ceil((n - kept) / BATCH_SIZE),
        latencyMs: LATENCY_MS,
        runs: 1,
      },
      { scenario: NO_CHANGE, rows: kept, changeRate: CHANGED, minimum: pages(kept), latencyMs: LATENCY_MS, runs: 1 },
      // (a worker's nightly case: its first run writes seed 3's 1% and puts seed 2's 1% back (570 listings at 30k), so the second's pages hold listings its page echo has not seen)
      {
        scenario: WORKER,
        rows: kept,
        changeRate: CHANGED,
        changeSeed: 3,
        minimum: pages(kept),
        latencyMs: LATENCY_MS,
        runs: 2,
      },
    ];
    const out: Row[] = [];
    for (const s of FIRST_ONLY ? scenarios.slice(0, 1) : scenarios) {
      await writeFeed(
        join(dir, 'feed.csv'),
        generateCsv(s.rows, { changeRate: s.changeRate, changeSeed: s.changeSeed ?? 2 }),
      );
      emulator.send({ latencyMs: s.latencyMs });
      const task: ScenarioTask = {
        n,
        url,
        root: repoRoot(),
        dir,
        scenario: s.scenario,
        minimum: s.minimum,
        latencyMs: s.latencyMs,
        runs: s.runs,
      };
      if (s.scenario === NO_CHANGE) {
        out.push(...(await noChangeTurns(emulator, task)));
        continue;
      }
      const e0 = await emulatorCpu(emulator);
      // (the emulator's CPU over the process: over both runs of the worker row)
      out.push({ ...scenarioProcess(task), emulatorCpuMs: (await emulatorCpu(emulator)) - e0 });
      // (a first sync that seeds has no bare writing client: its scenario is named for the seeding)
      if (s.scenario === 'first sync') out.push(await bareWriting(emulator, { n, url, dir, feed }, s.latencyMs));
      if (!peers || s.runs > 1) continue;
      for (const [tool, chatbot, run] of [
        [UPSERT, 'SN-PEER-UPSERT', (a: ChatbotApi, f: FeedConfig) => upsertPeer(a, f, dir, CONCURRENCY)],
        [
          RECREATE,
          'SN-PEER-RECREATE',
          (a: ChatbotApi, f: FeedConfig) => recreatePeer(a, f, dir, CONCURRENCY, PAGE_SIZE),
        ],
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
    return out;
  } finally {
    emulator.disconnect();
    await rm(dir, { recursive: true, force: true });
  }
}

/** One feedsync scenario in a new process (runScenario there): its row, the process's wall from spawn to exit. */
function scenarioProcess(task: ScenarioTask, env: Record<string, string> = {}): Row {
  const prof = PROC_PROF && task.scenario === NO_CHANGE ? ['--cpu-prof', `--cpu-prof-dir=${PROC_PROF}`] : [];
  const p0 = performance.now();
  const r = spawnSync(
    process.execPath,
    [
      ...(HEAP_MB ? [`--max-old-space-size=${HEAP_MB}`] : []),
      '--expose-gc',
      ...prof,
      ...NODE_ARGS,
      ...(BUILT ? [BUILT] : ['--import', 'tsx', here]),
      'scenario',
      JSON.stringify(task),
    ],
    {
      encoding: 'utf8',
      stdio: ['ignore', 'pipe', 'inherit'],
      maxBuffer: 1 << 24,
      // (bin/feedsync.js enables Node's compile cache before it loads the bundle: so does the bench,
      // in the build's folder, which the first scenario's process fills)
      env: { ...process.env, ...(BUILT && { NODE_COMPILE_CACHE: join(dirname(BUILT), 'compile-cache') }), ...env },
    },
  );
  if (r.status !== 0)
    throw new Error(
      `${task.n} listings, ${task.scenario}: the run's process failed (exit ${r.status}, signal ${r.signal})`,
    );
  const procWallMs = Math.round(performance.now() - p0);
  // (what node's flags print, BENCH_NODE_ARGS, goes to stderr: the row is the last line that is one)
  const lines = r.stdout.trim().split('\n');
  const last = lines.findLastIndex((l) => l.startsWith('{'));
  if (NODE_ARGS.length)
    process.stderr.write(
      lines
        .filter((_, i) => i !== last)
        .map((l) => `${task.scenario}: ${l}\n`)
        .join(''),
    );
  const row = JSON.parse(lines[last]!) as Row;
  return { ...row, ...(row.process && { process: { ...row.process, wallMs: procWallMs } }) };
}

/**
 * BENCH_NOCHANGE_RUNS: the no-change rerun and the bare client in turn, each rerun from the state
 * folder as the 1% rerun left it (copied back: the page echo's files, the state); the pair of the
 * median wall ratio, every pair on stderr.
 */
async function noChangeTurns(emulator: ChildProcess, task: ScenarioTask): Promise<Row[]> {
  const { n, url, dir } = task;
  const before = `${dir}-before-no-change`;
  await cp(dir, before, { recursive: true });
  const pairs: Array<{ ours: Row; bare: Row; ratio: number }> = [];
  const commands: Row[] = [];
  const restore = async () => {
    await rm(dir, { recursive: true, force: true });
    await cp(before, dir, { recursive: true });
    // (the command keeps its page echo in .feedsync/ beside its config, the scenario in page-echo/: one folder for both)
    await mkdir(join(dir, '.feedsync'), { recursive: true });
    await symlink(join(dir, 'page-echo'), join(dir, '.feedsync', 'page-echo'), 'dir');
    // (the copy is the file the 1% rerun closed whole: recorded so, as its close did, or the open
    // would walk it in a child process first, store-walk.ts, as after a crash)
    recordChecked(join(dir, 'state.lmdb'));
    // (and on disk, as the 1% rerun's commits left the file they wrote: else the rerun's one
    // commit, its alert state's, fdatasyncs the whole copy, 0.09-0.22 s of its main thread against
    // 1-15 ms, which no cron run pays)
    await flushFiles(dir);
  };
  const said = (r: Row) =>
    `${r.process!.wallMs} ms (CPU ${r.process!.cpuMs} ms, run ${r.wallMs} ms, paging ${r.pagingMs} ms, RSS ${r.rssMb} MB, ${r.counts})`;
  try {
    for (let turn = 1; turn <= NOCHANGE_RUNS; turn++) {
      await restore();
      const e0 = await emulatorCpu(emulator);
      const ours = { ...scenarioProcess(task), emulatorCpuMs: (await emulatorCpu(emulator)) - e0 };
      const bare = await barePaging(emulator, n, url, task.latencyMs);
      const ratio = ours.process!.wallMs / bare.process!.wallMs;
      pairs.push({ ours, bare, ratio });
      process.stderr.write(
        `${n} ${task.scenario}, turn ${turn}: feedsync ${said(ours)}, bare ${bare.process!.wallMs} ms (CPU ${bare.process!.cpuMs} ms, paging ${bare.pagingMs} ms): ${ratio.toFixed(2)}x\n`,
      );
      if (CLI) {
        await restore();
        const command = { ...commandProcess(task, CLI), besideBare: bare };
        commands.push(command);
        process.stderr.write(
          `${n} ${task.scenario}, turn ${turn}: the command ${command.wallMs} ms (CPU ${command.cpuMs} ms, run ${command.runMs} ms, paging ${command.pagingMs} ms, RSS ${command.rssMb} MB, ${command.counts}): ${(command.wallMs / bare.process!.wallMs).toFixed(2)}x\n`,
        );
      }
      const others = [
        ...NOCHANGE_AB.map((v) => ({
          name: `${NOCHANGE_AB_VAR}=${v}`,
          env: { [NOCHANGE_AB_VAR]: v },
          unshifted: false,
        })),
        ...(NOCHANGE_UNSHIFTED ? [{ name: 'after a no-change rerun', env: {}, unshifted: true }] : []),
      ];
      for (const o of others) {
        await restore();
        if (o.unshifted) scenarioProcess(task);
        const other = scenarioProcess(task, o.env);
        process.stderr.write(
          `${n} ${task.scenario}, turn ${turn}, ${o.name}: feedsync ${said(other)}: ${(other.process!.wallMs / bare.process!.wallMs).toFixed(2)}x\n`,
        );
      }
    }
  } finally {
    await rm(before, { recursive: true, force: true });
  }
  const median = [...pairs].sort((a, b) => a.ratio - b.ratio)[Math.floor(pairs.length / 2)]!;
  const byRatio = (r: Row) => r.wallMs / r.besideBare!.process!.wallMs;
  const command = [...commands].sort((a, b) => byRatio(a) - byRatio(b))[Math.floor(commands.length / 2)];
  return [median.ours, median.bare, ...(command ? [command] : [])];
}

/**
 * The bench's feed and API settings as a config file beside the state (dir/bench.yaml), for the
 * command: the demo's austin-csv feed as benchSetup makes it, the state file the scenarios use.
 */
async function writeCommandConfig(dir: string, url: string): Promise<void> {
  const demo = parseYaml(await readFile(join(repoRoot(), 'fixtures/demo.yaml'), 'utf8')) as {
    feeds: Array<Record<string, unknown>>;
  };
  const austin = demo.feeds.find((f) => f['name'] === 'austin-csv')!;
  const { schedule: _unused, ...feed } = austin;
  const config = { api: benchApi(url), state: { file: 'state.lmdb' }, feeds: [{ ...feed, ...BENCH_FEED }] };
  await writeFile(join(dir, 'bench.yaml'), stringifyYaml(config));
}

/**
 * The no-change rerun as cron runs it: `feedsync sync --json` (the command bundled from the bench's
 * build, with Node's compile cache as bin/feedsync.js enables it) in a new process on the state
 * folder; its wall from spawn to exit, its CPU and peak RSS (exit-usage.mjs), its report's counts.
 */
function commandProcess(task: ScenarioTask, cli: string): Row {
  const usageFile = join(task.dir, 'command-usage.json');
  const p0 = performance.now();
  const r = spawnSync(
    process.execPath,
    [
      '--import',
      join(dirname(here), 'exit-usage.mjs'),
      cli,
      'sync',
      '--config',
      join(task.dir, 'bench.yaml'),
      '--json',
    ],
    {
      encoding: 'utf8',
      stdio: ['ignore', 'pipe', 'pipe'],
      maxBuffer: 1 << 26,
      env: { ...process.env, NODE_COMPILE_CACHE: join(dirname(cli), 'compile-cache'), BENCH_USAGE_FILE: usageFile },
    },
  );
  const wallMs = Math.round(performance.now() - p0);
  if (r.status !== 0)
    throw new Error(`${task.n} listings, the command failed (exit ${r.status}, signal ${r.signal}): ${r.stderr}`);
  const { reports } = JSON.parse(r.stdout) as {
    reports: Array<{
      outcome: string;
      counts: {
        created: number;
        updated: number;
        deleted: number;
        unchanged: number;
        unchangedByStamp: number;
        unchangedBySeal?: number;
      };
      calls: { total: number };
      retries: number;
      remote: { recalled?: number };
      timings: { remoteMs: number; feedMs: number };
      durationMs: number;
    }>;
  };
  const report = reports[0]!;
  const usage = JSON.parse(readFileSync(usageFile, 'utf8')) as { cpuMs: number; rssMb: number };
  return {
    n: task.n,
    tool: COMMAND,
    scenario: NO_CHANGE,
    calls: report.calls.total,
    minimum: task.minimum,
    retries: report.retries,
    wallMs,
    cpuMs: usage.cpuMs,
    process: { wallMs, cpuMs: usage.cpuMs },
    runMs: report.durationMs,
    boundMs: bound(report.calls.total, task.latencyMs),
    latencyMs: task.latencyMs,
    pagingMs: report.timings.remoteMs,
    rssMb: usage.rssMb,
    counts: `${report.outcome}: ${report.counts.created} created, ${report.counts.updated} updated, ${report.counts.deleted} deleted, ${report.counts.unchanged} unchanged (${report.counts.unchangedByStamp} by stamp, ${report.counts.unchangedBySeal ?? 0} by the seal), ${report.remote.recalled ?? 0} recalled`,
  };
}

/** Every file under `dir` flushed to disk (fsync), as a state folder a run left is: its commits flushed it. */
async function flushFiles(dir: string): Promise<void> {
  for (const entry of await readdir(dir, { withFileTypes: true, recursive: true })) {
    if (!entry.isFile()) continue;
    const file = await open(join(entry.parentPath, entry.name), 'r');
    try {
      await file.sync();
    } finally {
      await file.close();
    }
  }
}

/**
 * The no-change rerun's reference: a bare client (bare-pager.mjs) paging the same list from a new
 * process, its start included: its wall from spawn to exit, its process's CPU.
 */
async function barePaging(emulator: ChildProcess, n: number, url: string, latencyMs: number): Promise<Row> {
  const { got, wallMs, emulatorCpuMs } = await bareProcess<{ listings: number; pages: number; pagingMs: number }>(
    emulator,
    'bare-pager.mjs',
    [url, 'SN-BENCH', 'bench-session', String(PAGE_SIZE), String(CONCURRENCY)],
  );
  return {
    n,
    tool: BARE,
    scenario: NO_CHANGE,
    calls: got.pages,
    retries: 0,
    wallMs,
    cpuMs: got.cpuMs,
    process: { wallMs, cpuMs: got.cpuMs },
    pagingMs: got.pagingMs,
    emulatorCpuMs,
    boundMs: bound(got.pages, latencyMs),
    latencyMs,
    counts: `${got.listings} listings paged`,
  };
}

/** A bare client's script (beside this file) as a process of its own: what it printed, its wall from spawn to exit, the emulator's CPU meanwhile (when it is the emulator it talks to). */
async function bareProcess<T>(
  emulator: ChildProcess | undefined,
  script: string,
  args: string[],
): Promise<{ got: T & { cpuMs: number }; wallMs: number; emulatorCpuMs: number }> {
  const e0 = emulator ? await emulatorCpu(emulator) : 0;
  const p0 = performance.now();
  const r = spawnSync(process.execPath, [join(dirname(here), script), ...args], {
    encoding: 'utf8',
    stdio: ['ignore', 'pipe', 'inherit'],
  });
  const wallMs = Math.round(performance.now() - p0);
  if (r.status !== 0) throw new Error(`the bare client ${script} failed (exit ${r.status})`);
  const got = JSON.parse(r.stdout.trim()) as T & { cpuMs: number };
  return { got, wallMs, emulatorCpuMs: emulator ? (await emulatorCpu(emulator)) - e0 : 0 };
}

/**
 * The first sync's reference: a bare client (bare-writer.mjs) sending the same creates from a new
 * process, into a chatbot of its own: the listings feedsync's reader and mapping make of the same
 * feed, written to a file before its clock starts. Its wall from spawn to exit; writingMs from its
 * first create to its last answer.
 */
async function bareWriting(
  emulator: ChildProcess,
  to: { n: number; url: string; dir: string; feed: FeedConfig },
  latencyMs: number,
): Promise<Row> {
  const bodies = join(to.dir, 'bare-writer-bodies.jsonl');
  const file = await open(bodies, 'w');
  try {
    for await (const batch of listingBatches({ ...to.feed, chatbot: 'SN-BENCH-BARE-WRITE' }, to.dir, 1000))
      await file.write(batch.map((l) => JSON.stringify(l) + '\n').join(''));
  } finally {
    await file.close();
  }
  let ran;
  let floor;
  try {
    const args = (url: string) => [url, 'bench-session', bodies, String(CONCURRENCY)];
    ran = await bareProcess<{ listings: number; writingMs: number }>(emulator, 'bare-writer.mjs', args(to.url));
    floor = await floorWriting(latencyMs, args);
  } finally {
    await rm(bodies, { force: true });
  }
  const { got, wallMs, emulatorCpuMs } = ran;
  return {
    n: to.n,
    tool: BARE_WRITE,
    scenario: 'first sync',
    calls: got.listings,
    retries: 0,
    wallMs,
    cpuMs: got.cpuMs,
    process: { wallMs, cpuMs: got.cpuMs },
    writingMs: got.writingMs,
    floorMs: floor.writingMs,
    emulatorCpuMs,
    boundMs: bound(got.listings, latencyMs),
    latencyMs,
    counts: `${got.listings} listings created (${got.writingMs} ms from the first create)`,
  };
}

/**
 * The host's floor: bare-writer.mjs's same creates sent at a server that only waits the latency
 * (latency-only-server.mjs, a process of its own as the emulator is), its writingMs.
 */
async function floorWriting(latencyMs: number, args: (url: string) => string[]): Promise<{ writingMs: number }> {
  const server = spawn(process.execPath, [join(dirname(here), 'latency-only-server.mjs'), String(latencyMs)], {
    stdio: ['ignore', 'pipe', 'inherit'],
  });
  try {
    const port = await new Promise<string>((resolve, reject) => {
      server.stdout!.once('data', (b: Buffer) => resolve(b.toString().trim()));
      server.once('exit', (code) => reject(new Error(`latency-only-server.mjs exited (${code}) before it listened`)));
    });
    const { got } = await bareProcess<{ writingMs: number }>(
      undefined,
      'bare-writer.mjs',
      args(`http://127.0.0.1:${port}`),
    );
    return got;
  } finally {
    server.kill();
  }
}

/**
 * One feedsync scenario in this (new) process, as `feedsync sync` runs it: the file state store,
 * the change log in a file, the page echo in files in the state folder. Its row's peak RSS is this
 * process's.
 */
async function runScenario(t: ScenarioTask): Promise<Row> {
  const { demo, feed, apiConfig, client } = await benchSetup(t.url, t.root);
  const store = timedCommits(await createFileStore(join(t.dir, 'state.lmdb')));
  const changeLog = await createFileChangeLog(join(t.dir, 'changes.jsonl'));
  // (a queue worker keeps the page echo in memory only: jobs/listing-sync.ts gives no files)
  const echoFiles = t.runs > 1 ? undefined : createEchoFiles(join(t.dir, 'page-echo'), silentLogger);
  const sampler = process.env.BENCH_DEBUG ? sampleMemory() : undefined;
  let row: Row | undefined;
  for (let run = 1; run <= t.runs; run++) {
    const calls = createCallCounter();
    const api = client(calls.onCall);
    store.commits = { ms: 0, entries: 0 };
    const profile = await startProfile();
    const t0 = performance.now();
    const c0 = process.cpuUsage();
    const report = (
      await runLanes(
        lanesOf(feed),
        {
          api,
          store,
          configFeeds: [feed],
          logger: silentLogger,
          baseDir: t.dir,
          apiConfig,
          calls,
          ...(echoFiles && { echoFiles }),
        },
        {},
        { config: demo, changeLog },
        // (BENCH_BESIDE=0: the feed read only once the chatbot is paged, to weigh what reading it beside the paging buys;
        // BENCH_SEAL=0: read past the lane's seal, to weigh what not reading the feed buys)
        {
          ...(process.env.BENCH_BESIDE === '0' && { besidePaging: false }),
          ...(process.env.BENCH_SEAL === '0' && { seal: false }),
        },
      )
    )[0]!;
    await echoFiles?.settled(); // (as the CLI does before it exits)
    const wallMs = Math.round(performance.now() - t0);
    const cpuMs = cpuSince(c0);
    await profile?.(`sync-${t.n}-${t.scenario.replace(/[^a-z0-9]+/gi, '-')}-${run}.cpuprofile`);
    if (sampler) process.stderr.write(`${t.n} ${t.scenario} (run ${run}): ${sampler()}\n`);
    if (report.outcome !== 'ok') throw new Error(`${t.scenario}: ${report.summary} ${report.message ?? ''}`);
    const total = report.calls.total;
    row = {
      n: t.n,
      tool: FEEDSYNC,
      scenario: t.scenario,
      calls: total,
      minimum: t.minimum,
      retries: report.retries,
      wallMs,
      cpuMs,
      boundMs: bound(total, t.latencyMs),
      latencyMs: t.latencyMs,
      pagingMs: report.timings.remoteMs,
      streamMs: report.timings.feedMs - report.timings.remoteMs,
      rssMb: Math.round(process.resourceUsage().maxRSS / 1024),
      commit: { ms: Math.round(store.commits.ms), entries: store.commits.entries },
      // (the process's CPU since it started; its wall is measured by the parent, spawn to exit)
      process: { wallMs: 0, cpuMs: cpuSince({ user: 0, system: 0 }) },
      counts: `${report.counts.created} created, ${report.counts.updated} updated, ${report.counts.deleted} deleted, ${report.counts.unchanged} unchanged (${report.counts.unchangedByStamp} by stamp, ${report.counts.besidePaging ?? 0} beside the paging, ${report.counts.unchangedBySeal ?? 0} by the seal), ${report.remote.recalled ?? 0} recalled`,
    };
  }
  await changeLog.close();
  await store.close();
  return row!;
}

/** The store with the time of its applies (a run's state commits) and the entries they set or delete summed in `commits`. */
function timedCommits(store: KvStore): KvStore & { commits: { ms: number; entries: number } } {
  const timed = { ...store, commits: { ms: 0, entries: 0 } };
  timed.apply = async (changes) => {
    const t0 = performance.now();
    await store.apply(changes);
    timed.commits.ms += performance.now() - t0;
    for (const c of changes) timed.commits.entries += sizeOf(c.set) + sizeOf(c.delete);
  };
  return timed;
}

/** how many pairs or keys a change holds (the sync's are arrays or columns with a length) */
function sizeOf(items: Iterable<unknown> | undefined): number {
  if (items === undefined) return 0;
  return 'length' in items && typeof items.length === 'number' ? items.length : [...items].length;
}

/**
 * BENCH_DEBUG: samples this process's memory every 20 ms; the returned function tells the sample
 * of the highest RSS so far (this thread's heap, external, array buffers) and the heap after a
 * collection now.
 */
function sampleMemory(): () => string {
  let peak = process.memoryUsage();
  const t0 = performance.now();
  let at = 0;
  const mb = (b: number) => Math.round(b / 2 ** 20);
  /** the heap's spaces (used/committed MB) as at the peak: which space grew */
  const spaces = () =>
    getHeapSpaceStatistics()
      .filter((s) => s.space_size >= 2 ** 20)
      .map((s) => `${s.space_name.replace(/_space$/, '')} ${mb(s.space_used_size)}/${mb(s.space_size)}`)
      .join(', ');
  let peakSpaces = spaces();
  const timer = setInterval(() => {
    const m = process.memoryUsage();
    if (m.rss > peak.rss) {
      peak = m;
      peakSpaces = spaces();
      at = performance.now() - t0;
    }
  }, 20);
  timer.unref();
  return () => {
    globalThis.gc?.();
    const g = process.memoryUsage();
    return `at the peak (${Math.round(at)} ms) rss ${mb(peak.rss)} heap ${mb(peak.heapUsed)}/${mb(peak.heapTotal)} (${peakSpaces}) external ${mb(peak.external)} arrayBuffers ${mb(peak.arrayBuffers)}; after gc rss ${mb(g.rss)} heap ${mb(g.heapUsed)}/${mb(g.heapTotal)} external ${mb(g.external)} arrayBuffers ${mb(g.arrayBuffers)}; maxRSS ${Math.round(process.resourceUsage().maxRSS / 1024)}`;
  };
}

/**
 * BENCH_ALLOC_PROF: samples allocations (one in 32 KiB) until the returned function is called, the
 * ones collected since included: what a run allocates and where (a first sync's heap grows with its
 * garbage), not only what it keeps. Written as .heapprofile (the file DevTools opens).
 */
async function startAllocationProfile(dir: string): Promise<(file: string) => Promise<void>> {
  const session = new Session();
  session.connect();
  await session.post('HeapProfiler.enable');
  await session.post('HeapProfiler.startSampling', {
    samplingInterval: 32 * 1024,
    includeObjectsCollectedByMajorGC: true,
    // (BENCH_ALLOC_PROF_MINOR=0: what a scavenge collected left out, so what stayed is what was promoted: the old space's growth)
    includeObjectsCollectedByMinorGC: process.env.BENCH_ALLOC_PROF_MINOR !== '0',
  });
  return async (file) => {
    const { profile } = await session.post('HeapProfiler.stopSampling');
    session.disconnect();
    await mkdir(dir, { recursive: true });
    await writeFile(join(dir, file.replace(/\.cpuprofile$/, '.heapprofile')), JSON.stringify(profile));
  };
}

/** BENCH_PROF: profiles until the returned function is called, which writes the profile into that folder. */
async function startProfile(): Promise<((file: string) => Promise<void>) | undefined> {
  if (ALLOC_PROF) return startAllocationProfile(ALLOC_PROF);
  const dir = PROF;
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
    'after paging ms',
    'peak RSS MB',
    'state commit ms (entries)',
    'result',
  ];
  const body = rows.map((r) => {
    const target = wallTarget(r);
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
      rssCell(r),
      r.commit === undefined ? '' : `${r.commit.ms} (${r.commit.entries})`,
      r.counts,
    ];
  });
  const widths = head.map((h, i) => Math.max(h.length, ...body.map((b) => b[i]!.length)));
  const line = (cells: string[]) => cells.map((c, i) => c.padEnd(widths[i]!)).join('  ');
  process.stdout.write(
    [
      `sync: emulator in a child process with ${LATENCY_MS} ms latency a request; concurrency ${CONCURRENCY} (the peers too), PageSize ${PAGE_SIZE}, delete batches of ${BATCH_SIZE}`,
      `ratePerSecond 10,000 (16 × 1000 ms / ${LATENCY_MS} ms = ${Math.round((16 * 1000) / LATENCY_MS)} calls/s at most) so the token bucket does not dominate; bound = calls × latency / concurrency; CPU ms = this process; emulator CPU ms = the emulator's process (both share this machine's ${availableParallelism()} cores)`,
      `targets (feedsync): calls = minimum (list pages + changed writes + delete batches); wall ≤ 1.2 × bound for a first sync, ≤ 1.25 × for a 1% rerun, ≤ 2 × for a no-change rerun (2.5 × at 1M); peak RSS < 400 MB at 100k, < 1,536 MB (1.5 GB) at 1M, with node's default heap settings${HEAP_MB ? ` (not judged: BENCH_HEAP_MB=${HEAP_MB})` : ''}`,
      `each feedsync row is a new process, as a cron \`feedsync sync\` runs (the page echo read back from the files the run before left, up to ${ECHO_ROWS.toLocaleString('en-US')} listings), its peak RSS its own, running ${TSX ? 'the TypeScript sources through tsx (BENCH_TSX=1)' : 'the code compiled by tsc and bundled (scripts/bundle.js), as `npm run build` builds it and bin/feedsync.js runs it'}; "${WORKER}": two runs in one process as a queue worker runs them (the page echo in memory, no files): the first writes about 2% of the listings (seed 3's changes, and seed 2's put back), the second changes nothing; the second's figures, the peak over both`,
      '',
      line(head),
      ...body.map(line),
      '',
      ...bareSummary(rows),
      ...bareWriteSummary(rows),
      ...peerSummary(rows),
    ].join('\n'),
  );
}

/** a feedsync row's target of wall / bound: a first sync 1.2 (issue 39), a 1% rerun 1.25, a no-change rerun 2 (2.5 at 1M) */
function wallTarget(r: Pick<Row, 'n' | 'scenario'>): number {
  if (r.scenario === NO_CHANGE || r.scenario === WORKER) return r.n >= 1_000_000 ? 2.5 : 2;
  return r.scenario.startsWith('first sync') ? 1.2 : 1.25;
}

/** peak RSS MB beside its target (none below 100k, or when BENCH_HEAP_MB set the heap) */
function rssCell(r: Row): string {
  if (r.rssMb === undefined) return '';
  const target = RSS_TARGET_MB(r.n);
  return target === undefined ? String(r.rssMb) : `${r.rssMb} (< ${target})${r.rssMb < target ? ' ✓' : ' ✗'}`;
}

/**
 * The no-change rerun in a process already running (a queue worker's second run: no start, the page
 * echo in memory) beside the bare client's paging alone (its start left out): like for like, as the
 * whole processes are.
 */
function asWorker(rows: readonly Row[], bare: Row): { runMs: number; pagingMs: number; ratio: number } | undefined {
  const warm = rows.find((x) => x.tool === FEEDSYNC && x.n === bare.n && x.scenario === WORKER);
  if (!warm || bare.pagingMs === undefined) return undefined;
  return { runMs: warm.wallMs, pagingMs: bare.pagingMs, ratio: warm.wallMs / bare.pagingMs };
}

/** The command's no-change rerun beside the bare client of its own turn: whole processes, wall and CPU ratios. */
function asCommand(rows: readonly Row[], bare: Row): { row: Row; bare: Row; wall: number; cpu: number } | undefined {
  const row = rows.find((x) => x.tool === COMMAND && x.n === bare.n);
  const beside = row?.besideBare;
  if (!row?.process || !beside?.process) return undefined;
  return {
    row,
    bare: beside,
    wall: row.process.wallMs / beside.process.wallMs,
    cpu: row.process.cpuMs / beside.process.cpuMs,
  };
}

/** The no-change rerun against the bare paging client, whole processes (start included), as ratios within this run. */
function bareSummary(rows: Row[]): string[] {
  const out: string[] = [];
  for (const bare of rows.filter((x) => x.tool === BARE)) {
    const ours = rows.find((x) => x.tool === FEEDSYNC && x.n === bare.n && x.scenario === NO_CHANGE);
    if (!ours?.process || !bare.process) continue;
    const wall = ours.process.wallMs / bare.process.wallMs;
    const cpu = ours.process.cpuMs / bare.process.cpuMs;
    const perListing = (ms: number) => `${((ms * 1000) / bare.n).toFixed(1)} µs`;
    out.push(
      `${bare.n} listings, ${NO_CHANGE}, whole processes: feedsync ${ours.process.wallMs} ms wall, ${ours.process.cpuMs} ms CPU (${perListing(ours.process.cpuMs)} a listing); bare paging client ${bare.process.wallMs} ms, ${bare.process.cpuMs} ms CPU (${perListing(bare.process.cpuMs)}): ${wall.toFixed(2)}× its wall (target ≤ ${BARE_WALL}×)${wall <= BARE_WALL ? ' ✓' : ' ✗'}, ${cpu.toFixed(2)}× its CPU (target ≤ ${BARE_CPU}×)${cpu <= BARE_CPU ? ' ✓' : ' ✗'}`,
    );
    const command = asCommand(rows, bare);
    if (command)
      out.push(
        `${bare.n} listings, ${NO_CHANGE}, as cron runs it (${COMMAND}: \`feedsync sync --json\`, spawn to exit, its turn's bare client): ${command.row.wallMs} ms wall (its run ${command.row.runMs} ms), ${command.row.cpuMs} ms CPU, peak RSS ${command.row.rssMb} MB; bare paging client ${command.bare.process!.wallMs} ms: ${command.wall.toFixed(2)}× its wall (issue 55 point 6b: ≤ ${BARE_WALL}×)${command.wall <= BARE_WALL ? ' ✓' : ' ✗'}, ${command.cpu.toFixed(2)}× its CPU`,
      );
    const warm = asWorker(rows, bare);
    if (warm)
      out.push(
        `${bare.n} listings, ${NO_CHANGE}, as a queue worker runs it (no start: ${WORKER}): feedsync's run ${warm.runMs} ms; the bare client's paging ${warm.pagingMs} ms (its start left out): ${warm.ratio.toFixed(2)}×`,
      );
  }
  return out.length
    ? [
        'feedsync beside a bare client paging the same list (bare-pager.mjs: node:http + JSON.parse, a new process, its start included):',
        ...out,
        '',
      ]
    : [];
}

/** A first sync beside the bare writing client, in the same run: each one's run (no start) over the latency bound. */
function firstBesideBare(rows: readonly Row[], bare: Row) {
  const ours = rows.find((x) => x.tool === FEEDSYNC && x.n === bare.n && x.scenario === 'first sync');
  if (!ours || bare.writingMs === undefined || ours.boundMs === 0) return undefined;
  return {
    ours,
    oursRatio: ours.wallMs / ours.boundMs,
    bareRatio: bare.writingMs / bare.boundMs,
    versus: ours.wallMs / bare.writingMs,
    floorRatio: bare.floorMs === undefined ? undefined : bare.floorMs / bare.boundMs,
  };
}

/** The first sync against its latency bound (issue 55 point 6a) and against the bare writing client's, as ratios within this run. */
function bareWriteSummary(rows: Row[]): string[] {
  const out: string[] = [];
  for (const bare of rows.filter((x) => x.tool === BARE_WRITE)) {
    const f = firstBesideBare(rows, bare);
    if (!f) continue;
    out.push(
      `${bare.n} listings, first sync: feedsync's run ${f.ours.wallMs} ms, ${f.oursRatio.toFixed(2)}× its bound (issue 55 point 6a: ≤ ${FIRST_WALL}×)${f.oursRatio <= FIRST_WALL ? ' ✓' : ' ✗'}; the bare writing client's creates ${bare.writingMs} ms, ${f.bareRatio.toFixed(2)}× the same bound; feedsync ${f.versus.toFixed(2)}× the bare client` +
        (f.floorRatio === undefined
          ? ''
          : `; the host's floor (the bare client at latency-only-server.mjs, a server that only waits ${bare.latencyMs} ms): ${bare.floorMs} ms, ${f.floorRatio.toFixed(2)}× the bound`),
    );
  }
  return out.length
    ? [
        'the first sync beside a bare writing client sending the same creates (bare-writer.mjs: node:http + JSON.parse, 16 in flight, a new process; both without their start):',
        ...out,
        '',
      ]
    : [];
}

/** feedsync against each peer, per scenario, as ratios within this run. */
function peerSummary(rows: Row[]): string[] {
  const out: string[] = [];
  for (const r of rows.filter(
    (x) => x.tool !== FEEDSYNC && x.tool !== BARE && x.tool !== BARE_WRITE && x.tool !== COMMAND,
  )) {
    const ours = rows.find((x) => x.tool === FEEDSYNC && x.n === r.n && x.scenario === r.scenario);
    if (!ours) continue;
    out.push(
      `${r.n} listings, ${r.scenario}: feedsync ${ours.calls} calls in ${ours.wallMs} ms; "${r.tool}" ${r.calls} calls (${(r.calls / ours.calls).toFixed(1)}×) in ${r.wallMs} ms (${(r.wallMs / ours.wallMs).toFixed(1)}× feedsync's time)`,
    );
  }
  return out.length ? ['feedsync beside the naive scripts (same emulator, feed and concurrency):', ...out, ''] : [];
}

/** The sync's section of docs/benchmarks.md: every row beside its references (minimum calls, latency bound, targets), then the bare client and the peers. */
function syncMarkdown(rows: readonly Row[]): string {
  const short = (n: number) => (n >= 1_000_000 ? `${n / 1_000_000}M` : n >= 1000 ? `${n / 1000}k` : String(n));
  const body = rows.map((r) => {
    const ours = r.tool === FEEDSYNC;
    const ratio = r.boundMs === 0 ? '(seeding)' : (r.wallMs / r.boundMs).toFixed(2);
    return [
      short(r.n),
      r.tool,
      r.scenario,
      callsCell(r),
      sec(r.wallMs),
      sec(r.boundMs),
      ours && r.boundMs > 0
        ? `${ratio} (≤ ${wallTarget(r)}) ${r.wallMs <= wallTarget(r) * r.boundMs ? '✓' : '✗'}`
        : ratio,
      sec(r.cpuMs),
      r.emulatorCpuMs === undefined ? '' : sec(r.emulatorCpuMs),
      r.pagingMs === undefined ? '' : sec(r.pagingMs),
      r.streamMs === undefined ? '' : sec(r.streamMs),
      mdRss(r),
      r.commit === undefined ? '' : `${sec(r.commit.ms)} (${num(r.commit.entries)})`,
    ];
  });
  const head = [
    'listings',
    'tool',
    'scenario',
    'API calls (minimum)',
    'wall',
    'bound',
    'wall/bound (target)',
    'CPU',
    'emulator CPU',
    'paging',
    'after paging',
    'peak RSS (target)',
    'state commit (entries)',
  ];
  return [
    '### Sync',
    '',
    `\`test/bench/sync.bench.ts\`: the emulator in a child process at ${LATENCY_MS} ms a request, concurrency ${CONCURRENCY}, PageSize ${PAGE_SIZE}, delete batches of ${BATCH_SIZE}; ` +
      `bound = calls × latency / concurrency; CPU = the syncing process (its threads included); emulator CPU = the emulator's process, on the same cores. ` +
      `Each feedsync row is a new process running the scenario as a cron \`feedsync sync\` runs it (the file state store, the change log in a file, the page echo in files), ` +
      `${TSX ? 'through tsx (BENCH_TSX=1)' : 'the code compiled by tsc and bundled (scripts/bundle.js), as `npm run build` builds the command'}, with ${HEAP_MB ? `--max-old-space-size=${HEAP_MB}` : "node's default heap settings"}; ` +
      `the worker row runs a no-change rerun twice in one process as a queue worker does and gives the second (its peak RSS over both). ` +
      `Paging is the chatbot's list, from the run's start; after paging, the rest of the run (a rerun's feed is read beside the paging: what of it is left, the writes, the commit). ` +
      `Targets: calls = the minimum (list pages + changed writes + delete batches); wall/bound as in the column; peak RSS under 400 MB at 100k and 1,536 MB at 1M.`,
    '',
    mdTable(head, body, new Set([3, 4, 5, 6, 7, 8, 9, 10, 11, 12])),
    '',
    ...bareMarkdown(rows),
    ...bareWriteMarkdown(rows),
    ...peerMarkdown(rows),
  ].join('\n');
}

/**
 * API calls beside the minimum, as the markdown gives them: a call retried (a timeout, a 5xx) counts
 * again, so calls above the minimum by exactly the retries are said so, not judged as extra work.
 */
function callsCell(r: Row): string {
  if (r.minimum === undefined) return num(r.calls) + (r.retries ? ` (${num(r.retries)} retries)` : '');
  const cell = `${num(r.calls)} (${num(r.minimum)})`;
  if (r.calls === r.minimum) return `${cell} ✓`;
  return r.retries > 0 && r.calls - r.retries === r.minimum
    ? `${cell} ✓ with ${num(r.retries)} retries`
    : `${cell} ✗${r.retries ? ` (${num(r.retries)} retries)` : ''}`;
}

/** peak RSS beside its target, as the markdown gives it */
function mdRss(r: Row): string {
  if (r.rssMb === undefined) return '';
  const target = RSS_TARGET_MB(r.n);
  return target === undefined
    ? `${num(r.rssMb)} MB`
    : `${num(r.rssMb)} MB (< ${num(target)} MB) ${r.rssMb < target ? '✓' : '✗'}`;
}

/** the command's whole process beside its turn's bare client, as a table's cell */
function commandCell(c: ReturnType<typeof asCommand>): string {
  return c
    ? `${sec(c.row.wallMs)} / ${sec(c.bare.process!.wallMs)}: ${c.wall.toFixed(2)}× (≤ ${BARE_WALL}×) ${c.wall <= BARE_WALL ? '✓' : '✗'}`
    : '';
}

/** a worker's run beside the bare client's paging, as a table's cell */
function warmCell(w: ReturnType<typeof asWorker>): string {
  return w ? `${sec(w.runMs)} / ${sec(w.pagingMs)}: ${w.ratio.toFixed(2)}×` : '';
}

/** The no-change rerun beside the bare paging client (whole processes, start included): its wall and CPU ratios against their targets. */
function bareMarkdown(rows: readonly Row[]): string[] {
  const out: string[][] = [];
  for (const bare of rows.filter((x) => x.tool === BARE)) {
    const ours = rows.find((x) => x.tool === FEEDSYNC && x.n === bare.n && x.scenario === NO_CHANGE);
    if (!ours?.process || !bare.process) continue;
    const wall = ours.process.wallMs / bare.process.wallMs;
    const cpu = ours.process.cpuMs / bare.process.cpuMs;
    const per = (ms: number) => `${((ms * 1000) / bare.n).toFixed(1)} µs`;
    out.push([
      num(bare.n),
      `${sec(ours.process.wallMs)} / ${sec(bare.process.wallMs)}`,
      `${wall.toFixed(2)}× (≤ ${BARE_WALL}×) ${wall <= BARE_WALL ? '✓' : '✗'}`,
      `${sec(ours.process.cpuMs)} (${per(ours.process.cpuMs)}) / ${sec(bare.process.cpuMs)} (${per(bare.process.cpuMs)})`,
      `${cpu.toFixed(2)}× (≤ ${BARE_CPU}×) ${cpu <= BARE_CPU ? '✓' : '✗'}`,
      commandCell(asCommand(rows, bare)),
      warmCell(asWorker(rows, bare)),
    ]);
  }
  if (!out.length) return [];
  return [
    "The no-change rerun beside a bare client paging the same list (`test/bench/bare-pager.mjs`: node:http, 16 pages in flight, `JSON.parse` of each page, nothing else), both whole processes from spawn to exit, start included: the bench's scenario process (the run as the command runs it, in the bench's own bundle), and `feedsync sync --json` itself, the command as cron runs it (issue 55 point 6b for a new process); and, like for like, a queue worker's run (a process already running, its second no-change rerun) beside the bare client's paging alone (its start left out):",
    '',
    mdTable(
      [
        'listings',
        'wall: feedsync / bare',
        'wall ratio (target)',
        'CPU a listing: feedsync / bare',
        'CPU ratio (target)',
        'the command / bare (target)',
        "as a worker: feedsync's run / the bare client's paging",
      ],
      out,
      new Set([0, 1, 2, 3, 4, 5, 6]),
    ),
    '',
  ];
}

/** The first sync beside the bare writing client: each one's creates over the same latency bound. */
function bareWriteMarkdown(rows: readonly Row[]): string[] {
  const out: string[][] = [];
  for (const bare of rows.filter((x) => x.tool === BARE_WRITE)) {
    const f = firstBesideBare(rows, bare);
    if (!f) continue;
    out.push([
      num(bare.n),
      sec(bare.boundMs),
      `${sec(f.ours.wallMs)}: ${f.oursRatio.toFixed(2)} (≤ ${FIRST_WALL}) ${f.oursRatio <= FIRST_WALL ? '✓' : '✗'}`,
      `${sec(bare.writingMs!)}: ${f.bareRatio.toFixed(2)}`,
      bare.floorMs === undefined ? '' : `${sec(bare.floorMs)}: ${f.floorRatio!.toFixed(2)}`,
      `${f.versus.toFixed(2)}×`,
    ]);
  }
  if (!out.length) return [];
  return [
    "The first sync beside a bare client sending the same creates (`test/bench/bare-writer.mjs`: node:http, 16 in flight, `JSON.parse` of each answer, nothing else; the listings feedsync's mapping makes of the same feed, read from a file before its clock starts), each without its process's start, over the same latency bound (issue 55 point 6a: ≤ 1.1); and the host's floor: the same client and creates sent at `test/bench/latency-only-server.mjs`, a server that does nothing but wait the latency and answer (no checks, no store): what this machine's timers, loopback and scheduling add, which no client can come under:",
    '',
    mdTable(
      [
        'listings',
        'bound',
        'feedsync: run, wall/bound (target)',
        'bare client: creates, wall/bound',
        "host's floor: bare client at a latency-only server, wall/bound",
        'feedsync / bare',
      ],
      out,
      new Set([0, 1, 2, 3, 4, 5]),
    ),
    '',
  ];
}

/** feedsync beside the naive scripts, per scenario: their calls and time as multiples of feedsync's. */
function peerMarkdown(rows: readonly Row[]): string[] {
  const out: string[][] = [];
  for (const r of rows.filter(
    (x) => x.tool !== FEEDSYNC && x.tool !== BARE && x.tool !== BARE_WRITE && x.tool !== COMMAND,
  )) {
    const ours = rows.find((x) => x.tool === FEEDSYNC && x.n === r.n && x.scenario === r.scenario);
    if (!ours) continue;
    out.push([
      num(r.n),
      r.scenario,
      r.tool,
      `${(r.calls / ours.calls).toFixed(1)}×`,
      `${(r.wallMs / ours.wallMs).toFixed(1)}×`,
    ]);
  }
  if (!out.length) return [];
  return [
    "The naive scripts (`test/bench/naive-peers.ts`, same emulator, feed and concurrency) as multiples of feedsync's calls and wall:",
    '',
    mdTable(['listings', 'scenario', 'script', 'calls', 'wall'], out, new Set([0, 3, 4])),
    '',
  ];
}
