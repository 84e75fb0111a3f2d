// Where a routed feed's CPU goes (issue 55 point 2, "measure whether spreading lanes over workers
// pays"): one feed of RECORDS records routed by office to CHATBOTS chatbots (a lane each), synced
// in this process by runSync with the first L of its lanes, L = 1 and L = CHATBOTS, the emulator in
// a process of its own. The feed is read, parsed and routed whole whatever L is (a record routed to
// no lane of the run is not mapped); paging, mapping, planning, writing and committing are each
// lane's. So CPU(L) ≈ read + L × lane: two runs give both. Each L runs a first sync (every listing
// created), a no-change rerun and a 1% tick (1% of the records' prices changed), on a fresh store
// and fresh chatbots. Printed: this process's CPU (user + system) and wall per run, the emulator's
// CPU apart, and the fit. `npm run bench -- lane-cpu`; BENCH_LANE_RECORDS, BENCH_LANE_CHATBOTS.
import { fork } from 'node:child_process';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { ApiConfig, FeedConfig } from '../../src/config/schema.js';
import { createApiClient } from '../../src/api/client.js';
import { silentLogger } from '../../src/log.js';
import { createMemoryStore } from '../../src/state/memory-store.js';
import { lanesOf, runSync } from '../../src/sync/index.js';
import { freshFetch } from '../helpers/fresh-fetch.js';
import { COLUMNS, csv, rows } from '../sync/helpers/feed.js';
import { writeMdPart } from './bench-md.js';

const RECORDS = Number(process.env.BENCH_LANE_RECORDS ?? 10_000);
const CHATBOTS = Number(process.env.BENCH_LANE_CHATBOTS ?? 100);
const LATENCY_MS = 2;
const MAPPING = { fields: Object.fromEntries(COLUMNS.map((c) => [c, c])) };

/** the feed's body at tick t: record i to office i % CHATBOTS; from t 1 on, 1% of each office's prices changed */
function body(tick: number): string {
  const data = rows(RECORDS).map((r, i) =>
    tick > 0 && Math.floor(i / CHATBOTS) % 100 === tick
      ? { ...r, SalePrice: Number(r.SalePrice ?? 0) + 1000 * tick }
      : r,
  );
  const lines = csv(data).trimEnd().split('\n');
  return [`${lines[0]},Office`, ...lines.slice(1).map((l, i) => `${l},office-${i % CHATBOTS}`)].join('\n') + '\n';
}

interface Emu {
  url: string;
  cpuMs(): Promise<number>;
  close(): void;
}

async function startEmu(): Promise<Emu> {
  const proc = fork(fileURLToPath(new URL('./sync-emulator.ts', import.meta.url)), [String(LATENCY_MS)], {
    execArgv: ['--import', 'tsx'],
  });
  const url = await new Promise<string>((resolve) => proc.once('message', (m: { url: string }) => resolve(m.url)));
  return {
    url,
    cpuMs: () =>
      new Promise<number>((resolve) => {
        proc.once('message', (m: { cpuMs: number }) => resolve(m.cpuMs));
        proc.send({ cpu: true });
      }),
    close: () => proc.disconnect(),
  };
}

/** every call the emulator answered so far */
const emuCalls = async (emu: Emu) =>
  ((await (await freshFetch(`${emu.url}/__emulator/stats`)).json()) as { total: number }).total;

const cpuNow = () => {
  const { user, system } = process.cpuUsage();
  return (user + system) / 1000;
};

interface Run {
  lanes: number;
  run: string;
  cpuMs: number;
  wallMs: number;
  emuCpuMs: number;
  calls: number;
}

async function runLanes(emu: Emu, dir: string, lanesRun: number, tag: string): Promise<Run[]> {
  const feedFile = join(dir, `feed-${tag}.csv`);
  // fresh chatbots for each L: serial numbers of their own
  const feed = FeedConfig.parse({
    name: `routed-${tag}`,
    chatbots: Array.from({ length: CHATBOTS }, (_, c) => ({
      serialNumber: `SN-${tag}-${c}`,
      where: { Office: [`office-${c}`] },
    })),
    source: { kind: 'csv', path: feedFile },
    mapping: MAPPING,
  });
  const lanes = lanesOf(feed).slice(0, lanesRun);
  const store = createMemoryStore();
  const apiConfig = ApiConfig.parse({
    baseUrl: emu.url,
    secretKey: 'bench-secret',
    sessionKey: 'bench-session',
    concurrency: 16,
    ratePerSecond: 10_000,
    pageSize: 100,
  });
  const api = createApiClient({
    baseUrl: emu.url,
    secretKey: 'bench-secret',
    sessionKey: 'bench-session',
    timeoutMs: 60_000,
    concurrency: 16,
  });
  const out: Run[] = [];
  for (const [tick, run] of ['first sync', 'no-change rerun', '1% tick'].entries()) {
    await writeFile(feedFile, body(tick === 2 ? 1 : 0));
    const emu0 = await emu.cpuMs();
    const calls0 = await emuCalls(emu);
    const cpu0 = cpuNow();
    const t0 = performance.now();
    const reports = await runSync(lanes, {
      api,
      store,
      configFeeds: [feed],
      logger: silentLogger,
      baseDir: dir,
      apiConfig,
    });
    const wallMs = performance.now() - t0;
    const cpuMs = cpuNow() - cpu0;
    const bad = reports.filter((r) => r.outcome !== 'ok');
    if (bad.length) throw new Error(`${bad.length} lane(s) not ok: ${bad[0]!.summary}`);
    const made = (await emuCalls(emu)) - calls0;
    out.push({ lanes: lanesRun, run, cpuMs, wallMs, emuCpuMs: (await emu.cpuMs()) - emu0, calls: made });
  }
  return out;
}

const s = (ms: number) => `${(ms / 1000).toFixed(2)} s`;

async function main(): Promise<void> {
  const emu = await startEmu();
  const dir = await mkdtemp(join(tmpdir(), 'feedsync-lane-cpu-'));
  try {
    process.stdout.write(
      `lane CPU: one feed of ${RECORDS.toLocaleString('en-US')} records routed by office to ${CHATBOTS} chatbots; runSync in this process, emulator (${LATENCY_MS} ms) in its own; Node ${process.version}\n`,
    );
    // (a warm-up run of one lane: the modules' first compile is not a lane's cost)
    await runLanes(emu, dir, 1, 'warm');
    const one = await runLanes(emu, dir, 1, 'one');
    const all = await runLanes(emu, dir, CHATBOTS, 'all');
    const lines = [
      '### Lane CPU',
      '',
      `\`test/bench/lane-cpu.bench.ts\`: one feed of ${RECORDS.toLocaleString('en-US')} records routed by office to ${CHATBOTS} chatbots, run with its first lane and with all of them (runSync in one process, Node ${process.version}; the emulator at ${LATENCY_MS} ms in its own). CPU: the sync process's, user + system. The fit: CPU(L) = read (and the run's fixed costs) + L × a lane.`,
      '',
      '| run | lanes | CPU | wall | emulator CPU | calls |',
      '| --- | ---: | ---: | ---: | ---: | ---: |',
      ...[...one, ...all].map(
        (r) =>
          `| ${r.run} | ${r.lanes} | ${s(r.cpuMs)} | ${s(r.wallMs)} | ${s(r.emuCpuMs)} | ${r.calls.toLocaleString('en-US')} |`,
      ),
      '',
      `| run | read | a lane | ${CHATBOTS} lanes' share of the CPU | CPU / wall, ${CHATBOTS} lanes |`,
      '| --- | ---: | ---: | ---: | ---: |',
      ...one.map((r, i) => {
        const lane = (all[i]!.cpuMs - r.cpuMs) / (CHATBOTS - 1);
        const read = r.cpuMs - lane;
        return `| ${r.run} | ${s(read)} | ${lane.toFixed(1)} ms | ${Math.round((100 * lane * CHATBOTS) / all[i]!.cpuMs)}% | ${(all[i]!.cpuMs / all[i]!.wallMs).toFixed(2)} |`;
      }),
    ];
    process.stdout.write(lines.join('\n') + '\n');
    writeMdPart(lines.join('\n'));
  } finally {
    emu.close();
    await rm(dir, { recursive: true, force: true });
  }
}

await main();
