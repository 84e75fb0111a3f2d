// The fleet in ticks (issue 55 points 5 and 7): N chatbots fed by M MLS-like feeds (each a CSV
// over HTTP routed by office to N/M chatbots: feeds[].chatbots with where), synced by W `feedsync
// worker` processes on one Redis sharing one API budget (api.ratePerSecond, api.concurrency),
// against the emulator (its own process) at a latency. A tick enqueues the jobs the workers'
// schedulers add (one per feed: its chatbots are its own) and waits for all. Tick 1 is the first
// sync (every listing created); each later tick changes 1% of every feed's listings (a price), the
// SaleType of none. Printed per tick: calls beside the minimum (each chatbot's pages once + the
// changed writes), wall beside the budget bound (the minimum calls / ratePerSecond), each worker's
// RSS at the tick's end and its peak during it; then each worker's RSS growth from tick 3 to the
// last (target: at most 10%, issue 55 point 5).
//   npm run bench -- fleet-ticks                           (default: 30 × 3 × 3, a few minutes here)
//   BENCH_TICKS_CHATBOTS=500 BENCH_TICKS_FEEDS=5 BENCH_TICKS_LISTINGS=50000 BENCH_TICKS_RATE=200 npm run bench -- fleet-ticks
// Knobs: BENCH_TICKS_CHATBOTS (N, 30), BENCH_TICKS_FEEDS (M, 3), BENCH_TICKS_WORKERS (W, 3),
// BENCH_TICKS_LISTINGS (listings a feed, 3,000), BENCH_TICKS_RATE (api.ratePerSecond, 400),
// BENCH_TICKS_LATENCY (emulator ms a request, 10), BENCH_TICKS_TICKS (10), BENCH_TICKS_CHANGE (1: 1% changed
// a tick after the first; 0: no change, issue 55 point 6's no-change tick).
import { fork } from 'node:child_process';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { loadConfig } from '../../src/config/load.js';
import { closeQueues, createQueues, enqueueJob, waitForJob } from '../../src/queue/index.js';
import { syncSchedules } from '../../src/queue/schedules.js';
import { dropPrefix, REDIS_URL, testRedis, uniquePrefix } from '../queue/helpers.js';
import { spawnWorker, type WorkerProcess } from '../queue/worker-process.js';
import { COLUMNS, csv, row, type Row } from '../sync/helpers/feed.js';
import { mdTable, num, sec, writeMdPart } from './bench-md.js';
import { pagesOf, rssMb, samplePeaks, stats } from './fleet-chatbots.js';

const env = (name: string, fallback: number) => Number(process.env[`BENCH_TICKS_${name}`] ?? fallback);
const N = env('CHATBOTS', 30);
const M = Math.min(N, env('FEEDS', 3));
const W = env('WORKERS', 3);
const LISTINGS = env('LISTINGS', 3000);
const RATE = env('RATE', 400);
const LATENCY_MS = env('LATENCY', 10);
const TICKS = Math.max(3, env('TICKS', 10));
/** 1: each tick after the first changes 1% of the listings; 0: none */
const CHANGE = env('CHANGE', 1) > 0;
const API_CONCURRENCY = 16;
const RSS_GROWTH_MAX = 0.1;

interface Tick {
  label: string;
  wallMs: number;
  calls: number;
  minCalls: number;
  rssMb: number[];
  peakMb: number[];
  /** each worker's V8 heap in use / its heap's size / external memory (MB), from its /metrics (prom-client's default metrics) */
  heapMb: Array<{ used: number; total: number; external: number }>;
}

/** A worker's heap figures, from the process metrics its /metrics serves. */
async function heapOf(w: WorkerProcess): Promise<{ used: number; total: number; external: number }> {
  const text = await (await fetch(`http://127.0.0.1:${w.port}/metrics`)).text();
  const mb = (name: string) => Number(new RegExp(`^${name} (\\S+)$`, 'm').exec(text)?.[1] ?? NaN) / 2 ** 20;
  return {
    used: mb('nodejs_heap_size_used_bytes'),
    total: mb('nodejs_heap_size_total_bytes'),
    external: mb('nodejs_external_memory_bytes'),
  };
}

/** Feed f's chatbots: N/M of them (the first ones take the remainder), each an office of the feed. */
const chatbotsOf = (f: number) => {
  const per = Math.floor(N / M) + (f < N % M ? 1 : 0);
  const from = f * Math.floor(N / M) + Math.min(f, N % M);
  return Array.from({ length: per }, (_, i) => from + i);
};

/** Tick t's body of feed f: record i goes to office i % its chatbots; its price changed at tick (i % 100) once t reaches it. */
function feedBody(f: number, t: number): string {
  const bots = chatbotsOf(f);
  const rows: Row[] = [];
  for (let j = 0; j < LISTINGS; j++) {
    const i = f * LISTINGS + j + 1;
    const changedAt = i % 100;
    const bump = CHANGE && t >= 2 && changedAt >= 2 && changedAt <= t ? 1000 * changedAt : 0;
    rows.push({ ...row(i, { SalePrice: 300000 + i * 1000 + bump }) });
  }
  const lines = csv(rows).trimEnd().split('\n');
  return (
    [`${lines[0]},Office`, ...lines.slice(1).map((l, j) => `${l},office-${bots[j % bots.length]}`)].join('\n') + '\n'
  );
}

/** Listings changed at tick t (t ≥ 2): those whose i % 100 is t. */
function changedAt(t: number): number {
  if (t < 2 || !CHANGE) return 0;
  let n = 0;
  for (let i = 1; i <= M * LISTINGS; i++) if (i % 100 === t % 100 && t <= 99) n++;
  return n;
}

/** Each chatbot's listings: a feed's listings dealt round its chatbots. */
function perChatbot(): number[] {
  const out: number[] = [];
  for (let f = 0; f < M; f++) {
    const bots = chatbotsOf(f);
    bots.forEach((_, k) => out.push(Math.floor(LISTINGS / bots.length) + (k < LISTINGS % bots.length ? 1 : 0)));
  }
  return out;
}

async function main(): Promise<number> {
  const emuProc = fork(fileURLToPath(new URL('./sync-emulator.ts', import.meta.url)), [String(LATENCY_MS)], {
    execArgv: ['--import', 'tsx'],
  });
  const emuUrl = await new Promise<string>((resolve) =>
    emuProc.once('message', (m: { url: string }) => resolve(m.url)),
  );
  let tick = 1;
  const server = createServer((req, res) => {
    const f = Number(/^\/feed(\d+)\.csv$/.exec(req.url ?? '')?.[1] ?? NaN);
    if (!(f >= 0 && f < M)) return void res.writeHead(404).end();
    res.writeHead(200, { 'content-type': 'text/csv' }).end(feedBody(f, tick));
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const feedsAt = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  const dir = await mkdtemp(join(tmpdir(), 'feedsync-fleet-ticks-'));
  const prefix = uniquePrefix();
  const redis = testRedis();
  const queues = createQueues(redis, prefix);
  const workers: WorkerProcess[] = [];
  let problems = 0;
  const fail = (msg: string) => {
    problems++;
    process.stdout.write(`PROBLEM: ${msg}\n`);
  };
  try {
    const mapping = `{ fields: { ${COLUMNS.map((c) => `${c}: ${c}`).join(', ')} } }`;
    const feeds = Array.from({ length: M }, (_, f) => {
      const routes = chatbotsOf(f).map((c) => `      - { serialNumber: SN-${c}, where: { Office: [office-${c}] } }\n`);
      return `  - name: mls${f}\n    chatbots:\n${routes.join('')}    source: { kind: csv, url: "${feedsAt}/feed${f}.csv" }\n    mapping: ${mapping}\n    schedule: { cron: "0 0 1 1 *" }\n`;
    });
    const file = join(dir, 'feedsync.yaml');
    await writeFile(
      file,
      `api: { baseUrl: "${emuUrl}", secretKey: bench-secret, sessionKey: bench-session, ratePerSecond: ${RATE}, concurrency: ${API_CONCURRENCY}, retries: 4, pageSize: 100 }
redis: { url: "${REDIS_URL}", prefix: ${prefix} }
worker: { concurrency: 2, historySize: 20, watchdogSeconds: 600, minScheduleIntervalSeconds: 1 }
feeds:
${feeds.join('')}`,
    );
    const due = syncSchedules((await loadConfig(file)).config.feeds);
    const pages = perChatbot().reduce((n, k) => n + pagesOf(k), 0);
    process.stdout.write(
      `fleet ticks: ${N} chatbots × ${M} feeds (${num(LISTINGS)} listings each, routed by office) × ${W} workers; ` +
        `api.ratePerSecond ${RATE}, api.concurrency ${API_CONCURRENCY} (shared), worker.concurrency 2, emulator ${LATENCY_MS} ms/request; ${due.length} jobs a tick\n`,
    );
    workers.push(...(await Promise.all(Array.from({ length: W }, () => spawnWorker(file)))));
    const ticks: Tick[] = [];
    for (tick = 1; tick <= TICKS; tick++) {
      const minCalls = tick === 1 ? N + M * LISTINGS : pages + changedAt(tick);
      const before = await stats({ url: emuUrl });
      const startedAt = Date.now();
      const { peaks, stop } = samplePeaks(workers.map((w) => w.proc.pid));
      const jobs = [];
      for (const s of due) jobs.push(await enqueueJob(redis, queues, 'sync', `${s.id}:${tick}`, { feeds: s.feeds }));
      for (const j of jobs) {
        const done = await waitForJob(redis, queues, 'sync', j.jobId);
        const outcome = done.state === 'completed' ? (done.returnvalue as { outcome?: string }).outcome : done.state;
        if (outcome !== 'ok') fail(`tick ${tick}: job ${j.jobId} ended ${outcome}`);
      }
      stop();
      const wallMs = Date.now() - startedAt;
      const calls = (await stats({ url: emuUrl })).all - before.all;
      const t: Tick = {
        label: tick === 1 ? '1: first sync' : `${tick}: ${CHANGE ? '1% changed' : 'no change'}`,
        wallMs,
        calls,
        minCalls,
        rssMb: workers.map((w) => rssMb(w.proc.pid)),
        peakMb: peaks,
        heapMb: await Promise.all(workers.map(heapOf)),
      };
      ticks.push(t);
      const bound = (minCalls / RATE) * 1000;
      process.stdout.write(
        `tick ${t.label.padEnd(16)} calls ${num(calls).padStart(7)} (minimum ${num(minCalls)})  wall ${sec(wallMs).padStart(7)} ` +
          `(budget bound ${sec(bound)}: ×${(wallMs / bound).toFixed(2)})  RSS ${t.rssMb.map((m) => Math.round(m)).join(' / ')} MB ` +
          `(peaks ${peaks.map((m) => Math.round(m)).join(' / ')}); heap used/size/external ${t.heapMb.map((h) => `${Math.round(h.used)}/${Math.round(h.total)}/${Math.round(h.external)}`).join(' · ')} MB\n`,
      );
      if (calls !== minCalls) fail(`tick ${tick}: ${calls} calls, minimum ${minCalls}`);
    }
    const growth = workers.map((_, i) => ticks.at(-1)!.rssMb[i]! / ticks[2]!.rssMb[i]! - 1);
    process.stdout.write(
      `RSS growth from tick 3 to tick ${TICKS}, per worker: ${growth.map((g) => `${(g * 100).toFixed(1)}%`).join(', ')} (target ≤ ${RSS_GROWTH_MAX * 100}%)\n`,
    );
    for (const [i, g] of growth.entries())
      if (g > RSS_GROWTH_MAX) fail(`worker ${i + 1}'s RSS grew ${(g * 100).toFixed(1)}% from tick 3 to tick ${TICKS}`);
    writeMdPart(markdown(ticks, growth, problems));
  } finally {
    for (const w of workers) await w.kill('SIGTERM');
    await closeQueues(queues);
    await dropPrefix(redis, prefix);
    await redis.quit();
    server.close();
    emuProc.disconnect();
    await rm(dir, { recursive: true, force: true });
  }
  process.stdout.write(problems ? `\n${problems} problem(s)\n` : '\nno problems\n');
  return problems;
}

function markdown(ticks: readonly Tick[], growth: readonly number[], problems: number): string {
  const rows = ticks.map((t) => {
    const bound = (t.minCalls / RATE) * 1000;
    return [
      t.label,
      `${num(t.calls)} (${num(t.minCalls)}) ${t.calls === t.minCalls ? '✓' : '✗'}`,
      `${sec(t.wallMs)} (${sec(bound)}) ×${(t.wallMs / bound).toFixed(2)}`,
      t.rssMb.map((m) => Math.round(m)).join(' / ') + ' MB',
      t.peakMb.map((m) => Math.round(m)).join(' / ') + ' MB',
      t.heapMb.map((h) => `${Math.round(h.used)}/${Math.round(h.total)}`).join(' · ') + ' MB',
    ];
  });
  return [
    '### Fleet ticks',
    '',
    `\`test/bench/fleet-ticks.bench.ts\` (issue 55 points 5, 7): ${N} chatbots fed by ${M} feeds of ${num(LISTINGS)} listings (CSV over HTTP, each routed by office to ${Math.round(N / M)} chatbots), ` +
      `${W} \`feedsync worker\` processes on one Redis sharing \`api.ratePerSecond\` ${RATE} and \`api.concurrency\` ${API_CONCURRENCY}, \`worker.concurrency\` 2; the emulator at ${LATENCY_MS} ms a request. ` +
      `A tick enqueues a job per feed and waits for all; after the first, each changes 1% of the listings. Minimum calls: each chatbot's pages once + the changed writes; budget bound: minimum calls / ratePerSecond. ` +
      `RSS: each worker's at the tick's end, and its peak during the tick (sampled every 250 ms). ` +
      `${problems ? `**${problems} problem(s)** (see the output).` : 'Every job ended ok.'}`,
    '',
    mdTable(
      [
        'tick',
        'calls (minimum)',
        'wall (budget bound)',
        'RSS at the end, per worker',
        'peak RSS, per worker',
        'heap used/size, per worker',
      ],
      rows,
      new Set([1, 2, 3, 4, 5]),
    ),
    '',
    `RSS growth from tick 3 to tick ${ticks.length}, per worker: ${growth.map((g) => `${(g * 100).toFixed(1)}%`).join(', ')} (target: at most ${RSS_GROWTH_MAX * 100}%).`,
  ].join('\n');
}

process.exitCode = (await main()) ? 1 : 0;
