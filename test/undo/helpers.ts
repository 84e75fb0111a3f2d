// The bad-export story of issue 27, as files and configs: a good feed of homes (with descriptions and
// the unlisted Location), and the vendor's broken export of it: every price ×10 on a quarter of the
// listings, the Location (a field the list does not return) changed on two, a tenth of the rows
// missing, two rows new. Configs for `feedsync` over it against the emulator, with or without Redis.
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { withRuntime } from '../../src/cli/with-runtime.js';
import { loadConfig } from '../../src/config/load.js';
import type { StoredListing } from '../../src/emulator/chatbot-listings.js';
import { runLanes, type FeedRunReport } from '../../src/runs/run-lanes.js';
import { lanesOf, type SyncOptions } from '../../src/sync/index.js';
import { undoRun, type UndoOptions, type UndoReport } from '../../src/undo/index.js';
import { afterAll, beforeAll, beforeEach } from 'vitest';
import { startTestEmulator, TEST_SECRET_KEY, TEST_SESSION_KEY, type TestEmulator } from '../helpers/emulator.js';
import { apiYaml, COLUMNS, csv, homesConfigYaml, lanesDeps, row, SN, type Row } from '../sync/helpers/feed.js';

const HEADER = [...COLUMNS, 'Description'] as const;
type StoryRow = Row & { Description?: string };

/** a description a few hundred characters long (kept whole by undo, cut to an excerpt in the diff) */
const description = (i: number) => `Home ${i}: ${'bright rooms, a quiet street and a garden. '.repeat(8)}`.trim();

export const goodRows = (n = 20): StoryRow[] =>
  Array.from({ length: n }, (_, k) => ({ ...row(k + 1), Description: description(k + 1) }));

/** the broken export: prices ×10 on rows 1–5, Location changed on 6–7, rows 19–20 missing, rows 21–22 new */
export function badRows(): StoryRow[] {
  return [
    ...goodRows(18).map((r, k) =>
      k < 5 ? { ...r, SalePrice: Number(r.SalePrice) * 10 } : k < 7 ? { ...r, Location: 'Somewhere Else' } : r,
    ),
    { ...row(21), Description: description(21) },
    { ...row(22), Description: description(22) },
  ];
}

export const storyCsv = (rows: StoryRow[]) => csv(rows, HEADER);

export interface Story {
  dir: string;
  config: string;
  writeFeed(rows: StoryRow[]): Promise<void>;
}

/** a config over homes.csv (+ Description) in a fresh folder; `top` adds top-level YAML lines (redis, changeLog) */
export async function createStory(url: string, top: string[] = []): Promise<Story> {
  const dir = await mkdtemp(join(tmpdir(), 'feedsync-undo-'));
  const config = join(dir, 'feedsync.yaml');
  const yaml =
    homesConfigYaml(
      url,
      { secretKey: TEST_SECRET_KEY, sessionKey: TEST_SESSION_KEY },
      { deletes: '{ maxFraction: 0.3 }', top },
    ) + '\n        Description: Description\n';
  await writeFile(config, yaml);
  return { dir, config, writeFeed: (rows) => writeFile(join(dir, 'homes.csv'), storyCsv(rows)) };
}

/** the chatbot's listings as the emulator stores them, IDs aside, by MLSNumber, keys sorted: equal means byte-equal */
export function listingsAsText(listings: readonly StoredListing[]): string[] {
  return listings
    .map(({ ID: _id, ...rest }) =>
      JSON.stringify(Object.fromEntries(Object.entries(rest).sort(([a], [b]) => a.localeCompare(b)))),
    )
    .sort();
}

/** the run id a `feedsync sync` printed */
export const runIdOf = (stderr: string) => /runs show (\S+)/.exec(stderr)?.[1];

/**
 * `feedsync sync` and `feedsync undo` in this process (the lock aside: the CLI test takes it), over
 * real HTTP; `signal`: the run's, as a worker's job hands it down
 */
export async function inProcess<T>(
  config: string,
  fn: (ops: {
    sync(opts?: SyncOptions, signal?: AbortSignal): Promise<FeedRunReport>;
    undo(runId: string, opts?: UndoOptions, signal?: AbortSignal): Promise<UndoReport>;
  }) => Promise<T>,
): Promise<T> {
  const loaded = await loadConfig(config);
  return withRuntime(loaded, async ({ api, store, changeLog }, logger) => {
    const feed = loaded.config.feeds[0]!;
    return fn({
      sync: async (opts = {}, signal) =>
        (
          await runLanes(lanesOf(feed), lanesDeps(loaded, api, store, { logger, ...(signal && { signal }) }), opts, {
            config: loaded,
            changeLog,
          })
        )[0]!,
      undo: (runId, opts = {}, signal) =>
        undoRun(runId, { api, store, changeLog, config: loaded, logger, ...(signal && { signal }) }, opts),
    });
  });
}

/**
 * The file's emulator, started once, handed to `started` and reset before each test; and a list the
 * file puts the folders it makes in. Both are closed and removed after the file.
 */
export function useUndoEmulator(started: (te: TestEmulator) => void): { dirs: string[] } {
  let te: TestEmulator | undefined;
  const dirs: string[] = [];
  beforeAll(async () => {
    te = await startTestEmulator();
    started(te);
  });
  afterAll(async () => {
    await te?.close();
    await Promise.all(dirs.map((d) => rm(d, { recursive: true, force: true })));
  });
  beforeEach(() => te!.reset());
  return { dirs };
}

/** a config in a fresh folder (put in `dirs`) of an incremental RESO feed `mls` at `resoUrl` (the reso preset) into the emulator at `apiUrl` */
export async function resoUndoConfig(apiUrl: string, resoUrl: string, dirs: string[]): Promise<string> {
  const dir = await mkdtemp(join(tmpdir(), 'feedsync-undo-reso-'));
  dirs.push(dir);
  const config = join(dir, 'feedsync.yaml');
  await writeFile(
    config,
    [
      ...apiYaml(apiUrl),
      'feeds:',
      '  - name: mls',
      `    chatbot: ${SN}`,
      `    source: { kind: reso, url: "${resoUrl}", incremental: true, photosTimestampField: null, retries: 0 }`,
      '    mapping: { preset: reso, fields: { Url: { template: "https://broker.test/l/{ListingId}" } } }',
      '    deletes: { maxFraction: 1 }',
    ].join('\n'),
  );
  return config;
}
