// A Redis that does not answer (or refuses the credentials) is fixed where its URL comes from: the
// config's redis.url (its file and line, and the variable when the config reads it as ${VAR}), or
// REDIS_URL when the config has no redis section. The hint said "redis in the config (or REDIS_URL)"
// whichever it was, and REDIS_URL is not read at all while the config has a redis section.
import { writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { freePort } from '../server/redis-server.js';
import { feedsync } from '../settings/run-cli.js';
import { createSyncEnv, homesConfigYaml, type SyncEnv } from '../sync/helpers/feed.js';
import { TEST_SECRET_KEY, TEST_SESSION_KEY } from '../helpers/emulator.js';

let env: SyncEnv;
/** a port nothing listens on */
let closed: string;

beforeAll(async () => {
  env = await createSyncEnv();
  closed = `redis://127.0.0.1:${await freePort()}`;
});
afterAll(async () => {
  await env.cleanup();
});

async function configWith(name: string, top: string[]): Promise<{ file: string; line: number }> {
  const file = join(env.dir, `${name}.yaml`);
  const text = homesConfigYaml(
    'http://127.0.0.1:9',
    { secretKey: TEST_SECRET_KEY, sessionKey: TEST_SESSION_KEY },
    { top },
  );
  await writeFile(file, text);
  return { file, line: text.split('\n').findIndex((l) => l.startsWith('  url:')) + 1 };
}

describe('the fix of a Redis that does not answer names what gave its URL', () => {
  it('redis.url written in the config: its file and line, not REDIS_URL (which is not read)', async () => {
    const { file, line } = await configWith('literal', ['redis:', `  url: ${closed}`]);
    const r = await feedsync(['runs', '--config', file], { REDIS_URL: 'redis://127.0.0.1:6379' });
    expect(r.code, r.stderr).toBe(1);
    expect(r.stderr).toContain(`fix redis.url (${file}:${line})`);
    expect(r.stderr).not.toContain('REDIS_URL');
  });

  it('redis.url read from a variable: the file, the line and the variable', async () => {
    const { file, line } = await configWith('from-env', ['redis:', '  url: ${QUEUE_REDIS}']);
    const r = await feedsync(['runs', '--config', file], { QUEUE_REDIS: closed, REDIS_URL: '' });
    expect(r.code, r.stderr).toBe(1);
    expect(r.stderr).toContain(`fix redis.url (${file}:${line}, from $QUEUE_REDIS)`);
  });

  it('no redis section: REDIS_URL, and no config key', async () => {
    const { file } = await configWith('env-only', []);
    const r = await feedsync(['runs', '--config', file], { REDIS_URL: closed });
    expect(r.code, r.stderr).toBe(1);
    expect(r.stderr).toContain('fix REDIS_URL');
    expect(r.stderr).not.toContain('redis.url');
  });
});
