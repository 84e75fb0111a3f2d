// A run that throws instead of reporting (runs/run-lanes.ts: its lanes' alert rules then hear of it
// from the throw) while its signal was stopped: the alert rules hear the stopped word the run's
// reports would have said (stoppedOutcome: handed-back for its worker's shutdown, taken-over, cancelled),
// which does not count toward `failing`; a throw with no stop still counts as a failed run.
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { loadAlertState } from '../../src/alerts/index.js';
import { parseConfig } from '../../src/config/load.js';
import { JOB_LOCK_LOST, WORKER_SHUTDOWN } from '../../src/errors.js';
import { runLanes } from '../../src/runs/run-lanes.js';
import type { KvStore } from '../../src/state/kv-store.js';
import { createMemoryStore } from '../../src/state/memory-store.js';
import { lanesOf } from '../../src/sync/index.js';
import { startTestEmulator, type TestEmulator } from '../helpers/emulator.js';
import { apiYaml, COLUMNS, csv, lanesDeps, row } from '../sync/helpers/feed.js';

let te: TestEmulator;
let dir: string;
beforeAll(async () => {
  te = await startTestEmulator();
  dir = await mkdtemp(join(tmpdir(), 'feedsync-thrown-'));
  await writeFile(join(dir, 'feed.csv'), csv([row(1), row(2)], COLUMNS));
});
afterAll(async () => {
  await te.close();
  await rm(dir, { recursive: true, force: true });
});

/** A store whose reads of the sync's state fail (the alert states read well), after `stop` stopped the run's signal. */
function failingStore(stop: () => void): KvStore {
  const store = createMemoryStore();
  return {
    ...store,
    getAll: async (ns) => {
      if (ns === 'alerts') return store.getAll(ns);
      stop();
      throw new Error('state read failed');
    },
  };
}

/** One run that throws, its signal stopped with `reason` as it does (undefined: not stopped); the lane's failing streak after it. */
async function streakAfterThrow(reason: string | undefined): Promise<{ threw: boolean; streak: number }> {
  const yaml = [
    ...apiYaml(te.url),
    '  retries: 0',
    'alerts:',
    '  rules: { failedRuns: 1 }',
    'feeds:',
    '  - name: homes',
    '    chatbot: SN-THROWN',
    '    source: { kind: csv, path: feed.csv }',
    `    mapping: { fields: { ${COLUMNS.map((c) => `${c}: ${c}`).join(', ')} } }`,
  ].join('\n');
  const loaded = { config: parseConfig(yaml, 'test.yaml', {}), file: join(dir, 'test.yaml'), dir };
  const controller = new AbortController();
  const store = failingStore(() => {
    if (reason !== undefined && !controller.signal.aborted) controller.abort(reason);
  });
  const feed = loaded.config.feeds[0]!;
  let threw = false;
  try {
    await runLanes(
      lanesOf(feed),
      lanesDeps(loaded, te.api, store, { signal: controller.signal }),
      {},
      { config: loaded },
    );
  } catch {
    threw = true;
  }
  return { threw, streak: (await loadAlertState(store, lanesOf(feed)[0]!.id)).streak };
}

describe('a run that throws', () => {
  it('counts toward failing when nothing stopped it', async () => {
    expect(await streakAfterThrow(undefined)).toEqual({ threw: true, streak: 1 });
  });

  it("does not count toward failing when its worker's shutdown stopped it (handed back) or its lock was lost (taken over)", async () => {
    expect(await streakAfterThrow(WORKER_SHUTDOWN)).toEqual({ threw: true, streak: 0 });
    expect(await streakAfterThrow(JOB_LOCK_LOST)).toEqual({ threw: true, streak: 0 });
  });
});
