// The change log end to end, as a person uses it: real syncs (CLI, state and change log in Redis)
// against the emulator, then `history` and `runs show` tell the story of a listing whose price
// changed and of one that was deleted, the dry run in the same format as the real run.
import '../setup/needs-redis.js';
import { join } from 'node:path';
import { writeFile } from 'node:fs/promises';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { TEST_SECRET_KEY, TEST_SESSION_KEY } from '../helpers/emulator.js';
import { dropPrefix, REDIS_URL, testRedis, uniquePrefix } from '../queue/helpers.js';
import { feedsync } from '../settings/run-cli.js';
import { csv, homesConfigYaml, rows, SN, useEmulatorSync } from '../sync/helpers/feed.js';

let config: string;
const prefix = uniquePrefix();
const redis = testRedis();

const sync = useEmulatorSync({ perFile: true });
beforeAll(async () => {
  config = join(sync.env().dir, 'feedsync.yaml');
  const top = [`redis: { url: "${REDIS_URL}", prefix: ${prefix} }`];
  await writeFile(
    config,
    homesConfigYaml(
      sync.te().url,
      { secretKey: TEST_SECRET_KEY, sessionKey: TEST_SESSION_KEY },
      { deletes: '{ maxFraction: 0.3 }', top },
    ),
  );
});
afterAll(async () => {
  await dropPrefix(redis, prefix);
  await redis.quit();
});

const runIdOf = (stderr: string) => /runs show (\S+)/.exec(stderr)?.[1];

describe('history and runs show after real runs', () => {
  it('tell the story of a price change and of a delete', async () => {
    const homes = join(sync.env().dir, 'homes.csv');
    await writeFile(homes, csv(rows(10)));
    const first = await feedsync(['sync', '--config', config]);
    expect(first.code).toBe(0);

    // MLS0003's price changes, MLS0007 leaves the feed, and one record is broken
    const next = rows(10)
      .filter((r) => r.MLSNumber !== 'MLS0007')
      .map((r) =>
        r.MLSNumber === 'MLS0003'
          ? { ...r, SalePrice: 333333 }
          : r.MLSNumber === 'MLS0009'
            ? { ...r, Status: 'Gone Fishing' }
            : r,
      );
    await writeFile(homes, csv(next));
    const dry = await feedsync(['sync', '--config', config, '--dry-run']);
    expect(dry.code).toBe(0);
    const dryRun = runIdOf(dry.stderr)!;
    const second = await feedsync(['sync', '--config', config]);
    expect(second.code).toBe(0);
    const realRun = runIdOf(second.stderr)!;
    expect(realRun).not.toBe(dryRun);

    const price = await feedsync(['history', '--config', config, '--feed', 'homes', '--key', 'MLS0003']);
    expect(price.code).toBe(0);
    const lines = price.stdout.split('\n');
    expect(lines[0]).toBe(`history of MLSNumber MLS0003 in feed homes → ${SN} (newest first)`);
    // newest first: the real update, the dry run's planned one in the same words, then the create
    const told = lines.filter((l) => l.startsWith('    ')).map((l) => l.trim());
    expect(told).toEqual([
      '~ MLS0003 update: SalePrice 303000 → 333333',
      '~ MLS0003 would update: SalePrice 303000 → 333333',
      expect.stringMatching(/^\+ MLS0003 create: Austin, price 303000, Active$/),
    ]);

    const gone = await feedsync(['history', '--config', config, '--feed', 'homes', '--key', 'MLS0007', '--json']);
    const goneDoc = JSON.parse(gone.stdout);
    expect(
      goneDoc.changes.map((e: { runId: string; change: { op: string; reason?: string } }) => [
        e.runId,
        e.change.op,
        e.change.reason,
      ]),
    ).toEqual([
      [realRun, 'delete', 'absent'],
      [dryRun, 'delete', 'absent'],
      [expect.any(String), 'create', undefined],
    ]);

    const show = await feedsync(['runs', 'show', realRun, '--config', config]);
    expect(show.code).toBe(0);
    expect(show.stdout).toContain(`run ${realRun}: homes → ${SN}, ok`);
    expect(show.stdout).toContain('~ MLS0003 update: SalePrice 303000 → 333333');
    expect(show.stdout).toContain('- MLS0007 delete (no longer in the feed)');
    expect(show.stdout).toMatch(/! MLS0009 rejected at homes\.csv:\d+, record \d+: Status/);

    const json = JSON.parse((await feedsync(['runs', 'show', realRun, '--config', config, '--json'])).stdout);
    expect(json.run).toMatchObject({
      runId: realRun,
      feed: 'homes',
      outcome: 'ok',
      counts: { updated: 1, deleted: 1, rejected: 1 },
    });
    expect(
      json.changes.map((e: { change: { op: string; key: string } }) => `${e.change.op} ${e.change.key}`).sort(),
    ).toEqual(['delete MLS0007', 'reject MLS0009', 'update MLS0003']);

    const unknown = await feedsync(['runs', 'show', 'no-such-run', '--config', config]);
    expect(unknown.code).toBe(2);
    expect(unknown.stderr).toContain(`recent runs: ${realRun}`);
  }, 60_000);
});
