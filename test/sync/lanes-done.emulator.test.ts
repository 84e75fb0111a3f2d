// A retry of a job runs only the lanes it has not finished (runs/lanes-done.ts; docs/contracts.md,
// "A rerun of a job"): a routed feed's job whose lane into one chatbot failed is retried, and the
// retry pages and writes only that chatbot; the lanes that ended ok are reported as done by the
// earlier attempt. Another job, and a run outside a job, run every lane. Counted at the emulator
// (its list calls by SerialNumber), in this process.
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { parseConfig } from '../../src/config/load.js';
import type { LoadedConfig } from '../../src/config/schema.js';
import { runLanes } from '../../src/runs/run-lanes.js';
import { createMemoryStore } from '../../src/state/memory-store.js';
import type { KvStore } from '../../src/state/kv-store.js';
import { lanesOf } from '../../src/sync/index.js';
import { startTestEmulator, type TestEmulator } from '../helpers/emulator.js';
import { apiYaml, COLUMNS, csv, lanesDeps, rows } from './helpers/feed.js';

const CHATBOTS = ['SN-A', 'SN-B', 'SN-C'];

let te: TestEmulator;
let dir: string;
let store: KvStore;
let loaded: LoadedConfig;
/** the SerialNumber of each list call, as they come */
let lists: string[] = [];

beforeEach(async () => {
  lists = [];
  // SN-B unknown to the service at first: its lane fails
  te = await startTestEmulator({
    chatbots: ['SN-A', 'SN-C'],
    onRequest: ({ path, body }) => {
      if (path.endsWith('/RealEstateList'))
        lists.push(String((JSON.parse(body) as { SerialNumber: string }).SerialNumber));
    },
  });
  dir = await mkdtemp(join(tmpdir(), 'feedsync-lanes-done-'));
  await writeFile(join(dir, 'r.csv'), csv(rows(5)));
  const yaml = [
    ...apiYaml(te.url),
    '  retries: 0',
    'feeds:',
    '  - name: r',
    `    chatbots: [${CHATBOTS.map((sn) => `{ serialNumber: ${sn} }`).join(', ')}]`,
    '    source: { kind: csv, path: r.csv }',
    `    mapping: { fields: { ${COLUMNS.map((c) => `${c}: ${c}`).join(', ')} } }`,
  ].join('\n');
  loaded = { config: parseConfig(yaml, 'test.yaml', {}), file: join(dir, 'test.yaml'), dir };
  store = createMemoryStore();
});

afterEach(async () => {
  await te.close();
  await rm(dir, { recursive: true, force: true });
});

function run(job?: { jobId: string; attempt: number }, opts: { dryRun?: boolean } = {}) {
  const lanes = lanesOf(loaded.config.feeds[0]!);
  return runLanes(lanes, lanesDeps(loaded, te.api, store), opts, { config: loaded, ...(job && { job }) });
}

const paged = () => [...new Set(lists.splice(0))].sort();

describe('a dry run of a job', () => {
  it('marks no lane done: the real attempt of the job pages and writes every chatbot', async () => {
    te.emulator.configure({ chatbots: CHATBOTS });
    const dry = await run({ jobId: 'j1', attempt: 1 }, { dryRun: true });
    expect(dry.map((r) => [r.chatbot, r.outcome, r.counts.created])).toEqual(CHATBOTS.map((sn) => [sn, 'ok', 5]));
    expect(paged()).toEqual(CHATBOTS);
    for (const sn of CHATBOTS) expect(await te.listings(sn)).toHaveLength(0);

    const real = await run({ jobId: 'j1', attempt: 2 });
    expect(paged()).toEqual(CHATBOTS);
    expect(real.map((r) => [r.chatbot, r.doneBefore, r.counts.created])).toEqual(
      CHATBOTS.map((sn) => [sn, undefined, 5]),
    );
    for (const sn of CHATBOTS) expect(await te.listings(sn)).toHaveLength(5);
  });
});

describe('a retry of a routed feed whose lane into one chatbot failed', () => {
  it('pages and writes only that chatbot; the others are reported done by the earlier attempt', async () => {
    const first = await run({ jobId: 'j1', attempt: 1 });
    expect(first.map((r) => [r.chatbot, r.outcome === 'ok'])).toEqual([
      ['SN-A', true],
      ['SN-B', false],
      ['SN-C', true],
    ]);
    expect(paged()).toEqual(CHATBOTS);

    te.emulator.configure({ chatbots: CHATBOTS });
    const retry = await run({ jobId: 'j1', attempt: 2 });
    expect(paged()).toEqual(['SN-B']);
    expect(retry.map((r) => [r.chatbot, r.outcome, r.doneBefore?.created, r.counts.created])).toEqual([
      ['SN-A', 'ok', 5, 0],
      ['SN-B', 'ok', undefined, 5],
      ['SN-C', 'ok', 5, 0],
    ]);
    expect(retry[0]!.summary).toMatch(/done by an earlier attempt of this job at .+; not paged, read or written again/);
    for (const sn of CHATBOTS) expect(await te.listings(sn)).toHaveLength(5);

    // another job runs every lane, as a run outside a job does
    await run({ jobId: 'j2', attempt: 1 });
    expect(paged()).toEqual(CHATBOTS);
    await run();
    await run();
    expect(paged()).toEqual(CHATBOTS);
  });
});
