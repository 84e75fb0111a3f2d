// A feed routed by agent for the lane tests over real HTTP: rows 1..n with an Agent column (read by
// the routing, not mapped), the feed routed to SN-ANN (agent ann) and SN-BOB (agent bob), and a
// run of lanes against the test emulator that returns the reports and the calls the emulator counted.
import { createCallCounter } from '../../../src/api/call-counter.js';
import { ApiConfig, FeedConfig } from '../../../src/config/schema.js';
import { silentLogger } from '../../../src/log.js';
import { lanesOf, runSync, type SyncReport } from '../../../src/sync/index.js';
import type { TestEmulator } from '../../helpers/emulator.js';
import { apiYaml, COLUMNS, csv, rows, type SyncEnv } from './feed.js';

export const MAPPING = { fields: Object.fromEntries(COLUMNS.map((c) => [c, c])) };

/** rows 1..n as CSV, row i's agent agents[i - 1] */
export function agentCsv(agents: readonly string[]): string {
  const lines = csv(rows(agents.length)).trimEnd().split('\n');
  return [`${lines[0]},Agent`, ...lines.slice(1).map((l, i) => `${l},${agents[i]}`)].join('\n') + '\n';
}

/** the feed at `url` routed to SN-ANN and SN-BOB by agent */
export function annBobFeed(url: string, deletes: Record<string, number> = {}): FeedConfig {
  return FeedConfig.parse({
    name: 'brokerage',
    chatbots: [
      { serialNumber: 'SN-ANN', where: { Agent: ['ann'] } },
      { serialNumber: 'SN-BOB', where: { Agent: ['bob'] } },
    ],
    source: { kind: 'csv', url },
    mapping: MAPPING,
    deletes,
  });
}

/** runSync of the feeds' lanes; `changes`: a change sink per lane (so the listing before each update and delete is kept, for undo) */
export async function runLanesOf(
  te: TestEmulator,
  env: SyncEnv,
  feeds: FeedConfig[],
  opts: { changes?: boolean } = {},
): Promise<{ reports: SyncReport[]; calls: number }> {
  const calls = createCallCounter();
  const before = (await te.stats()).total;
  const reports = await runSync(feeds.flatMap(lanesOf), {
    api: te.client({ onCall: calls.onCall, retry: { retries: 1 } }),
    store: env.store,
    configFeeds: feeds,
    logger: silentLogger,
    baseDir: env.dir,
    apiConfig: ApiConfig.parse({
      baseUrl: te.url,
      secretKey: 'x',
      sessionKey: 'y',
      concurrency: 4,
      pageSize: 20,
      retries: 1,
    }),
    calls,
    ...(opts.changes && { changes: () => () => {} }),
  });
  return { reports, calls: (await te.stats()).total - before };
}

/**
 * A config file's text for the CLI: feed `name` (homes.csv beside it) routed to SN-ANN and SN-BOB
 * by agent, deletes held past 30%; `top`: sections between the api and the feeds; `columns`: mapped
 * as they are named.
 */
export function annBobConfigYaml(
  url: string,
  opts: { name: string; top?: string[]; columns?: readonly string[] },
): string {
  return (
    [
      ...apiYaml(url),
      '  ratePerSecond: 1000',
      ...(opts.top ?? []),
      'feeds:',
      `  - name: ${opts.name}`,
      '    chatbots:',
      '      - { serialNumber: SN-ANN, where: { Agent: [ann] } }',
      '      - { serialNumber: SN-BOB, where: { Agent: [bob] } }',
      '    source: { kind: csv, path: homes.csv }',
      '    deletes: { maxFraction: 0.3 }',
      '    mapping:',
      '      fields:',
      ...(opts.columns ?? COLUMNS).map((c) => `        ${c}: ${c}`),
    ].join('\n') + '\n'
  );
}
