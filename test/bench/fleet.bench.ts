// The fleet: many feeds and chatbots against one emulator (its own process, 2 ms a request). Three
// cases, in this order (BENCH_FLEET_CASES, default `fanout,many,workers`):
//   fanout, many: the chatbot as the unit of sync (issue 26), run as `feedsync sync` runs them
//     (fleet-chatbots.ts): one feed routed to 50 chatbots by agent (one pull a run, calls = the
//     chatbots' pages + changed writes), and 10 feeds per chatbot (list calls = each chatbot's pages
//     once). List calls, all calls and feed pulls beside their minimum, wall, peak RSS.
//   workers: hundreds of feeds on a few workers (issue 11): FEEDS feeds (default 300) on CHATBOTS
//     chatbots (30), LISTINGS listings each (1,000), synced by three `feedsync worker` processes and
//     one shared Redis; then the same by one worker. Every feed has the same cron (one that does
//     not fire during the bench), so a tick is the jobs the worker's schedulers add when it comes
//     (queue/schedules.ts syncSchedules: one job per chatbot, running its feeds); each tick
//     enqueues those and waits for all.
//       tick 1 (3 workers): first sync, every listing created
//       ticks 2-3 (3 workers) and 4-5 (1 worker): nothing changed, every feed read and compared
//     Checks: every feed ran once a tick, no chatbot was synced by two runs at once (report times),
//     the busiest second of service calls stayed within api.ratePerSecond (the emulator's request
//     log); prints listings/s, calls, list calls beside their minimum (each chatbot's pages once),
//     peak RSS per worker per tick and the ratio of one worker to three.
//   npm run bench -- fleet
//   BENCH_FLEET_FEEDS=60 BENCH_FLEET_LISTINGS=200 npm run bench -- fleet     (a smaller fleet)
//   BENCH_FLEET_CASES=fanout,many BENCH_FANOUT_RECORDS=2000 BENCH_FANOUT_CHATBOTS=10 BENCH_MANY_FEEDS=3 BENCH_MANY_CHATBOTS=4 npm run bench -- fleet
import { fork } from 'node:child_process';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { loadConfig } from '../../src/config/load.js';
import { closeQueues, createQueues, enqueueJob, listRuns, waitForJob } from '../../src/queue/index.js';
import { syncSchedules } from '../../src/queue/schedules.js';
import { busiestWindow, requestLog, writeDeployment } from '../queue/deploy.js';
import { dropPrefix, testRedis, uniquePrefix } from '../queue/helpers.js';
import { spawnWorker, type WorkerProcess } from '../queue/worker-process.js';
import { fanOut, manyFeeds, pagesOf, samplePeaks, stats, type CliRun, type Emulator } from './fleet-chatbots.js';
import { mdTable, num, sec, writeMdPart } from './bench-md.js';

const FEEDS = Number(process.env.BENCH_FLEET_FEEDS ?? 300);
const CHATBOTS = Math.min(FEEDS, Number(process.env.BENCH_FLEET_CHATBOTS ?? 30));
const LISTINGS = Number(process.env.BENCH_FLEET_LISTINGS ?? 1000);
const RATE = Number(process.env.BENCH_FLEET_RATE ?? 2000);
const API_CONCURRENCY = 24;
const WORKER_CONCURRENCY = 4;
const LATENCY_MS = 2;
const CASES = (process.env.BENCH_FLEET_CASES ?? 'fanout,many,workers').split(',');

interface Tick {
  workers: number;
  label: string;
  wallMs: number;
  calls: number;
  list: number;
  listMin: number;
  busiestSecond: number;
  peakRssMb: number[];
}

/** The worker case: FEEDS feeds enqueued a job each per tick on three workers, then one; returns its problems. */
async function workersCase(emuUrl: string): Promise<number> {
  const dir = await mkdtemp(join(tmpdir(), 'feedsync-fleet-'));
  const prefix = uniquePrefix();
  const redis = testRedis();
  const queues = createQueues(redis, prefix);
  // every feed on one cron that does not fire while the bench runs: the ticks below are its jobs
  const feeds = Array.from({ length: FEEDS }, (_, i) => ({
    name: `feed${i}`,
    chatbot: `SN-${i % CHATBOTS}`,
    rows: LISTINGS,
    from: 1 + Math.floor(i / CHATBOTS) * LISTINGS,
    schedule: '0 0 1 1 *',
  }));
  const file = await writeDeployment(feeds, {
    dir,
    prefix,
    apiUrl: emuUrl,
    secretKey: 'bench-secret',
    sessionKey: 'bench-session',
    api: `ratePerSecond: ${RATE}, concurrency: ${API_CONCURRENCY}, retries: 4, pageSize: 100`,
    worker: {
      concurrency: WORKER_CONCURRENCY,
      historySize: 20,
      lockDurationMs: 2000,
      stalledIntervalMs: 5000,
      shutdownTimeoutMs: 30_000,
    },
  });
  // what the workers' schedulers add when the cron comes: a job per group of feeds sharing a chatbot
  const due = syncSchedules((await loadConfig(file)).config.feeds);
  const workers: WorkerProcess[] = [];
  const ticks: Tick[] = [];
  let problems = 0;
  const fail = (msg: string) => {
    problems++;
    process.stdout.write(`PROBLEM: ${msg}\n`);
  };
  // each chatbot's pages once: its listings once every feed of it has synced (the first tick pages empty chatbots: a page each)
  const perChatbot = Array.from(
    { length: CHATBOTS },
    (_, c) => feeds.filter((f) => f.chatbot === `SN-${c}`).length * LISTINGS,
  );
  const listMin = (first: boolean) => (first ? CHATBOTS : perChatbot.reduce((n, k) => n + pagesOf(k), 0));

  async function tick(label: string, first = false): Promise<void> {
    const before = await stats({ url: emuUrl });
    const startedAt = Date.now();
    const { peaks, stop } = samplePeaks(workers.map((w) => w.proc.pid));
    const jobs = [];
    for (const s of due)
      jobs.push({ id: s.id, ...(await enqueueJob(redis, queues, 'sync', s.id, { feeds: s.feeds })) });
    for (const j of jobs) {
      const done = await waitForJob(redis, queues, 'sync', j.jobId);
      const outcome = done.state === 'completed' ? (done.returnvalue as { outcome?: string }).outcome : done.state;
      if (outcome !== 'ok') fail(`${label}: ${j.id} ended ${outcome}`);
    }
    stop();
    const wallMs = Date.now() - startedAt;
    const log = (await requestLog({ url: emuUrl })).filter((r) => r.at >= startedAt && r.path.startsWith('/chat/'));
    const after = await stats({ url: emuUrl });
    ticks.push({
      workers: workers.length,
      label,
      wallMs,
      calls: after.all - before.all,
      list: after.list - before.list,
      listMin: listMin(first),
      busiestSecond: busiestWindow(
        log.map((r) => r.at),
        1000,
      ),
      peakRssMb: peaks,
    });
    const t = ticks.at(-1)!;
    process.stdout.write(
      `${label.padEnd(34)} ${String(workers.length)} worker(s)  ${(wallMs / 1000).toFixed(1).padStart(6)} s  ` +
        `${Math.round((FEEDS * LISTINGS) / (wallMs / 1000))
          .toLocaleString('en-US')
          .padStart(8)} listings/s  ` +
        `${t.calls.toLocaleString('en-US').padStart(7)} calls  list calls ${t.list.toLocaleString('en-US')} (minimum ${t.listMin.toLocaleString('en-US')})  busiest second ${t.busiestSecond}/${RATE}  ` +
        `peak RSS ${t.peakRssMb.map((m) => `${Math.round(m)} MB`).join(', ')}\n`,
    );
    if (t.busiestSecond > RATE) fail(`${label}: ${t.busiestSecond} calls in one second, budget ${RATE}`);
  }

  try {
    process.stdout.write(
      `\nworkers: ${FEEDS} feeds on ${CHATBOTS} chatbots, ${LISTINGS.toLocaleString('en-US')} listings each; api.ratePerSecond ${RATE}, api.concurrency ${API_CONCURRENCY} (shared), worker.concurrency ${WORKER_CONCURRENCY}, emulator ${LATENCY_MS} ms/request\n`,
    );
    workers.push(...(await Promise.all([spawnWorker(file), spawnWorker(file), spawnWorker(file)])));
    await tick('tick 1: first sync (all created)', true);
    await tick('tick 2: no change');
    await tick('tick 3: no change');
    for (const w of workers.splice(0)) await w.kill('SIGTERM');
    workers.push(await spawnWorker(file));
    await tick('tick 4: no change');
    await tick('tick 5: no change');

    // Every feed ran once a tick; no two jobs writing into one chatbot overlapped in time (the feeds
    // of one job run together: a job's span is from its first feed's start to its last one's end).
    const byChatbot = new Map<string, Map<string, [number, number]>>();
    for (const f of feeds) {
      const runs = await listRuns(redis, prefix, { feed: f.name, limit: 20 });
      if (runs.length !== ticks.length) fail(`${f.name} ran ${runs.length} times in ${ticks.length} ticks`);
      for (const r of runs) {
        const rep = r.report as { startedAt?: string; finishedAt?: string };
        if (!rep.startedAt || !rep.finishedAt) continue;
        const jobs = byChatbot.get(f.chatbot) ?? new Map<string, [number, number]>();
        const [start, end] = jobs.get(r.jobId) ?? [Infinity, -Infinity];
        jobs.set(r.jobId, [Math.min(start, Date.parse(rep.startedAt)), Math.max(end, Date.parse(rep.finishedAt))]);
        byChatbot.set(f.chatbot, jobs);
      }
    }
    for (const [sn, jobs] of byChatbot) {
      const spans = [...jobs.values()];
      spans.sort((a, b) => a[0] - b[0]);
      for (let i = 1; i < spans.length; i++)
        if (spans[i]![0] < spans[i - 1]![1]) fail(`chatbot ${sn}: two runs overlapped`);
    }
    const three = ticks.filter((t) => t.workers === 3 && t.label.includes('no change'));
    const one = ticks.filter((t) => t.workers === 1);
    const mean = (ts: Tick[]) => ts.reduce((a, t) => a + t.wallMs, 0) / ts.length;
    process.stdout.write(
      `\nno-change tick: 1 worker ${(mean(one) / 1000).toFixed(1)} s, 3 workers ${(mean(three) / 1000).toFixed(1)} s: one worker / three = ${(mean(one) / mean(three)).toFixed(2)}×\n`,
    );
    const [t2, t3] = three;
    if (t2 && t3) {
      const growth = Math.max(...t3.peakRssMb) / Math.max(...t2.peakRssMb);
      process.stdout.write(
        `worker memory across no-change ticks: peak ${Math.round(Math.max(...t2.peakRssMb))} → ${Math.round(Math.max(...t3.peakRssMb))} MB (×${growth.toFixed(2)})\n`,
      );
      if (growth > 1.25) fail(`worker peak RSS grew ×${growth.toFixed(2)} between identical ticks`);
    }
    if (!problems)
      process.stdout.write('every feed synced once per tick, no chatbot synced twice at once, the rate budget held\n');
    writeMdPart(workersMarkdown(ticks, problems, mean(one) / mean(three)));
    return problems;
  } finally {
    for (const w of workers) await w.kill('SIGTERM');
    await closeQueues(queues);
    await dropPrefix(redis, prefix);
    await redis.quit();
    await rm(dir, { recursive: true, force: true });
  }
}

/** The workers' table of docs/benchmarks.md: each tick, its list calls beside their minimum and its busiest second beside the budget. */
function workersMarkdown(ticks: readonly Tick[], problems: number, oneOverThree: number): string {
  const rows = ticks.map((t) => [
    t.label.replace(/^tick (\d+): /, '$1: '),
    String(t.workers),
    sec(t.wallMs),
    num((FEEDS * LISTINGS) / (t.wallMs / 1000)),
    num(t.calls),
    `${num(t.list)} (${num(t.listMin)}) ${t.list === t.listMin ? '✓' : '✗'}`,
    `${num(t.busiestSecond)} ${t.busiestSecond <= RATE ? '✓' : '✗'}`,
    t.peakRssMb.map((m) => `${Math.round(m)}`).join(', ') + ' MB',
  ]);
  return [
    `**Workers.** ${num(FEEDS)} feeds on ${num(CHATBOTS)} chatbots (${FEEDS / CHATBOTS} feeds a chatbot), ${num(LISTINGS)} listings each, synced by three \`feedsync worker\` processes on one Redis, then by one; ` +
      `\`api.ratePerSecond\` ${num(RATE)} and \`api.concurrency\` ${API_CONCURRENCY} for the whole deployment, \`worker.concurrency\` ${WORKER_CONCURRENCY}; the emulator at ${LATENCY_MS} ms a request. ` +
      `A tick enqueues the jobs the workers' schedulers add (one a chatbot) and waits for all. ` +
      `${problems ? `**${problems} problem(s)** (see the output).` : 'Checked: every feed ran once a tick, no two jobs writing into one chatbot overlapped, the busiest second stayed within the budget, worker peak RSS grew less than 1.25× between identical ticks.'}`,
    '',
    mdTable(
      [
        'tick',
        'workers',
        'wall',
        'listings/s',
        'calls',
        'list calls (minimum)',
        `busiest second (budget ${num(RATE)})`,
        'peak RSS per worker',
      ],
      rows,
      new Set([1, 2, 3, 4, 5, 6]),
    ),
    '',
    `Mean no-change tick: one worker's wall / three workers' = ${oneOverThree.toFixed(2)}×.`,
  ].join('\n');
}

/** The chatbot cases' table of docs/benchmarks.md: each run's calls and pulls beside their minimum. */
function chatbotsMarkdown(runs: readonly CliRun[]): string {
  const ok = (got: number, min: number) => `${num(got)} (${num(min)}) ${got === min ? '✓' : '✗'}`;
  const rows = runs.map((r) => {
    const [kase, run] = r.label.split(': ');
    return [
      kase!,
      run ?? '',
      sec(r.wallMs),
      sec(r.spanMs),
      ok(r.list, r.listMin),
      ok(r.all, r.allMin),
      ok(r.pulls, r.pullsMin),
      `${Math.round(r.peakRssMb)} MB`,
    ];
  });
  return [
    '### Fleet',
    '',
    `\`test/bench/fleet.bench.ts\`: the emulator in its own process at ${LATENCY_MS} ms a request, PageSize 100. ` +
      '**The chatbot as the unit**: each run is `feedsync sync --config … --json` as a process of its own (a first run, then a no-change rerun in a new process); ' +
      "minimum calls: each chatbot's pages once (an empty chatbot one page) + changed writes; one pull a feed. Wall is the process's, start included; sync is the first lane's start to the last one's end.",
    '',
    mdTable(
      [
        'case',
        'run',
        'wall',
        'sync',
        'list calls (minimum)',
        'all calls (minimum)',
        'feed pulls (minimum)',
        'peak RSS',
      ],
      rows,
      new Set([2, 3, 4, 5, 6, 7]),
    ),
  ].join('\n');
}

async function main(): Promise<void> {
  const emuProc = fork(fileURLToPath(new URL('./sync-emulator.ts', import.meta.url)), [String(LATENCY_MS)], {
    execArgv: ['--import', 'tsx'],
  });
  const emu: Emulator = {
    url: await new Promise<string>((resolve) => emuProc.once('message', (m: { url: string }) => resolve(m.url))),
  };
  let problems = 0;
  const count = (runs: CliRun[]) => {
    problems += runs.reduce((n, r) => n + r.problems.length, 0);
    return runs;
  };
  try {
    process.stdout.write(`emulator ${LATENCY_MS} ms/request, its own process\n`);
    const runs: CliRun[] = [];
    if (CASES.includes('fanout')) runs.push(...count(await fanOut(emu)));
    if (CASES.includes('many')) runs.push(...count(await manyFeeds(emu)));
    if (runs.length) writeMdPart(chatbotsMarkdown(runs));
    else writeMdPart('### Fleet');
    if (CASES.includes('workers')) problems += await workersCase(emu.url);
    process.stdout.write(problems ? `\n${problems} problem(s)\n` : '\nno problems\n');
    process.exitCode = problems ? 1 : 0;
  } finally {
    emuProc.disconnect();
  }
}

await main();
