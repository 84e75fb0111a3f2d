// A worker that cannot start says why and exits non-zero, instead of hanging half-started (compose
// would show it running, never healthy).
import '../setup/needs-redis.js';
import { randomUUID } from 'node:crypto';
import { once } from 'node:events';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { createServer, type AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Redis } from 'ioredis';
import { afterAll, describe, expect, it } from 'vitest';
import { feedsync } from '../settings/run-cli.js';

const REDIS_URL = process.env.REDIS_URL || 'redis://127.0.0.1:6379';
const prefix = `test-worker-start-${randomUUID()}`;
const dirs: string[] = [];
const redisAt = ['redis:', `  url: ${REDIS_URL}`, `  prefix: ${prefix}`];

async function config(lines: string[]): Promise<string> {
  const dir = await mkdtemp(join(tmpdir(), 'feedsync-worker-start-'));
  dirs.push(dir);
  const file = join(dir, 'feedsync.yaml');
  await writeFile(
    file,
    ['api: { baseUrl: "http://127.0.0.1:9", secretKey: test-key-1, sessionKey: test-key-2 }', ...lines].join('\n'),
  );
  return file;
}

afterAll(async () => {
  for (const dir of dirs) await rm(dir, { recursive: true, force: true });
  const redis = new Redis(REDIS_URL);
  const keys = await redis.keys(`${prefix}:*`);
  if (keys.length) await redis.del(...keys);
  await redis.quit();
});

describe('feedsync worker that cannot start', () => {
  it('exits 1 naming a port that is taken, and the fix', async () => {
    const taken = createServer();
    taken.listen(0, '127.0.0.1');
    await once(taken, 'listening');
    const { port } = taken.address() as AddressInfo;
    try {
      const file = await config(['redis:', `  url: ${REDIS_URL}`, `  prefix: ${prefix}`, 'worker:', `  port: ${port}`]);
      const r = await feedsync(['worker', '--config', file]);
      expect(r.code).toBe(1);
      expect(r.stderr).toContain(
        `feedsync: worker cannot start: port ${port} is in use (EADDRINUSE); stop what listens there, or set worker.port or --port\n`,
      );
    } finally {
      taken.close();
    }
  }, 60_000);

  it('exits 2 on a worker.host that does not resolve: a config error naming the setting, not a transient one', async () => {
    const file = await config([...redisAt, 'worker:', '  port: 0', '  host: no-such-host.invalid']);
    const r = await feedsync(['worker', '--config', file]);
    expect(r.code).toBe(2);
    expect(r.stderr).not.toContain('transient');
    expect(r.stderr).toContain(
      `feedsync: worker.host "no-such-host.invalid" in ${file} is not a name this machine resolves (ENOTFOUND), so the worker cannot listen; set worker.host to an address of this machine: 127.0.0.1 (the default), or 0.0.0.0 for every interface\n`,
    );
  }, 60_000);

  it('exits 1 when Redis does not answer, naming it and the fix', async () => {
    const file = await config(['redis:', '  url: redis://127.0.0.1:1', `  prefix: ${prefix}`, 'worker:', '  port: 0']);
    const r = await feedsync(['worker', '--config', file]);
    expect(r.code).toBe(1);
    expect(r.stderr).toContain(
      // (the fix names where the URL is written: the config's redis.url, line 3; REDIS_URL is not read beside it)
      `feedsync: worker cannot start: Redis redis://127.0.0.1:1 does not answer (waited 10 s; connect ECONNREFUSED 127.0.0.1:1); check redis.url (${file}:3), and that Redis is running (transient: a rerun may succeed)\n`,
    );
  }, 60_000);
});
