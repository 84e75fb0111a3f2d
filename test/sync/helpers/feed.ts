// CSV feeds written into a temp dir per test, a feed config over them, and syncFeed wired to a
// test emulator, so each integration test reads like: write feed, sync, look at the emulator.
import { spawn } from 'node:child_process';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createCallCounter } from '../../../src/api/call-counter.js';
import { ApiConfig, FeedConfig } from '../../../src/config/schema.js';
import { silentLogger } from '../../../src/log.js';
import { createMemoryStore } from '../../../src/state/memory-store.js';
import type { KvStore } from '../../../src/state/kv-store.js';
import type { ChatbotApi } from '../../../src/api/index.js';
import type { LoadedConfig } from '../../../src/config/schema.js';
import { syncFeed, type SyncDeps, type SyncOptions, type SyncTestHooks } from '../../../src/sync/index.js';
import type { ChangeSink } from '../../../src/sync/model/changes.js';
import { afterAll, afterEach, beforeAll, beforeEach } from 'vitest';
import { startTestEmulator, TEST_SECRET_KEY, TEST_SESSION_KEY, type TestEmulator } from '../../helpers/emulator.js';

export const SN = 'SN-SYNC';

const BIN = join(import.meta.dirname, '../../../bin/feedsync.js');

export const COLUMNS = [
  'MLSNumber',
  'Url',
  'SaleType',
  'Status',
  'CurrencySymbol',
  'PropertyType',
  'Bedrooms',
  'Bathrooms',
  'YearBuilt',
  'DaysOnMarket',
  'LotArea',
  'BuildingArea',
  'AreaUnit',
  'ParkingSpots',
  'City',
  'SalePrice',
  'Location',
] as const;
export type Row = Partial<Record<(typeof COLUMNS)[number], string | number>>;

export function row(i: number, patch: Row = {}): Row {
  return {
    MLSNumber: `MLS${String(i).padStart(4, '0')}`,
    Url: `https://homes.test/l/${i}`,
    SaleType: 'for_sale',
    Status: 'Active',
    CurrencySymbol: '$',
    PropertyType: 'Single Family',
    Bedrooms: 1 + (i % 5),
    Bathrooms: 1.5,
    YearBuilt: 1950 + (i % 70),
    DaysOnMarket: i % 30,
    LotArea: 5000 + i,
    BuildingArea: 1200 + i,
    AreaUnit: 'Square Feet',
    ParkingSpots: i % 3,
    City: 'Austin',
    SalePrice: 300000 + i * 1000,
    Location: 'Central',
    ...patch,
  };
}

export const rows = (n: number, from = 1) => Array.from({ length: n }, (_, i) => row(from + i));

/** the rows as CSV, with the test columns (or `columns`: COLUMNS and more) */
export function csv<R extends Row>(data: R[], columns: ReadonlyArray<keyof R & string> = COLUMNS): string {
  const cell = (v: unknown) =>
    v === undefined ? '' : /[",\n]/.test(String(v)) ? `"${String(v).replace(/"/g, '""')}"` : String(v);
  return [columns.join(','), ...data.map((r) => columns.map((c) => cell(r[c])).join(','))].join('\n') + '\n';
}

export interface SyncEnv {
  dir: string;
  store: KvStore;
  /** write `feed.csv` (or `name`) in the temp dir */
  writeFeed(data: Row[] | string, name?: string): Promise<string>;
  feed(patch?: Record<string, unknown>): FeedConfig;
  sync(
    te: TestEmulator,
    feed?: FeedConfig,
    opts?: SyncOptions &
      SyncTestHooks & { api?: Partial<ApiConfig> } & Pick<SyncDeps, 'signal' | 'onProgress' | 'budgets'> & {
        changes?: ChangeSink;
      } & Partial<Pick<SyncDeps, 'configFeeds' | 'store'>>,
  ): ReturnType<typeof syncFeed>;
  cleanup(): Promise<void>;
}

export async function createSyncEnv(): Promise<SyncEnv> {
  const dir = await mkdtemp(join(tmpdir(), 'feedsync-sync-'));
  const store = createMemoryStore(`memory (${dir})`);
  const env: SyncEnv = {
    dir,
    store,
    async writeFeed(data, name = 'feed.csv') {
      await writeFile(join(dir, name), typeof data === 'string' ? data : csv(data));
      return name;
    },
    feed: (patch = {}) =>
      FeedConfig.parse({
        name: 'test-feed',
        chatbot: SN,
        source: { kind: 'csv', path: 'feed.csv' },
        mapping: { fields: Object.fromEntries(COLUMNS.map((c) => [c, c])) },
        deletes: { maxFraction: 0.5, batchSize: 3 },
        ...patch,
      }),
    async sync(te, feed = env.feed(), opts = {}) {
      const calls = createCallCounter();
      const { api: apiPatch, signal, onProgress, changes, budgets, configFeeds = [feed], store: own, ...rest } = opts;
      // (the test hooks go apart from the options, as runSync takes them)
      const { now, threadMinBytes, threadAlways, besidePaging, seal, ...syncOpts } = rest;
      const hooks: SyncTestHooks = {
        ...(now && { now }),
        ...(threadMinBytes !== undefined && { threadMinBytes }),
        ...(threadAlways !== undefined && { threadAlways }),
        ...(besidePaging !== undefined && { besidePaging }),
        ...(seal !== undefined && { seal }),
      };
      const apiConfig = ApiConfig.parse({
        baseUrl: te.url,
        secretKey: 'x',
        sessionKey: 'y',
        concurrency: 4,
        pageSize: 20,
        retries: 3,
        ...apiPatch,
      });
      return syncFeed(
        feed,
        {
          api: te.client({ onCall: calls.onCall, retry: { retries: apiConfig.retries } }),
          store: own ?? store,
          configFeeds,
          logger: silentLogger,
          baseDir: dir,
          apiConfig,
          calls,
          signal,
          onProgress,
          changes,
          ...(budgets && { budgets }),
        },
        syncOpts,
        hooks,
      );
    },
    cleanup: () => rm(dir, { recursive: true, force: true }),
  };
  return env;
}

/** An emulator and a sync env: one side of a test that runs one history two ways and compares the outcomes. */
export interface Side {
  te: TestEmulator;
  env: SyncEnv;
}

/** Two sides, started before the file's tests (emulators answering after `latencyMs`) and closed after them. */
export function useTwoSides(latencyMs: number): () => readonly [Side, Side] {
  let sides: [Side, Side] | undefined;
  const side = async (): Promise<Side> => ({ te: await startTestEmulator({ latencyMs }), env: await createSyncEnv() });
  beforeAll(async () => {
    sides = await Promise.all([side(), side()]);
  });
  afterAll(async () => {
    for (const s of sides ?? []) await Promise.all([s.te.close(), s.env.cleanup()]);
  });
  return () => {
    if (!sides) throw new Error('the two sides are started in the vitest hooks: use them inside a test');
    return sides;
  };
}

/** Request counts of one spec path from the emulator's stats, by status. */
export async function requests(
  te: TestEmulator,
  endpoint: 'RealEstateCreate' | 'RealEstateUpdate' | 'RealEstateList' | 'RealEstateDelete',
) {
  const stats = await te.stats();
  return stats.requests[`/chat/Chatbot/${endpoint}`] ?? {};
}

export const total = (byStatus: Record<string, number>) => Object.values(byStatus).reduce((a, b) => a + b, 0);

/** The write requests the emulator has answered so far, any status: a run that writes nothing leaves them as they were. */
export const writeCounts = async (te: TestEmulator) => ({
  create: total(await requests(te, 'RealEstateCreate')),
  update: total(await requests(te, 'RealEstateUpdate')),
  delete: total(await requests(te, 'RealEstateDelete')),
});

/**
 * `feedsync sync --config <config>` in a process of its own, killed by SIGKILL once `count()` (calls
 * at the emulator, counted from when it starts) reaches `n`; a run that ends before is a failure.
 */
export async function syncKilledAfter(config: string, count: () => Promise<number>, n: number): Promise<void> {
  const before = await count();
  const run = spawn(process.execPath, [BIN, 'sync', '--config', config], {
    env: { ...process.env, LOG_LEVEL: 'warn' },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let stderr = '';
  run.stderr.on('data', (d: Buffer) => (stderr += d.toString()));
  const exited = new Promise<NodeJS.Signals | null>((resolve) => run.on('exit', (_code, signal) => resolve(signal)));
  while ((await count()) - before < n) {
    if (run.exitCode !== null) throw new Error(`the run ended before it was killed: ${stderr}`);
    await new Promise((r) => setTimeout(r, 5));
  }
  run.kill('SIGKILL');
  if ((await exited) !== 'SIGKILL') throw new Error(`the run ended before it was killed: ${stderr}`);
}

/**
 * The count once it has stayed the same across 5 reads 100 ms apart (at most 10 s of reads): the
 * calls a killed process sent, once those still in the emulator's latency are answered.
 */
export async function settledCount(count: () => Promise<number>): Promise<number> {
  let last = await count();
  for (let same = 0, reads = 0; same < 5 && reads < 100; reads++) {
    await new Promise((r) => setTimeout(r, 100));
    const now = await count();
    same = now === last ? same + 1 : 0;
    last = now;
  }
  return last;
}

/** The `api:` lines of a test config against `url` (the test emulator's keys unless given). */
/**
 * runLanes's deps for a loaded config's feeds: its API settings and folder, silent; `more` adds to
 * them or replaces one (a signal, a call counter, a logger).
 */
export function lanesDeps(
  loaded: Pick<LoadedConfig, 'config' | 'dir'>,
  api: ChatbotApi,
  store: KvStore,
  more: Partial<Omit<SyncDeps, 'changes'>> = {},
): Omit<SyncDeps, 'changes'> {
  return {
    api,
    store,
    configFeeds: loaded.config.feeds,
    logger: silentLogger,
    baseDir: loaded.dir,
    apiConfig: loaded.config.api,
    ...more,
  };
}

export function apiYaml(url: string, keys = { secretKey: TEST_SECRET_KEY, sessionKey: TEST_SESSION_KEY }): string[] {
  return ['api:', `  baseUrl: ${url}`, `  secretKey: ${keys.secretKey}`, `  sessionKey: ${keys.sessionKey}`];
}

/**
 * A config file for `feedsync sync` over `homes.csv` (the test columns mapped one to one) against `url`:
 * `top` lines before `feeds:` (more `api:` settings when indented, a `redis:` section when not).
 */
export function homesConfigYaml(
  url: string,
  keys: { secretKey: string; sessionKey: string },
  opts: { deletes?: string; top?: string[]; name?: string },
): string {
  return [
    ...apiYaml(url, keys),
    '  ratePerSecond: 1000',
    ...(opts.top ?? []),
    'feeds:',
    `  - name: ${opts.name ?? 'homes'}`,
    `    chatbot: ${SN}`,
    '    source: { kind: csv, path: homes.csv }',
    ...(opts.deletes === undefined ? [] : [`    deletes: ${opts.deletes}`]),
    '    mapping:',
    '      fields:',
    ...COLUMNS.map((c) => `        ${c}: ${c}`),
  ].join('\n');
}

/** `feedsync.yaml` in the file's folder: homesConfigYaml against its emulator, with the test keys. Its path. */
export async function writeHomesConfig(
  sync: EmulatorSync,
  opts: Parameters<typeof homesConfigYaml>[2] = {},
): Promise<string> {
  const config = join(sync.env().dir, 'feedsync.yaml');
  await writeFile(
    config,
    homesConfigYaml(sync.te().url, { secretKey: TEST_SECRET_KEY, sessionKey: TEST_SESSION_KEY }, opts),
  );
  return config;
}

/** Something a test starts (a feed or RESO server) and the file's hooks close after it. */
export interface Closable {
  close(): Promise<void>;
}

export interface EmulatorSync {
  te(): TestEmulator;
  env(): SyncEnv;
  /** close `server` after the current test, whatever it ends with */
  closeAfterTest<T extends Closable>(server: T): T;
}

export interface EmulatorSyncOptions {
  /** one SyncEnv and an emulator never reset, for the whole file: tests that go on from each other's state (CLI runs) */
  perFile?: boolean;
  /** the emulator's options */
  emulator?: Parameters<typeof startTestEmulator>[0];
  /** hands the emulator and the env to the file, for files that keep them in variables: before each test, or once (perFile) */
  onEach?: (te: TestEmulator, env: SyncEnv) => void;
  /** every request the emulator receives, as sent (its path and body), kept here; emptied before each test unless perFile */
  bodies?: Array<{ path: string; body: string }>;
}

/**
 * The file's emulator (started once) and a fresh SyncEnv per test, the emulator reset between
 * tests; with `perFile`, one SyncEnv for the file and no reset. Everything is closed after.
 */
export function useEmulatorSync(options: EmulatorSyncOptions | EmulatorSyncOptions['onEach'] = {}): EmulatorSync {
  const given: EmulatorSyncOptions = typeof options === 'function' ? { onEach: options } : options;
  const { perFile = false, emulator, onEach, bodies } = given;
  let te: TestEmulator | undefined;
  let env: SyncEnv | undefined;
  const started: Closable[] = [];
  const fresh = async () => {
    env = await createSyncEnv();
    if (te) onEach?.(te, env);
  };
  beforeAll(async () => {
    te = await startTestEmulator(bodies ? { ...emulator, onRequest: (r) => bodies.push(r) } : emulator);
    if (perFile) await fresh();
  });
  afterAll(async () => {
    await te?.close();
    if (perFile) await env?.cleanup();
  });
  beforeEach(async () => {
    if (perFile) return;
    await te?.reset();
    if (bodies) bodies.length = 0;
    await fresh();
  });
  afterEach(async () => {
    await Promise.all(started.splice(0).map((s) => s.close()));
    if (!perFile) await env?.cleanup();
  });
  const ready = <T>(v: T | undefined, what: string): T => {
    if (v === undefined) throw new Error(`${what} is set up in the vitest hooks: use it inside a test`);
    return v;
  };
  return {
    te: () => ready(te, 'the emulator'),
    env: () => ready(env, 'the sync env'),
    closeAfterTest: (server) => {
      started.push(server);
      return server;
    },
  };
}
