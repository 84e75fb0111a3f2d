// `enqueue sync --wait` while the only worker shuts down mid-run: the worker hands the job back to
// wait (src/queue/hand-back.ts) and nobody takes it. Seen on a deploy walk: the waiting command said
// nothing, ever (35 s and counting), though it warns at its start when no worker consumes the queue.
// It says so when the last worker goes, with what starts one, and goes on waiting (--timeout ends it).
import { spawn } from 'node:child_process';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, expect, it } from 'vitest';
import { startTestEmulator, TEST_SECRET_KEY, TEST_SESSION_KEY } from '../helpers/emulator.js';
import { deploymentQueues, writeDeployment } from './deploy.js';
import { uniquePrefix, until } from './helpers.js';
import { spawnWorker } from './worker-process.js';

const REPO = fileURLToPath(new URL('../..', import.meta.url));
const cleanups: Array<() => Promise<unknown>> = [];
afterAll(async () => {
  for (const c of cleanups.splice(0).reverse()) await c();
});

it('says when the last worker stops while it waits, and waits on', { timeout: 90_000 }, async () => {
  const emu = await startTestEmulator();
  cleanups.push(() => emu.close());
  const dir = await mkdtemp(join(tmpdir(), 'feedsync-wait-gone-'));
  cleanups.push(() => rm(dir, { recursive: true, force: true }));
  // 200 creates at 10 a second: a run of about 20 s, stopped a few seconds in
  const file = await writeDeployment([{ name: 'homes', chatbot: 'SN-G', rows: 200 }], {
    dir,
    prefix: uniquePrefix(),
    apiUrl: emu.url,
    secretKey: TEST_SECRET_KEY,
    sessionKey: TEST_SESSION_KEY,
    api: 'ratePerSecond: 10',
  });
  const { queues, close } = await deploymentQueues(file);
  cleanups.push(close);
  const w = await spawnWorker(file);
  cleanups.push(() => w.kill('SIGKILL'));

  const child = spawn(
    process.execPath,
    ['bin/feedsync.js', 'enqueue', 'sync', '--feed', 'homes', '--wait', '--timeout', '25', '--config', file],
    { cwd: REPO, env: { ...process.env, LOG_LEVEL: 'warn' }, stdio: ['ignore', 'pipe', 'pipe'] },
  );
  let stderr = '';
  child.stderr.on('data', (d: Buffer) => (stderr += d.toString()));
  const exited = new Promise<number | null>((resolve) => child.on('exit', (code) => resolve(code)));
  cleanups.push(async () => void child.kill('SIGKILL'));

  await until('the sync to run', async () => (await queues.sync.getJobCounts('active')).active! > 0, 30_000);
  expect(stderr).not.toContain('no worker is consuming');
  await w.kill('SIGTERM');
  await until('the job back in wait', async () => (await queues.sync.getJobCounts('wait')).wait! > 0);
  await until(
    'enqueue --wait to say no worker takes it',
    async () => stderr.includes('no worker is consuming'),
    20_000,
  );
  expect(stderr).toMatch(/no worker is consuming queue listing-sync on Redis .*; the job runs when one starts/);
  expect(await exited).toBe(1); // --timeout: it waited on
  expect(stderr).toMatch(/gave up waiting after 25 s; job \S+ is waiting and goes on/);
});
