// `feedsync runs` as a user runs it: a foreground sync with Redis is in the history like a queued
// one, and it says which Redis it read; an unknown feed is exit 2 with the message `sync` and
// `feed preview` give. (Without a redis section: test/queue/redis-where-configured.test.ts.)
import '../setup/needs-redis.js';
import { randomUUID } from 'node:crypto';
import { rm, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { Redis } from 'ioredis';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestEmulator, TEST_SECRET_KEY, TEST_SESSION_KEY, type TestEmulator } from '../helpers/emulator.js';
import { feedsync } from '../settings/run-cli.js';
import { createSyncEnv, csv, homesConfigYaml, rows, SN, type SyncEnv } from '../sync/helpers/feed.js';

const REDIS_URL = process.env.REDIS_URL || 'redis://127.0.0.1:6379';
const prefix = `test-runs-${randomUUID()}`;
let te: TestEmulator;
let env: SyncEnv;
let withRedis: string;

beforeAll(async () => {
  te = await startTestEmulator();
  env = await createSyncEnv();
  const body = (top: string[]) =>
    homesConfigYaml(te.url, { secretKey: TEST_SECRET_KEY, sessionKey: TEST_SESSION_KEY }, { top });
  withRedis = join(env.dir, 'with-redis.yaml');
  await writeFile(withRedis, body(['redis:', `  url: ${REDIS_URL}`, `  prefix: ${prefix}`]));
  await writeFile(join(env.dir, 'homes.csv'), csv(rows(3)));
});

afterAll(async () => {
  await te.close();
  await rm(env.dir, { recursive: true, force: true });
  const redis = new Redis(REDIS_URL);
  const keys = await redis.keys(`${prefix}:*`);
  if (keys.length) await redis.del(...keys);
  await redis.quit();
});

describe('feedsync runs', () => {
  it('lists a foreground sync made with a Redis config, like a queued run', async () => {
    const sync = await feedsync(['sync', '--config', withRedis]);
    expect(sync.code).toBe(0);
    const runs = await feedsync(['runs', '--config', withRedis, '--feed', 'homes', '--json']);
    expect(runs.code).toBe(0);
    const doc = JSON.parse(runs.stdout);
    expect(doc.runs).toHaveLength(1);
    expect(doc.runs[0]).toMatchObject({
      job: 'listing-sync',
      queue: 'foreground',
      feed: 'homes',
      chatbot: SN,
      outcome: 'ok',
      attempt: { made: 1, max: 1 },
    });
    expect(doc.runs[0].summary).toContain('3 created');
    expect(doc.runs[0].jobId).toMatch(/^foreground-\d{14}-\d+$/);
    // the run id `runs show` and `undo` take, as the table's column gives it (a script need not dig it
    // out of the report, or of each lane's): the one the sync printed
    const printed = /changes: .* runs show (\S+)/.exec(sync.stderr)?.[1];
    expect(doc.runs[0].runIds).toEqual([printed]);
    const table = await feedsync(['runs', '--config', withRedis]);
    expect(table.stdout).toMatch(/listing-sync\s+homes\s+ok\s+1\/1\s+foreground-/);
    expect(table.stderr).toBe(`run history in Redis ${REDIS_URL} (prefix ${prefix})\n`);
  });

  it('the table names each run by the run id `runs show` and `undo` take, not only by its job id', async () => {
    const sync = await feedsync(['sync', '--config', withRedis]);
    expect(sync.code).toBe(0);
    const runId = /runs show (\S+)/.exec(sync.stderr)?.[1];
    expect(runId, sync.stderr).toMatch(/^\d{8}T\d{6}Z-/);
    const table = await feedsync(['runs', '--config', withRedis, '--limit', '1']);
    expect(table.stdout.split('\n')[0]).toMatch(/job id\s+run id\s+worker\s+summary/);
    expect(table.stdout).toMatch(new RegExp(`foreground-\\S+\\s+${runId}\\s`));
    const show = await feedsync(['runs', 'show', runId!, '--config', withRedis]);
    expect(show.code).toBe(0);
    expect(show.stderr + show.stdout).toContain(`run ${runId}: homes → ${SN}, ok`);
  });

  it('an unknown --feed is exit 2 with the same message as sync and feed preview', async () => {
    const runs = await feedsync(['runs', '--config', withRedis, '--feed', 'nope']);
    const sync = await feedsync(['sync', '--config', withRedis, '--feed', 'nope']);
    const preview = await feedsync(['feed', 'preview', '--config', withRedis, '--feed', 'nope']);
    const message = `feedsync: unknown feed nope; feeds in ${withRedis}: homes\n`;
    for (const r of [runs, sync, preview]) {
      expect(r.code).toBe(2);
      expect(r.stderr).toBe(message);
    }
  });
});
