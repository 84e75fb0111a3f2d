// `feedsync sync --no-redis` beside a running `feedsync worker` (a real worker process on the
// config's Redis): the run takes neither the workers' locks nor their state, so it warns on stderr,
// once, in words, with --json as without; with no worker running it gives only its usual note.
import '../setup/needs-redis.js';
import { spawn, type ChildProcess } from 'node:child_process';
import { once } from 'node:events';
import { writeFile } from 'node:fs/promises';
import { connect, createServer, type AddressInfo, type Socket } from 'node:net';
import { join } from 'node:path';
import { Queue } from 'bullmq';
import { Redis } from 'ioredis';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { QUEUE_NAMES } from '../../src/queue/names.js';
import { dropPrefix, REDIS_URL, uniquePrefix } from '../queue/helpers.js';
import { throwawayRedis } from '../server/redis-server.js';
import { feedsync } from '../settings/run-cli.js';
import { csv, rows, useEmulatorSync, writeHomesConfig } from '../sync/helpers/feed.js';

const BIN = join(import.meta.dirname, '../../bin/feedsync.js');
const sync = useEmulatorSync({ perFile: true });
const prefix = uniquePrefix();
const redis = new Redis(REDIS_URL, { maxRetriesPerRequest: 1 });
let config: string;

beforeAll(async () => {
  config = await writeHomesConfig(sync, {
    deletes: '{ maxFraction: 1 }',
    top: ['redis:', `  url: ${REDIS_URL}`, `  prefix: ${prefix}`],
  });
  await writeFile(join(sync.env().dir, 'homes.csv'), csv(rows(3)));
});
afterAll(async () => {
  await dropPrefix(redis, prefix);
  await redis.quit();
});

const WARNING =
  /feedsync: warning: 1 feedsync worker is running on Redis .* and this run, with --no-redis, takes neither their chatbot locks nor their state/g;

async function workers(): Promise<number> {
  const q = new Queue(QUEUE_NAMES.sync, { connection: redis, prefix });
  try {
    return await q.getWorkersCount();
  } finally {
    await q.close();
  }
}

describe('sync --no-redis beside a running worker', () => {
  it('warns on stderr once, in words, --json or not; no worker, no warning', async () => {
    const worker: ChildProcess = spawn(process.execPath, [BIN, 'worker', '--config', config], {
      stdio: 'ignore',
      env: { ...process.env, LOG_LEVEL: 'warn' },
    });
    try {
      const until = Date.now() + 60_000;
      while ((await workers()) === 0) {
        if (Date.now() > until || worker.exitCode !== null) throw new Error('the worker did not start');
        await new Promise((r) => setTimeout(r, 100));
      }
      const json = await feedsync(['sync', '--config', config, '--no-redis', '--json']);
      expect(json.code, json.stderr).toBe(0);
      expect(json.stderr.match(WARNING)).toHaveLength(1);
      expect(JSON.parse(json.stdout).uncoordinated).toMatch(/not coordinated with the workers/);
      const text = await feedsync(['sync', '--config', config, '--no-redis']);
      expect(text.code, text.stderr).toBe(0);
      expect(text.stderr.match(WARNING)).toHaveLength(1);
      expect(text.stderr).not.toContain('feedsync: run with --no-redis'); // the warning says it, once
    } finally {
      worker.kill('SIGTERM');
      await new Promise((resolve) => (worker.exitCode !== null ? resolve(undefined) : worker.once('exit', resolve)));
    }
    while ((await workers()) > 0) await new Promise((r) => setTimeout(r, 100));
    const alone = await feedsync(['sync', '--config', config, '--no-redis']);
    expect(alone.code, alone.stderr).toBe(0);
    expect(alone.stderr).not.toMatch(/warning: .* worker/);
    expect(alone.stderr).toContain('not coordinated with the workers');
  }, 120_000);
});

// Whether workers run is asked of Redis once it answered a PING: a Redis that stops answering then
// (hung, SIGSTOPped, partitioned: the connection stays up, nothing comes back) held the run before
// its first call, without end. Redis is stopped here as the question (CLIENT LIST) reaches it.
describe('sync --no-redis, Redis stopping as it is asked whether workers run', () => {
  it('goes on with its usual note, in seconds', async () => {
    const stopped = await throwawayRedis();
    const sockets = new Set<Socket>();
    // in front of that Redis: passes every byte, and stops Redis just before the question reaches it
    const front = createServer((client) => {
      const server = connect(stopped.port, '127.0.0.1');
      sockets.add(client).add(server);
      client.on('data', (d: Buffer) => {
        if (/client\r\n\$4\r\nlist/i.test(d.toString('latin1'))) stopped.pause();
        server.write(d);
      });
      server.on('data', (d: Buffer) => client.write(d));
      for (const s of [client, server]) s.on('error', () => {});
    });
    front.listen(0, '127.0.0.1');
    await once(front, 'listening');
    try {
      const frontUrl = `redis://127.0.0.1:${(front.address() as AddressInfo).port}`;
      const file = await writeHomesConfig(sync, {
        deletes: '{ maxFraction: 1 }',
        top: ['redis:', `  url: ${frontUrl}`, `  prefix: ${prefix}`],
      });
      const started = Date.now();
      // (the kill is this test's guard only: a run that waits without end is killed and fails below)
      const r = await feedsync(
        ['sync', '--config', file, '--no-redis'],
        {},
        { timeout: 60_000, killSignal: 'SIGKILL' },
      );
      const ms = Date.now() - started;
      expect(r.killed, 'the run ended by itself').toBeUndefined();
      expect(r.code, r.stderr).toBe(0);
      expect(r.stderr).toContain('not coordinated with the workers');
      expect(ms).toBeLessThan(30_000);
    } finally {
      for (const s of sockets) s.destroy();
      front.close();
      stopped.resume();
      await stopped.stop();
    }
  }, 120_000);
});
