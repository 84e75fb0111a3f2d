// Progress you can watch, over a worker process and real Redis. BullMQ's job.updateProgress runs its
// updateProgress script: it sets the job hash's `progress` field and adds a `progress` event
// (jobId, data) to the queue's events stream, which QueueEvents listeners receive and the queue UI's
// Progress tab shows (BullMQ: scripts/updateProgress-3.lua; QueueEventsListener.progress; a
// progress is a number or any JSON object). So the test reads the running job's progress back from
// BullMQ (Job.progress, and the events stream for how many updates were made: at most one a second),
// /status's line for the running feed, and `enqueue --wait` and `sync` on a terminal (script(1)
// gives them one) showing the total and the time left once the plan is known.
import { execFile } from 'node:child_process';
import { existsSync } from 'node:fs';
import { readFile, writeFile } from 'node:fs/promises';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { enqueueJob, waitForJob } from '../../src/queue/index.js';
import { RunProgress } from '../../src/sync/index.js';
import { startTestEmulator } from '../helpers/emulator.js';
import { useDeployment } from './use-deployment.js';
import { until } from './helpers.js';
import { freshFetch } from '../helpers/fresh-fetch.js';

const d = useDeployment();
const REPO = fileURLToPath(new URL('../..', import.meta.url));
const SCRIPT = '/usr/bin/script';

// 200 (120) writes at 10 a second: a run of 20 (12) s at least, whatever the machine's load. A run's
// writes go as its feed is read, its reader at most `concurrency` writes ahead of the `concurrency`
// in flight, so its plan (the total) is known once the last record is read: with 2 in flight, for its
// last ~4 writes only (~0.3 s, about one of `sync`'s 250 ms redraws, a third of the job's update
// interval): whether a redraw fell in it was where the redraw clock stood, which a loaded machine's
// jitter moves (under load, `sync` showed the total 5 runs of 8, at 118/120 or 120/120 only). 50 in
// flight: the plan is known for the last ~90 writes, which the rate makes last ~9 s at least, and
// load can only lengthen.
const SLOW_API_READ_AHEAD = 'concurrency: 50, retries: 2, ratePerSecond: 10';

/** `feedsync ARGS` on a terminal of its own (script(1)): what it printed there, escapes and all */
function onTerminal(args: string[]): Promise<{ code: number; out: string }> {
  const command = ['node', 'bin/feedsync.js', ...args].map((a) => `'${a}'`).join(' ');
  return new Promise((resolve) => {
    execFile(
      SCRIPT,
      ['-qec', command, '/dev/null'],
      { cwd: REPO, env: { ...process.env, LOG_LEVEL: 'warn' } },
      (err, stdout) => {
        resolve({ code: err ? Number((err as { code?: unknown }).code ?? 1) : 0, out: stdout });
      },
    );
  });
}

describe('a running sync reports its progress', () => {
  it('through BullMQ: phase, records read, writes done of planned, time left; at most one update a second; /status shows it', async () => {
    d.emu = await startTestEmulator({ latencyMs: 20 });
    const file = await d.deploy([{ name: 'big', chatbot: 'SN-P', rows: 200 }], { api: SLOW_API_READ_AHEAD });
    const w = await d.start(file);
    const { jobId } = await enqueueJob(d.redis, d.queues, 'sync', 'big', { feed: 'big' });

    // read back from BullMQ while it runs: the plan known, writes under way
    const writing = await until(
      'the job to report writes of its plan',
      async () => {
        const p = RunProgress.safeParse((await d.queues.sync.getJob(jobId))?.progress);
        return p.success && p.data.phase === 'writing' && p.data.written > 0 && p.data.written < 200
          ? p.data
          : undefined;
      },
      60_000,
    );
    expect(writing).toMatchObject({ feed: 'big', phase: 'writing', read: 200, planned: 200 });
    // /status while it runs (asked until it shows: a loaded machine answers late)
    const shown = await until(
      '/status to show the running feed with its progress',
      async () => {
        const status = await (await freshFetch(`http://127.0.0.1:${w.port}/status`)).text();
        return (
          /<span class="state running">running<\/span> <span class="progress">writing (\d+)\/200 \(\d+%\)(, about \d+ (s|min) left)?<\/span>/.exec(
            status,
          ) ?? undefined
        );
      },
      60_000,
    );
    expect(Number(shown[1])).toBeLessThanOrEqual(200);

    const done = await waitForJob(d.redis, d.queues, 'sync', jobId);
    expect(done).toMatchObject({ state: 'completed', returnvalue: { outcome: 'ok', counts: { created: 200 } } });
    const job = await d.queues.sync.getJob(jobId);
    // the run's last progress was sent before it ended
    expect(job!.progress).toMatchObject({ feed: 'big', phase: 'writing', read: 200, written: 200, planned: 200 });

    // bounded: at most one update a second of the run (and the last), not one per record and write (400)
    const events = await d.redis.xrange(d.queues.sync.toKey('events'), '-', '+');
    const updates = events.filter(
      ([, f]) => f[f.indexOf('event') + 1] === 'progress' && f[f.indexOf('jobId') + 1] === jobId,
    ).length;
    const seconds = (job!.finishedOn! - job!.processedOn!) / 1000;
    expect(updates).toBeGreaterThan(1);
    expect(updates).toBeLessThanOrEqual(Math.ceil(seconds) + 2);
    expect(updates).toBeLessThan(400);
  }, 120_000);

  it.skipIf(!existsSync(SCRIPT))(
    'enqueue --wait and sync show the total and the time left on a terminal',
    async () => {
      d.emu = await startTestEmulator({ latencyMs: 20 });
      const file = await d.deploy([{ name: 'big', chatbot: 'SN-T', rows: 120 }], { api: SLOW_API_READ_AHEAD });
      await d.start(file);
      const queued = await onTerminal([
        'enqueue',
        'sync',
        '--feed',
        'big',
        '--wait',
        '--timeout',
        '90',
        '--config',
        file,
      ]);
      expect(queued.code).toBe(0);
      expect(queued.out).toMatch(/big: writing \d+\/120 \(\d+%\), about \d+ (s|min) left/);
      expect(queued.out).toContain('feed big → chatbot SN-T: ok');

      // the same feed into another chatbot, synced in the foreground: its live line once the plan is known
      await writeFile(file, (await readFile(file, 'utf8')).replace('SN-T', 'SN-T2'));
      const synced = await onTerminal(['sync', '--feed', 'big', '--config', file]);
      expect(synced.code).toBe(0);
      expect(synced.out).toMatch(/big: \d+\/120 writes done \(\d+%\), \d+\/s, about \d+ (s|min) left/);
    },
    180_000,
  );
});
