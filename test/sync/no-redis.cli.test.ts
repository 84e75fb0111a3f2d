// Issue 23, "no Redis, no run": with `redis` configured and not answering, `feedsync sync` and
// `feedsync settings` end failed (exit 1), naming Redis and the cause, having written nothing (the
// emulator's listings, the state file and its folder as they were). `--no-redis` runs on the state
// file on purpose and says in its report that it was not coordinated with the workers.
import '../setup/needs-redis.js';
import { createServer, type Server } from 'node:net';
import { existsSync } from 'node:fs';
import { writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { Redis } from 'ioredis';
import { beforeAll, describe, expect, it } from 'vitest';
import { requireRedis } from '../../src/redis/require-redis.js';
import { TEST_SECRET_KEY, TEST_SESSION_KEY } from '../helpers/emulator.js';
import { feedsync } from '../settings/run-cli.js';
import { freePort } from '../server/redis-server.js';
import { apiYaml, csv, homesConfigYaml, row, rows, SN, useEmulatorSync } from './helpers/feed.js';

let closedPort: number;
const sync = useEmulatorSync({ perFile: true, emulator: { chatbots: [SN] } });
beforeAll(async () => {
  closedPort = await freePort();
});

describe('feedsync sync with Redis configured and unreachable', () => {
  it('refuses (exit 1, Redis and the cause named, nothing written); --no-redis runs and says it was uncoordinated', async () => {
    const config = join(sync.env().dir, 'feedsync.yaml');
    const redisLines = ['redis:', `  url: redis://:hunter2-pass@127.0.0.1:${closedPort}`, '  prefix: fstest-noredis'];
    await writeFile(
      config,
      homesConfigYaml(
        sync.te().url,
        { secretKey: TEST_SECRET_KEY, sessionKey: TEST_SESSION_KEY },
        { deletes: '{ maxFraction: 1 }', top: redisLines },
      ),
    );
    await writeFile(join(sync.env().dir, 'homes.csv'), csv(rows(4)));

    const refused = await feedsync(['sync', '--config', config, '--json']);
    expect(refused.code).toBe(1);
    const doc = JSON.parse(refused.stdout);
    expect(doc.error.code).toBe('REDIS_UNAVAILABLE');
    expect(doc.error.message).toContain(`127.0.0.1:${closedPort}`);
    expect(doc.error.message).toContain('ECONNREFUSED');
    expect(doc.error.message).toContain('--no-redis');
    expect(refused.stdout + refused.stderr).not.toContain('hunter2-pass');
    expect(await sync.te().listings(SN)).toHaveLength(0);
    expect(existsSync(join(sync.env().dir, '.feedsync'))).toBe(false); // no state file, no lock file, no echo

    const alone = await feedsync(['sync', '--config', config, '--no-redis', '--json']);
    expect(alone.code).toBe(0);
    const report = JSON.parse(alone.stdout);
    expect(report.uncoordinated).toMatch(/not coordinated with the workers/);
    expect(report.reports[0]).toMatchObject({ outcome: 'ok', counts: { created: 4 } });
    const text = await feedsync(['sync', '--config', config, '--no-redis']);
    expect(text.stderr).toContain('not coordinated with the workers');

    // a change in the feed, Redis still away: refused again, the listings and the state file unchanged
    await writeFile(join(sync.env().dir, 'homes.csv'), csv([...rows(3), row(9)]));
    const exportState = async () => (await feedsync(['state', 'export', '--config', config, '--no-redis'])).stdout;
    const stateBefore = await exportState();
    expect(Object.keys(JSON.parse(stateBefore))).toContain('fp:homes');
    const listingsBefore = await sync.te().listings(SN);
    const again = await feedsync(['sync', '--config', config]);
    expect(again.code).toBe(1);
    expect(again.stderr).toContain('does not answer');
    expect(await sync.te().listings(SN)).toEqual(listingsBefore);
    expect(await exportState()).toBe(stateBefore);
    // four CLI processes, two of them waiting out the 5 s Redis wait: 20 s on an idle machine
  }, 240_000); // (CLI processes: over 90 s on a loaded machine)

  it('settings refuses the same way, and runs with --no-redis', async () => {
    const config = join(sync.env().dir, 'settings.yaml');
    await writeFile(
      config,
      [
        ...apiYaml(sync.te().url),
        'redis:',
        `  url: redis://127.0.0.1:${closedPort}`,
        'chatbots:',
        `  - serialNumber: ${SN}`,
        '    settings: { Name: Homes bot }',
      ].join('\n'),
    );
    const before = (await sync.te().stats()).total;
    const refused = await feedsync(['settings', '--config', config, '--json']);
    expect(refused.code, refused.stderr).toBe(1);
    expect(JSON.parse(refused.stdout).error.code).toBe('REDIS_UNAVAILABLE');
    expect((await sync.te().stats()).total).toBe(before); // not one call to the service
    const alone = await feedsync(['settings', '--config', config, '--no-redis', '--json']);
    expect(alone.code, alone.stderr).toBe(0);
    expect(JSON.parse(alone.stdout).uncoordinated).toMatch(/not coordinated/);
  });
});

describe('requireRedis', () => {
  it('a Redis that accepts the connection and never answers fails within the bounded wait', async () => {
    const silent: Server = createServer(() => {}); // takes the connection, says nothing
    await new Promise<void>((resolve) => silent.listen(0, '127.0.0.1', resolve));
    const { port } = silent.address() as { port: number };
    const redis = new Redis(port, '127.0.0.1', {
      lazyConnect: true,
      maxRetriesPerRequest: 1,
      retryStrategy: () => null,
    });
    try {
      await expect(requireRedis(redis, { where: `redis://127.0.0.1:${port}` }, { waitMs: 200 })).rejects.toMatchObject({
        code: 'REDIS_UNAVAILABLE',
        message: expect.stringContaining('waited 200 ms'),
      });
    } finally {
      silent.close();
    }
  });
});
