// One sync per chatbot at a time across all processes (docs/contracts.md, "Invariants"), for a routed feed run as a
// worker job: the job writes into every chatbot of `feeds[].chatbots`, so it must hold the lock of
// each, not only its first chatbot's. Here another process (this test, as a foreground
// `feedsync sync` would) holds the lock of the feed's SECOND chatbot: the worker's job must write
// into neither chatbot while it is held (it waits, delayed), and completes once it is released,
// each key created once in each chatbot.
import '../setup/needs-redis.js';
import { writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { acquireForegroundLock, enqueueJob, waitForJob } from '../../src/queue/index.js';
import { startTestEmulator, TEST_SECRET_KEY, TEST_SESSION_KEY } from '../helpers/emulator.js';
import { COLUMNS, csv, requests, rows, total } from '../sync/helpers/feed.js';
import { REDIS_URL, until } from './helpers.js';
import { useDeployment } from './use-deployment.js';

const d = useDeployment();

describe('a routed feed run as a worker job', () => {
  it('holds the lock of every chatbot it writes into: waits while another process syncs its second chatbot', async () => {
    const emu = (d.emu = await startTestEmulator());
    const mapping = `{ fields: { ${COLUMNS.map((c) => `${c}: ${c}`).join(', ')} } }`;
    await writeFile(join(d.dir, 'r.csv'), csv(rows(3, 1)));
    const file = join(d.dir, 'feedsync.yaml');
    await writeFile(
      file,
      `api: { baseUrl: "${emu.url}", secretKey: ${TEST_SECRET_KEY}, sessionKey: ${TEST_SESSION_KEY} }
redis: { url: "${REDIS_URL}", prefix: ${d.prefix} }
worker: { lockDurationMs: 2000, stalledIntervalMs: 1000, shutdownTimeoutMs: 3000, concurrency: 2, watchdogSeconds: 60, minScheduleIntervalSeconds: 1 }
feeds:
  - name: r
    chatbots: [{ serialNumber: SN-R1 }, { serialNumber: SN-R2 }]
    source: { kind: csv, path: r.csv }
    mapping: ${mapping}
`,
    );
    // the second process: it syncs SN-R2 (the lock a foreground `feedsync sync` takes)
    const held = await acquireForegroundLock({
      chatbot: 'SN-R2',
      redis: { connection: d.redis, prefix: d.prefix },
      lockDir: d.dir,
      waitMs: 0,
      ttlMs: 2000,
      onUnreleased: (notice) => {
        throw new Error(notice);
      },
    });
    if (!held) throw new Error('the test could not take the lock of SN-R2');
    let released = false;
    try {
      await d.start(file);
      const { jobId } = await enqueueJob(d.redis, d.queues, 'sync', 'feed:r', { feed: 'r' });
      // the job tried and found a chatbot busy (delayed), or (the bug) ran beside the holder
      const state = await until('the job to wait or end', async () => {
        const s = await (await d.queues.sync.getJob(jobId))?.getState();
        return s === 'delayed' || s === 'completed' || s === 'failed' ? s : undefined;
      });
      expect(await emu.listings('SN-R2')).toEqual([]);
      // all or nothing: it did not write into the chatbot it could lock either
      expect(await emu.listings('SN-R1')).toEqual([]);
      expect(total(await requests(emu, 'RealEstateCreate'))).toBe(0);
      expect(state).toBe('delayed');

      await held.release();
      released = true;
      const done = await waitForJob(d.redis, d.queues, 'sync', jobId);
      if (done.state !== 'completed') throw new Error(`the job did not complete: ${done.failedReason}`);
      const expected = rows(3, 1)
        .map((r) => String(r.MLSNumber))
        .sort();
      for (const sn of ['SN-R1', 'SN-R2'])
        expect((await emu.listings(sn)).map((l) => l.MLSNumber).sort()).toEqual(expected);
      // each key created once in each chatbot, never twice
      expect(total(await requests(emu, 'RealEstateCreate'))).toBe(6);
    } finally {
      if (!released) await held.release();
    }
  }, 60_000);
});
