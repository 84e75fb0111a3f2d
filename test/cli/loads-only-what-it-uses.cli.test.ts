// Issue 39, "a cold start that costs nothing": a run loads only what it uses. `feedsync sync` with
// no Redis configured loads neither BullMQ nor ioredis (the Redis and queue modules are imported when
// Redis is configured or a queue command runs), nor nodemailer (imported to send an e-mail alert),
// pino-pretty (logs to a terminal) or rate-limiter-flexible (an hour or day budget): about half a
// second of CPU at every start together. Nor, with no schedule in its config, cron-parser and luxon
// (they check schedules: ~40 ms of CPU with the locale data they load). The packages the process
// loads are written by a preloaded hook (test/helpers/loaded-packages.mjs); the same run with
// `redis` configured and --no-redis, which asks Redis about workers through BullMQ, shows the hook
// sees them.
import { execFile } from 'node:child_process';
import { cpSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, describe, expect, it } from 'vitest';
import { startEmulator } from '../../src/emulator/index.js';
import { freePort } from '../server/redis-server.js';

const root = fileURLToPath(new URL('../../', import.meta.url));
const BIN = join(root, 'bin/feedsync.js');
const HOOK = join(root, 'test/helpers/loaded-packages.mjs');
const dir = mkdtempSync(join(tmpdir(), 'feedsync-loads-'));
for (const f of ['demo.yaml', 'feeds']) cpSync(join(root, 'fixtures', f), join(dir, f), { recursive: true });
afterAll(() => rmSync(dir, { recursive: true, force: true }));

const NOT_WITHOUT_REDIS = ['bullmq', 'ioredis', 'nodemailer', 'pino-pretty', 'rate-limiter-flexible'];

/** A dry run of one demo feed as a user starts it (bin/feedsync.js), and the npm packages its process loaded. */
async function packagesOf(
  config: string,
  ...args: string[]
): Promise<{ code: number; stderr: string; packages: Set<string> }> {
  const out = join(dir, `packages-${Math.random().toString(36).slice(2)}.txt`);
  const argv = [
    '--import',
    HOOK,
    BIN,
    'sync',
    '--config',
    config,
    '--feed',
    'austin-csv',
    '--dry-run',
    '--json',
    ...args,
  ];
  const env = { ...process.env, FEEDSYNC_TEST_LOADED_PACKAGES: out, LOG_LEVEL: 'warn', LOG_FORMAT: undefined };
  const { code, stderr } = await new Promise<{ code: number; stderr: string }>((resolve) => {
    execFile(process.execPath, argv, { env }, (err, _stdout, stderr) =>
      resolve({ code: err ? Number((err as { code?: unknown }).code ?? 1) : 0, stderr }),
    );
  });
  return { code, stderr, packages: new Set(readFileSync(out, 'utf8').split('\n').filter(Boolean)) };
}

describe('what a run loads', () => {
  it('feedsync sync without Redis loads no BullMQ, ioredis, nodemailer, pino-pretty or rate-limiter-flexible', async () => {
    const run = await packagesOf(join(dir, 'demo.yaml'));
    expect(run.code, run.stderr).toBe(0);
    expect(run.packages).toContain('zod'); // the hook saw the run's packages
    expect(NOT_WITHOUT_REDIS.filter((p) => run.packages.has(p))).toEqual([]);
  });

  it('a sync against a service (not the embedded emulator) makes no node:http module namespace', async () => {
    // (an ES import of node:http reads its lazy WebSocket getters, which load Node's own undici: ~45
    // ms of CPU; the status texts are read through a require, src/net/status-text.ts)
    const emulator = await startEmulator({ port: 0, secretKey: 'dev-secret-key', sessionKey: 'dev-session-key' });
    try {
      const config = join(dir, 'demo-served.yaml');
      writeFileSync(
        config,
        readFileSync(join(dir, 'demo.yaml'), 'utf8').replace('baseUrl: embedded', `baseUrl: ${emulator.url}`),
      );
      const run = await packagesOf(config);
      expect(run.code, run.stderr).toBe(0);
      expect(run.packages).toContain('node:fs'); // (the hook sees builtins imported as ES modules)
      expect(run.packages).not.toContain('node:http');
    } finally {
      await emulator.close();
    }
  });

  it('a sync whose calls are all read whole (a file feed) loads no undici; one that downloads its feed does', async () => {
    // (undici is imported at the first exchange read as a stream: src/net/undici.ts; ~12 ms of CPU a start)
    const emulator = await startEmulator({ port: 0, secretKey: 'dev-secret-key', sessionKey: 'dev-session-key' });
    const feedServer = createServer((_req, res) => res.end(readFileSync(join(dir, 'feeds/austin.csv'))));
    await new Promise<void>((ready) => feedServer.listen(0, '127.0.0.1', ready));
    try {
      const served = readFileSync(join(dir, 'demo.yaml'), 'utf8').replace(
        'baseUrl: embedded',
        `baseUrl: ${emulator.url}`,
      );
      const file = join(dir, 'demo-file-feed.yaml');
      writeFileSync(file, served);
      const fileFeed = await packagesOf(file);
      expect(fileFeed.code, fileFeed.stderr).toBe(0);
      expect(fileFeed.packages).not.toContain('undici');
      const { port } = feedServer.address() as AddressInfo;
      const url = join(dir, 'demo-url-feed.yaml');
      writeFileSync(url, served.replace('path: feeds/austin.csv', `url: "http://127.0.0.1:${port}/austin.csv"`));
      const urlFeed = await packagesOf(url);
      expect(urlFeed.code, urlFeed.stderr).toBe(0);
      expect(urlFeed.packages).toContain('undici');
    } finally {
      feedServer.close();
      await emulator.close();
    }
  });

  it('a config with no schedule, or plain ones, loads neither cron-parser nor luxon (they check schedules), and one with another pattern does', async () => {
    const config = join(dir, 'demo-unscheduled.yaml');
    writeFileSync(config, readFileSync(join(dir, 'demo.yaml'), 'utf8').replace(/^ +schedule: .*\n/gm, ''));
    const unscheduled = await packagesOf(config);
    expect(unscheduled.code, unscheduled.stderr).toBe(0);
    expect(['cron-parser', 'luxon'].filter((p) => unscheduled.packages.has(p))).toEqual([]);
    // the demo's patterns ("0 2 * * *", "*/30 * * * *") are plain: accepted without cron-parser (src/config/cron.ts)
    const scheduled = await packagesOf(join(dir, 'demo.yaml'));
    expect(scheduled.code, scheduled.stderr).toBe(0);
    expect(['cron-parser', 'luxon'].filter((p) => scheduled.packages.has(p))).toEqual([]);
    const config2 = join(dir, 'demo-last-day.yaml');
    writeFileSync(
      config2,
      readFileSync(join(dir, 'demo.yaml'), 'utf8').replace('cron: "0 2 * * *"', 'cron: "0 2 L * *"'),
    );
    const lastDay = await packagesOf(config2);
    expect(lastDay.code, lastDay.stderr).toBe(0);
    expect(lastDay.packages).toContain('cron-parser');
  });

  it('the hook sees BullMQ and ioredis when a run loads them: --no-redis with Redis configured asks it about workers', async () => {
    const config = join(dir, 'demo-redis.yaml');
    writeFileSync(
      config,
      `redis:\n  url: redis://127.0.0.1:${await freePort()}\n${readFileSync(join(dir, 'demo.yaml'), 'utf8')}`,
    );
    const run = await packagesOf(config, '--no-redis');
    expect(run.code, run.stderr).toBe(0);
    expect(run.packages).toContain('bullmq');
    expect(run.packages).toContain('ioredis');
  });
});
