// The chatbot as the unit (issue 26), counted: list calls per run beside their minimum (each
// chatbot's pages once), and the feed pulls.
//   fan-out: one feed of RECORDS records routed by agent to CHATBOTS chatbots (feeds[].chatbots
//            with where), pulled over HTTP: one pull per run; calls = the chatbots' pages + writes
//   many feeds: FEEDS feeds per chatbot on MANY_CHATBOTS chatbots, run together as `feedsync sync`
//            runs them: list calls = each chatbot's pages once
// Each case: a first run (all created), then a no-change rerun.
//   npm run bench -- chatbots
//   BENCH_FANOUT_RECORDS=2000 BENCH_FANOUT_CHATBOTS=10 BENCH_MANY_FEEDS=3 BENCH_MANY_CHATBOTS=4 npm run bench -- chatbots   (small)
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createCallCounter } from '../../src/api/call-counter.js';
import { ApiConfig, FeedConfig } from '../../src/config/schema.js';
import { silentLogger } from '../../src/log.js';
import { createMemoryStore } from '../../src/state/memory-store.js';
import { lanesOf, runSync } from '../../src/sync/index.js';
import { startTestEmulator, type TestEmulator } from '../helpers/emulator.js';
import { startFeedServer } from '../helpers/feed-server.js';
import { COLUMNS, csv, rows } from '../sync/helpers/feed.js';

const RECORDS = Number(process.env.BENCH_FANOUT_RECORDS ?? 20_000);
const CHATBOTS = Number(process.env.BENCH_FANOUT_CHATBOTS ?? 50);
const FEEDS = Number(process.env.BENCH_MANY_FEEDS ?? 10);
const MANY_CHATBOTS = Number(process.env.BENCH_MANY_CHATBOTS ?? 20);
const PER_FEED = Number(process.env.BENCH_MANY_LISTINGS ?? 100);
const PAGE = 100;
const mapping = { fields: Object.fromEntries(COLUMNS.map((c) => [c, c])) };

/** Pages one paging of n listings takes: until a short page (a full last page needs an empty one after it). */
const pagesOf = (n: number) => Math.floor(n / PAGE) + 1;

async function listCalls(te: TestEmulator): Promise<number> {
  const stats = await te.stats();
  return Object.values(stats.requests['/chat/Chatbot/RealEstateList'] ?? {}).reduce((a, b) => a + b, 0);
}

async function measure(te: TestEmulator, label: string, minimum: number, run: () => Promise<{ outcomes: string[]; pulls?: number }>): Promise<void> {
  const before = await listCalls(te);
  const calls0 = (await te.stats()).total;
  const t0 = performance.now();
  const r = await run();
  const ms = Math.round(performance.now() - t0);
  const list = (await listCalls(te)) - before;
  const all = (await te.stats()).total - calls0;
  const bad = r.outcomes.filter((o) => o !== 'ok');
  process.stdout.write(
    `${label.padEnd(40)} ${String(ms).padStart(7)} ms  list calls ${String(list).padStart(5)} (minimum ${minimum})  all calls ${String(all).padStart(6)}` +
      `${r.pulls !== undefined ? `  feed pulls ${r.pulls}` : ''}  rss ${Math.round(process.memoryUsage().rss / 2 ** 20)} MB${bad.length ? `  NOT OK: ${bad.join(',')}` : ''}\n`,
  );
  if (list !== minimum || bad.length) process.exitCode = 1;
}

async function main(): Promise<void> {
  const te = await startTestEmulator();
  const dir = await mkdtemp(join(tmpdir(), 'feedsync-chatbots-'));
  const apiConfig = ApiConfig.parse({ baseUrl: te.url, secretKey: 'x', sessionKey: 'y', concurrency: 16, ratePerSecond: 5000, pageSize: PAGE });
  const deps = (feeds: FeedConfig[]) => {
    const calls = createCallCounter();
    return { api: te.client({ onCall: calls.onCall }), store, configFeeds: feeds, logger: silentLogger, baseDir: dir, apiConfig, calls };
  };
  const store = createMemoryStore('bench');
  try {
    // fan-out: agent i % CHATBOTS
    const data = rows(RECORDS);
    const body =
      [
        `${COLUMNS.join(',')},Agent`,
        ...csv(data)
          .trimEnd()
          .split('\n')
          .slice(1)
          .map((l, i) => `${l},agent-${i % CHATBOTS}`),
      ].join('\n') + '\n';
    const server = await startFeedServer({ status: 200, body });
    const fanout = FeedConfig.parse({
      name: 'brokerage',
      chatbots: Array.from({ length: CHATBOTS }, (_, c) => ({ serialNumber: `SN-AGENT-${c}`, where: { Agent: [`agent-${c}`] } })),
      source: { kind: 'csv', url: server.url },
      mapping,
    });
    const perChatbot = Array.from({ length: CHATBOTS }, (_, c) => Math.floor(RECORDS / CHATBOTS) + (c < RECORDS % CHATBOTS ? 1 : 0));
    const fanMin = perChatbot.reduce((n, k) => n + pagesOf(k), 0);
    process.stdout.write(`fan-out: one feed of ${RECORDS.toLocaleString('en-US')} records routed to ${CHATBOTS} chatbots by agent; PageSize ${PAGE}\n`);
    const fan = async () => {
      const before = server.requests;
      const reports = await runSync(lanesOf(fanout), deps([fanout]));
      return { outcomes: reports.map((r) => r.outcome), pulls: server.requests - before };
    };
    // the first run pages empty chatbots: one page each
    await measure(te, 'fan-out: first run (all created)', CHATBOTS, fan);
    await measure(te, 'fan-out: no-change rerun', fanMin, fan);
    await server.close();

    // many feeds per chatbot
    const many: FeedConfig[] = [];
    for (let c = 0; c < MANY_CHATBOTS; c++) {
      for (let f = 0; f < FEEDS; f++) {
        const name = `c${c}-f${f}`;
        await writeFile(join(dir, `${name}.csv`), csv(rows(PER_FEED, 1 + f * PER_FEED)));
        many.push(FeedConfig.parse({ name, chatbot: `SN-MANY-${c}`, source: { kind: 'csv', path: `${name}.csv` }, mapping }));
      }
    }
    process.stdout.write(`many feeds: ${FEEDS} feeds per chatbot on ${MANY_CHATBOTS} chatbots, ${PER_FEED} listings a feed, run together\n`);
    const all = async () => ({ outcomes: (await runSync(many.flatMap(lanesOf), deps(many))).map((r) => r.outcome) });
    await measure(te, 'many feeds: first run (all created)', MANY_CHATBOTS, all);
    await measure(te, 'many feeds: no-change rerun', MANY_CHATBOTS * pagesOf(FEEDS * PER_FEED), all);
  } finally {
    await te.close();
    await rm(dir, { recursive: true, force: true });
  }
}

await main();
