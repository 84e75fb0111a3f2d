// Redis only where it is configured, as a user meets it: with no `redis` section and no REDIS_URL,
// every command that needs Redis (pause, resume, enqueue, cancel, worker) refuses in one line and
// writes nothing (the default Redis's pause list does not gain the feed), and `runs` lists the runs
// `feedsync sync` recorded beside the state file, the run id `runs show` takes; with Redis, each
// command says which Redis it used.
import '../setup/needs-redis.js';
import { randomUUID } from 'node:crypto';
import { rm, writeFile } from 'node:fs/promises';
import { dirname, join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestEmulator, TEST_SECRET_KEY, TEST_SESSION_KEY, type TestEmulator } from '../helpers/emulator.js';
import { feedsync } from '../settings/run-cli.js';
import { createSyncEnv, csv, homesConfigYaml, rows, SN, type SyncEnv } from '../sync/helpers/feed.js';
import { dropPrefix, REDIS_URL, testRedis } from './helpers.js';

const feed = `homes-${randomUUID().slice(0, 8)}`;
const prefix = `test-where-${randomUUID().slice(0, 8)}`;
let te: TestEmulator;
let env: SyncEnv;
let withRedis: string;
let withoutRedis: string;
/** no Redis in the environment either */
const NO_URL = { REDIS_URL: '' };

beforeAll(async () => {
  te = await startTestEmulator();
  env = await createSyncEnv();
  const body = (top: string[]) =>
    homesConfigYaml(te.url, { secretKey: TEST_SECRET_KEY, sessionKey: TEST_SESSION_KEY }, { top, name: feed });
  withRedis = join(env.dir, 'with-redis.yaml');
  withoutRedis = join(env.dir, 'without-redis.yaml');
  await writeFile(withRedis, body(['redis:', `  url: ${REDIS_URL}`, `  prefix: ${prefix}`]));
  await writeFile(withoutRedis, body([]));
  await writeFile(join(env.dir, 'homes.csv'), csv(rows(3)));
});

afterAll(async () => {
  await te.close();
  await rm(env.dir, { recursive: true, force: true });
  const redis = testRedis();
  await dropPrefix(redis, prefix);
  await redis.quit();
});

describe('a command that needs Redis, with none configured', () => {
  it.each([
    ['pause', ['pause', '--feed', feed]],
    ['resume', ['resume', '--feed', feed]],
    ['enqueue', ['enqueue', 'sync', '--feed', feed]],
    ['cancel', ['cancel', '--feed', feed]],
    ['worker', ['worker']],
  ])('%s refuses in one line, exit 2, and writes nothing', async (command, args) => {
    const r = await feedsync([...args, '--config', withoutRedis], NO_URL);
    expect(r.code).toBe(2);
    expect(r.stdout).toBe('');
    expect(r.stderr).toBe(
      `feedsync: feedsync ${command} needs Redis, and ${withoutRedis} has no redis section and REDIS_URL is not set: ` +
        'add `redis: { url: redis://HOST:6379 }` (the Redis the workers use) or set REDIS_URL; nothing was done\n',
    );
    // the Redis nothing configured was not written to: its pause list does not name the feed
    const redis = testRedis();
    try {
      expect(await redis.hexists('feedsync:paused', feed)).toBe(0);
    } finally {
      await redis.quit();
    }
  });

  it('runs lists the runs feedsync sync recorded beside the state file, by the run id runs show takes', async () => {
    const sync = await feedsync(['sync', '--config', withoutRedis], NO_URL);
    expect(sync.code).toBe(0);
    const runId = /feedsync runs show (\S+)/.exec(sync.stderr)?.[1];
    expect(runId).toBeDefined();

    const listed = await feedsync(['runs', '--config', withoutRedis], NO_URL);
    expect(listed.code).toBe(0);
    expect(listed.stderr).toBe(
      `runs of \`feedsync sync\` in ${join(env.dir, '.feedsync', 'changes.jsonl')} (${withoutRedis} has no redis section)\n`,
    );
    expect(listed.stdout).toMatch(new RegExp(`${feed}\\s+${SN}\\s+ok\\s+${runId}\\s+.*3 created`));

    const doc = JSON.parse(
      (await feedsync(['runs', '--config', withoutRedis, '--feed', feed, '--json'], NO_URL)).stdout,
    );
    expect(doc.changeLog).toBe(join(env.dir, '.feedsync', 'changes.jsonl'));
    expect(doc.runs).toHaveLength(1);
    expect(doc.runs[0]).toMatchObject({ runId, feed, chatbot: SN, outcome: 'ok', dryRun: false });

    const shown = await feedsync(['runs', 'show', runId!, '--config', withoutRedis], NO_URL);
    expect(shown.code).toBe(0);
    expect(shown.stdout).toContain(`run ${runId}: ${feed} → ${SN}, ok`);
  });
});

describe('a command that uses Redis says which', () => {
  it('pause, resume, runs and enqueue name the Redis and prefix', async () => {
    const named = `Redis ${REDIS_URL} (prefix ${prefix})`;
    const pause = await feedsync(['pause', '--feed', feed, '--config', withRedis]);
    expect(pause.code).toBe(0);
    expect(pause.stderr).toContain(`paused ${feed} in ${named}: `);
    const redis = testRedis();
    try {
      expect(await redis.hexists(`${prefix}:paused`, feed)).toBe(1);
    } finally {
      await redis.quit();
    }
    const resume = await feedsync(['resume', '--feed', feed, '--config', withRedis]);
    expect(resume.stderr).toContain(`resumed ${feed} in ${named}: `);
    const runs = await feedsync(['runs', '--config', withRedis]);
    expect(runs.stderr).toContain(`run history in ${named}\n`);
    const enqueue = await feedsync(['enqueue', 'sync', '--feed', feed, '--config', withRedis]);
    expect(enqueue.code).toBe(0);
    expect(enqueue.stderr).toMatch(new RegExp(`queued job \\S+ in ${named.replace(/[().]/g, '\\$&')}[;\\n]`));
  });

  it('REDIS_URL stands in for a redis section, and is named as such', async () => {
    // started as `npx feedsync` is (npm sets npm_command): the hint says `npx feedsync` (src/format/invocation.ts).
    // (It inherited the suite's npm_command or not, so the hint followed how the tests were started:
    // `npm test` and `npx vitest` printed `npx feedsync`, and this expected `feedsync`.)
    const runs = await feedsync(['runs', '--config', withoutRedis, '--limit', '1'], { REDIS_URL, npm_command: 'exec' });
    expect(runs.code).toBe(0);
    expect(runs.stderr).toContain(
      `run history in Redis ${REDIS_URL} (prefix feedsync, from REDIS_URL); ${withoutRedis} has no redis section: its \`feedsync sync\` runs are not here but in ${join(dirname(withoutRedis), '.feedsync', 'changes.jsonl')} (\`REDIS_URL= npx feedsync runs\` lists them)\n`,
    );
  });
});
