// The fleet benchmark's chatbot cases (issue 26), run by fleet.bench.ts: the chatbot as the unit of
// sync, counted. Each case runs `feedsync sync --config … --json` (bin/feedsync.js) as a process of
// its own, as cron runs it (the repository's build, dist/bundle/, as users run it: after `npm run
// build`, or the sources through tsx once one is newer): runs/foreground.ts groups the config's lanes by chatbot and feed and
// runs each group with runLanes, all of a chatbot's feeds together. A first run (every listing
// created), then a no-change rerun in a new process (its page echo read back from the file the run
// before it left). The feeds are CSV over HTTP from a server here that counts each feed's pulls.
//   fan-out:    one feed of FANOUT_RECORDS records routed by agent to FANOUT_CHATBOTS chatbots
//               (feeds[].chatbots with where): one pull per run; calls = the chatbots' pages + writes
//   many feeds: MANY_FEEDS feeds per chatbot on MANY_CHATBOTS chatbots, MANY_LISTINGS listings a
//               feed: list calls = each chatbot's pages once
// Printed per run: wall (the process, start-up included) and the sync's span (first lane's start to
// last lane's end, from the reports), list calls and all calls beside their minimum (list pages +
// changed writes), the lanes' report calls summed (they add up to all calls), feed pulls beside
// their minimum, peak RSS. BENCH_PROF=dir: a CPU profile of each `feedsync sync` process, written into dir.
import { spawn } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import type { SyncReport } from '../../src/sync/index.js';
import { freshFetch } from '../helpers/fresh-fetch.js';
import { COLUMNS, csv, rows } from '../sync/helpers/feed.js';

const FANOUT_RECORDS = Number(process.env.BENCH_FANOUT_RECORDS ?? 20_000);
const FANOUT_CHATBOTS = Number(process.env.BENCH_FANOUT_CHATBOTS ?? 50);
const MANY_FEEDS = Number(process.env.BENCH_MANY_FEEDS ?? 10);
const MANY_CHATBOTS = Number(process.env.BENCH_MANY_CHATBOTS ?? 20);
const MANY_LISTINGS = Number(process.env.BENCH_MANY_LISTINGS ?? 100);
const PAGE = 100;
const API = `concurrency: 16, ratePerSecond: 5000, retries: 4, pageSize: ${PAGE}`;
const CLI = fileURLToPath(new URL('../../bin/feedsync.js', import.meta.url));
const PEAK_RSS = pathToFileURL(fileURLToPath(new URL('./peak-rss.mjs', import.meta.url))).href;
const MAPPING = `{ fields: { ${COLUMNS.map((c) => `${c}: ${c}`).join(', ')} } }`;

/** Pages one paging of n listings takes: until a short page (a full last page needs an empty one after it). */
export const pagesOf = (n: number) => Math.floor(n / PAGE) + 1;

/** A process's resident memory now, in MB (/proc: Linux); 0 once it is gone. */
export function rssMb(pid: number | undefined): number {
  if (!pid) return 0;
  try {
    const m = /VmRSS:\s+(\d+) kB/.exec(readFileSync(`/proc/${pid}/status`, 'utf8'));
    return m ? Number(m[1]) / 1024 : 0;
  } catch {
    return 0;
  }
}

/** The peak RSS of each process (MB), sampled every 250 ms until `stop`. */
export function samplePeaks(pids: ReadonlyArray<number | undefined>): { peaks: number[]; stop: () => void } {
  const peaks = pids.map(() => 0);
  const timer = setInterval(() => pids.forEach((pid, i) => (peaks[i] = Math.max(peaks[i]!, rssMb(pid)))), 250);
  return { peaks, stop: () => clearInterval(timer) };
}

export interface Emulator {
  url: string;
}

/** One run's figures, as printed. */
export interface CliRun {
  label: string;
  wallMs: number;
  spanMs: number;
  list: number;
  listMin: number;
  all: number;
  allMin: number;
  laneCalls: number;
  pulls: number;
  pullsMin: number;
  peakRssMb: number;
  problems: string[];
}

interface Stats {
  requests: Record<string, Record<string, number>>;
  total: number;
}

export async function stats(emu: Emulator): Promise<{ list: number; all: number }> {
  const s = (await (await freshFetch(`${emu.url}/__emulator/stats`)).json()) as Stats;
  return {
    list: Object.values(s.requests['/chat/Chatbot/RealEstateList'] ?? {}).reduce((a, b) => a + b, 0),
    all: s.total,
  };
}

/** CSV feeds over HTTP, one path each, counting each path's requests. */
async function startFeeds(
  bodies: Map<string, string>,
): Promise<{ url: (name: string) => string; pulls: () => number; close: () => Promise<void> }> {
  let pulls = 0;
  const server = createServer((req, res) => {
    const body = bodies.get((req.url ?? '').slice(1));
    pulls++;
    if (body === undefined) res.writeHead(404).end();
    else res.writeHead(200, { 'content-type': 'text/csv' }).end(body);
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  return {
    url: (name) => `${base}/${name}`,
    pulls: () => pulls,
    close: () => new Promise<void>((resolve) => server.close(() => resolve())),
  };
}

/** `feedsync sync --config file --json` in a process of its own: its reports, exit status and peak RSS. */
async function runCli(
  file: string,
): Promise<{ status: number | null; reports: SyncReport[]; peakRssMb: number; wallMs: number; stderr: string }> {
  const peakFile = `${file}.peak-rss`;
  const t0 = performance.now();
  const prof = process.env.BENCH_PROF ? ['--cpu-prof', '--cpu-prof-dir', process.env.BENCH_PROF] : [];
  const child = spawn(process.execPath, [...prof, '--import', PEAK_RSS, CLI, 'sync', '--config', file, '--json'], {
    env: { ...process.env, BENCH_PEAK_RSS_FILE: peakFile, LOG_LEVEL: 'warn' },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  const out: Buffer[] = [];
  const err: Buffer[] = [];
  child.stdout.on('data', (b: Buffer) => out.push(b));
  child.stderr.on('data', (b: Buffer) => err.push(b));
  const status = await new Promise<number | null>((resolve) => child.once('close', resolve));
  const wallMs = performance.now() - t0;
  const text = Buffer.concat(out).toString('utf8');
  const reports = text.trim() ? (JSON.parse(text) as { reports: SyncReport[] }).reports : [];
  const peakKb = Number(await readFile(peakFile, 'utf8').catch(() => '0'));
  return { status, reports, peakRssMb: peakKb / 1024, wallMs, stderr: Buffer.concat(err).toString('utf8') };
}

async function measure(
  emu: Emulator,
  file: string,
  pulls: () => number,
  label: string,
  min: { list: number; all: number; pulls: number },
): Promise<CliRun> {
  const before = await stats(emu);
  const pulled = pulls();
  const r = await runCli(file);
  const after = await stats(emu);
  const problems: string[] = [];
  if (r.status !== 0)
    problems.push(`exit status ${r.status}${r.stderr ? `: ${r.stderr.trim().split('\n').slice(-3).join(' | ')}` : ''}`);
  const notOk = r.reports.filter((x) => x.outcome !== 'ok');
  if (notOk.length)
    problems.push(
      `${notOk.length} lane(s) not ok: ${notOk.slice(0, 3).map((x) => `${x.feed} ${x.outcome} ${x.message ?? ''}`)}`,
    );
  const run: CliRun = {
    label,
    wallMs: r.wallMs,
    spanMs: r.reports.length
      ? Math.max(...r.reports.map((x) => Date.parse(x.finishedAt))) -
        Math.min(...r.reports.map((x) => Date.parse(x.startedAt)))
      : 0,
    list: after.list - before.list,
    listMin: min.list,
    all: after.all - before.all,
    allMin: min.all,
    laneCalls: r.reports.reduce((n, x) => n + x.calls.total, 0),
    pulls: pulls() - pulled,
    pullsMin: min.pulls,
    peakRssMb: r.peakRssMb,
    problems,
  };
  if (run.list !== run.listMin) problems.push(`list calls ${run.list}, minimum ${run.listMin}`);
  if (run.all !== run.allMin) problems.push(`calls ${run.all}, minimum ${run.allMin}`);
  if (run.laneCalls !== run.all)
    problems.push(`the lanes' reports count ${run.laneCalls} calls, the run made ${run.all}`);
  if (run.pulls !== run.pullsMin) problems.push(`feed pulls ${run.pulls}, one per feed: ${run.pullsMin}`);
  const n = (x: number) => x.toLocaleString('en-US');
  process.stdout.write(
    `${label.padEnd(30)} wall ${(run.wallMs / 1000).toFixed(1).padStart(5)} s (sync ${(run.spanMs / 1000).toFixed(1)} s)  ` +
      `list calls ${n(run.list)} (minimum ${n(run.listMin)})  all calls ${n(run.all)} (minimum ${n(run.allMin)}; lanes' reports ${n(run.laneCalls)})  ` +
      `feed pulls ${run.pulls} (minimum ${run.pullsMin})  peak RSS ${Math.round(run.peakRssMb)} MB\n`,
  );
  for (const p of problems) process.stdout.write(`PROBLEM: ${label}: ${p}\n`);
  return run;
}

function configYaml(emu: Emulator, feeds: string[]): string {
  return `api: { baseUrl: "${emu.url}", secretKey: bench-secret, sessionKey: bench-session, ${API} }\nfeeds:\n${feeds.join('')}`;
}

/** fan-out: one feed routed by agent (record i goes to agent i % chatbots) to each agent's chatbot. */
export async function fanOut(emu: Emulator): Promise<CliRun[]> {
  const dir = await mkdtemp(join(tmpdir(), 'feedsync-fanout-'));
  const lines = csv(rows(FANOUT_RECORDS)).trimEnd().split('\n');
  const body =
    [`${lines[0]},Agent`, ...lines.slice(1).map((l, i) => `${l},agent-${i % FANOUT_CHATBOTS}`)].join('\n') + '\n';
  const server = await startFeeds(new Map([['brokerage.csv', body]]));
  try {
    const routes = Array.from(
      { length: FANOUT_CHATBOTS },
      (_, c) => `      - { serialNumber: SN-AGENT-${c}, where: { Agent: [agent-${c}] } }\n`,
    );
    const file = join(dir, 'feedsync.yaml');
    await writeFile(
      file,
      configYaml(emu, [
        `  - name: brokerage\n    chatbots:\n${routes.join('')}    source: { kind: csv, url: "${server.url('brokerage.csv')}" }\n    mapping: ${MAPPING}\n`,
      ]),
    );
    const perChatbot = Array.from(
      { length: FANOUT_CHATBOTS },
      (_, c) => Math.floor(FANOUT_RECORDS / FANOUT_CHATBOTS) + (c < FANOUT_RECORDS % FANOUT_CHATBOTS ? 1 : 0),
    );
    const pages = perChatbot.reduce((n, k) => n + pagesOf(k), 0);
    process.stdout.write(
      `fan-out: one feed of ${FANOUT_RECORDS.toLocaleString('en-US')} records routed by agent to ${FANOUT_CHATBOTS} chatbots (feeds[].chatbots with where); \`feedsync sync\`, a process a run; PageSize ${PAGE}\n`,
    );
    // the first run pages empty chatbots: one page each
    return [
      await measure(emu, file, server.pulls, 'fan-out: first run', {
        list: FANOUT_CHATBOTS,
        all: FANOUT_CHATBOTS + FANOUT_RECORDS,
        pulls: 1,
      }),
      await measure(emu, file, server.pulls, 'fan-out: no-change rerun', { list: pages, all: pages, pulls: 1 }),
    ];
  } finally {
    await server.close();
    await rm(dir, { recursive: true, force: true });
  }
}

/** many feeds: MANY_FEEDS feeds into each chatbot, every feed's MLS numbers its own. */
export async function manyFeeds(emu: Emulator): Promise<CliRun[]> {
  const dir = await mkdtemp(join(tmpdir(), 'feedsync-many-'));
  const bodies = new Map<string, string>();
  const feeds: string[] = [];
  const server = await startFeeds(bodies);
  try {
    for (let c = 0; c < MANY_CHATBOTS; c++) {
      for (let f = 0; f < MANY_FEEDS; f++) {
        const name = `c${c}-f${f}`;
        bodies.set(`${name}.csv`, csv(rows(MANY_LISTINGS, 1 + f * MANY_LISTINGS)));
        feeds.push(
          `  - name: ${name}\n    chatbot: SN-MANY-${c}\n    source: { kind: csv, url: "${server.url(`${name}.csv`)}" }\n    mapping: ${MAPPING}\n`,
        );
      }
    }
    const file = join(dir, 'feedsync.yaml');
    await writeFile(file, configYaml(emu, feeds));
    const listings = MANY_CHATBOTS * MANY_FEEDS * MANY_LISTINGS;
    const pages = MANY_CHATBOTS * pagesOf(MANY_FEEDS * MANY_LISTINGS);
    process.stdout.write(
      `many feeds: ${MANY_FEEDS} feeds per chatbot on ${MANY_CHATBOTS} chatbots, ${MANY_LISTINGS} listings a feed; \`feedsync sync\` (every feed of a chatbot in one runLanes), a process a run\n`,
    );
    const feedCount = MANY_CHATBOTS * MANY_FEEDS;
    return [
      await measure(emu, file, server.pulls, 'many feeds: first run', {
        list: MANY_CHATBOTS,
        all: MANY_CHATBOTS + listings,
        pulls: feedCount,
      }),
      await measure(emu, file, server.pulls, 'many feeds: no-change rerun', {
        list: pages,
        all: pages,
        pulls: feedCount,
      }),
    ];
  } finally {
    await server.close();
    await rm(dir, { recursive: true, force: true });
  }
}
