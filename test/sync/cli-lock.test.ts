// Invariant 4 for the foreground command: `feedsync sync` takes the chatbot's lock — the workers'
// Redis lock when Redis holds the state, a lock file otherwise — and waits behind a run that holds
// it (here: up to the feed's deadline, then it reports the feed failed and writes nothing).
// Invariant 7: --json prints exactly one document, a config error included.
import '../setup/needs-redis.js';
import { mkdir, rm, writeFile } from 'node:fs/promises';
import { hostname } from 'node:os';
import { join } from 'node:path';
import { Redis } from 'ioredis';
import { beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { holdOpen } from '../../src/state/open-lock.js';
import { acquireTargetLock, chatbotLockName, targetLockKey } from '../../src/locks/target-lock.js';
import { TEST_SECRET_KEY, TEST_SESSION_KEY } from '../helpers/emulator.js';
import { feedsync } from '../settings/run-cli.js';
import { csv, homesConfigYaml, rows, SN, useEmulatorSync } from './helpers/feed.js';
import { REDIS_URL } from '../queue/helpers.js';

const sync = useEmulatorSync({ perFile: true });
beforeAll(async () => {
  await writeFile(join(sync.env().dir, 'homes.csv'), csv(rows(4)));
});
beforeEach(() => sync.te().reset());

const configWith = async (name: string, extra: string[]) => {
  const file = join(sync.env().dir, name);
  const yaml = homesConfigYaml(
    sync.te().url,
    { secretKey: TEST_SECRET_KEY, sessionKey: TEST_SESSION_KEY },
    { deletes: '{ maxFraction: 1 }', top: extra },
  ).replace(
    '    source: { kind: csv, path: homes.csv }',
    '    source: { kind: csv, path: homes.csv }\n    deadlineMinutes: 0.1',
  );
  await writeFile(file, yaml);
  return file;
};

describe('feedsync sync takes the chatbot lock', () => {
  it('without Redis: waits on the lock file a live process holds, then reports the feed failed and writes nothing', async () => {
    const config = await configWith('file.yaml', []);
    const lockDir = join(sync.env().dir, '.feedsync', 'locks');
    await mkdir(lockDir, { recursive: true });
    const lockFile = join(lockDir, `${chatbotLockName({ chatbot: SN }, 'sync').replace(/[^A-Za-z0-9._-]/g, '_')}.lock`);
    await writeFile(lockFile, JSON.stringify({ pid: process.pid, owner: 'another run', at: new Date().toISOString() }));
    const held = await feedsync(['sync', '--config', config, '--json']);
    expect(held.code).toBe(1);
    const { reports } = JSON.parse(held.stdout);
    expect(reports[0]).toMatchObject({ feed: 'homes', outcome: 'failed' });
    expect(reports[0].message).toContain('being synced by another process');
    // said while it waits, not only once the wait is over: who holds it and how long it may take
    expect(held.stderr).toContain(
      `chatbot ${SN} is being synced by a run (PID ${process.pid} on ${hostname()}, since `,
    );
    expect(held.stderr).toContain(
      'waiting for it to finish, up to 0.1 min (feeds[].deadlineMinutes), then this feed fails with nothing written',
    );
    expect(held.stderr.match(/waiting for it to finish/g)).toHaveLength(1);
    expect(await sync.te().listings(SN)).toHaveLength(0);

    await rm(lockFile);
    const free = await feedsync(['sync', '--config', config, '--json']);
    expect(JSON.parse(free.stdout).reports[0].outcome).toBe('ok');
    expect(await sync.te().listings(SN)).toHaveLength(4);
  });

  it('without Redis, a second run waits for the state file the first holds open, and says so while it waits', async () => {
    const config = await configWith('open.yaml', []);
    // this test's process holds the state file open, as a running `feedsync sync` does
    const hold = await holdOpen(join(sync.env().dir, '.feedsync', 'state.lmdb'));
    try {
      const held = await feedsync(['sync', '--config', config, '--json']);
      expect(held.code).toBe(1);
      expect(held.stderr).toContain(
        `the state file ${join(sync.env().dir, '.feedsync', 'state.lmdb')} is open in another feedsync process (PID ${process.pid} on ${hostname()}, since `,
      );
      expect(held.stderr).toContain('waiting for it to close the file, up to 0.1 min (feeds[].deadlineMinutes)');
      expect(held.stderr.match(/waiting for it to close the file/g)).toHaveLength(1);
      expect(await sync.te().listings(SN)).toHaveLength(0);
    } finally {
      await hold.release();
    }
  });

  it('with Redis: the same lock the worker jobs take', async () => {
    const prefix = `fstest-cli-${process.pid}-${Date.now()}`;
    const redis = new Redis(REDIS_URL, { maxRetriesPerRequest: 1 });
    try {
      const config = await configWith('redis.yaml', ['redis:', `  url: ${REDIS_URL}`, `  prefix: ${prefix}`]);
      const job = await acquireTargetLock(
        redis,
        targetLockKey(prefix, chatbotLockName({ chatbot: SN }, 'sync')),
        'job-1',
        30_000,
      );
      expect(job).toBeDefined();
      const held = await feedsync(['sync', '--config', config, '--json']);
      expect(JSON.parse(held.stdout).reports[0]).toMatchObject({ outcome: 'failed' });
      expect(held.stderr).toContain(`chatbot ${SN} is being synced by `);
      expect(held.stderr.match(/waiting for it to finish/g)).toHaveLength(1);
      expect(await sync.te().listings(SN)).toHaveLength(0);
      await job!.release();
      const free = await feedsync(['sync', '--config', config, '--json']);
      expect(JSON.parse(free.stdout).reports[0].outcome).toBe('ok');
    } finally {
      const keys = await redis.keys(`${prefix}:*`);
      if (keys.length) await redis.del(...keys);
      await redis.quit();
    }
  });
});

describe('--json prints exactly one document', () => {
  it('a config error is { "error": ... } on stdout, exit 2', async () => {
    const bad = join(sync.env().dir, 'bad.yaml');
    await writeFile(bad, 'api: { baseUrl: 12 }\nfeeds: []\n');
    const run = await feedsync(['sync', '--config', bad, '--json']);
    expect(run.code).toBe(2);
    const doc = JSON.parse(run.stdout);
    expect(doc.error.code).toBe('CONFIG');
    expect(doc.error.message).toMatch(/api/);
  });
});
