// `feedsync sync --no-redis` beside a running `feedsync worker` (a real worker process on the
// config's Redis): the run takes neither the workers' locks nor their state, so it warns on stderr,
// once, in words, with --json as without; with no worker running it gives only its usual note.
import '../setup/needs-redis.js';
import { spawn, type ChildProcess } from 'node:child_process';
import { writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { Queue } from 'bullmq';
import { Redis } from 'ioredis';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { QUEUE_NAMES } from '../../src/queue/names.js';
import { dropPrefix, REDIS_URL, uniquePrefix } from '../queue/helpers.js';
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
