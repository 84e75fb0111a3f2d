// A foreground `feedsync sync` whose chatbot lock Redis refuses to release (the connection lost
// after the writes): the run's reports are as they would be, and the operator reads one warning
// naming the chatbot, the error, and when the lock frees itself (its ttl), not nothing.
import '../setup/needs-redis.js';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Redis } from 'ioredis';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { parseConfig } from '../../src/config/load.js';
import { runForeground } from '../../src/runs/foreground.js';
import { createMemoryStore } from '../../src/state/memory-store.js';
import { lanesOf } from '../../src/sync/index.js';
import { startTestEmulator, type TestEmulator } from '../helpers/emulator.js';
import { captureLogs, dropPrefix, REDIS_URL, testRedis, uniquePrefix } from '../queue/helpers.js';
import { apiYaml, COLUMNS, csv, lanesDeps, row } from '../sync/helpers/feed.js';

let te: TestEmulator;
let dir: string;
let redis: Redis;
const prefix = uniquePrefix();
beforeAll(async () => {
  te = await startTestEmulator();
  redis = testRedis();
  dir = await mkdtemp(join(tmpdir(), 'feedsync-unreleased-'));
  await writeFile(join(dir, 'feed.csv'), csv([row(1), row(2)], COLUMNS));
});
afterAll(async () => {
  await te.close();
  await dropPrefix(redis, prefix);
  await redis.quit();
  await rm(dir, { recursive: true, force: true });
});

/** the same connection, but for the lock release's script when `refuse` is set */
function refusingRelease(refuse: boolean): Redis {
  return new Proxy(redis, {
    get: (target, name) => {
      const v: unknown = Reflect.get(target, name);
      if (typeof v !== 'function') return v;
      return (...args: unknown[]) =>
        refuse && name === 'eval' && String(args[0]).includes('local freed')
          ? Promise.reject(new Error('Connection is closed.'))
          : (v as (...a: unknown[]) => unknown).apply(target, args);
    },
  });
}

async function run(chatbot: string, refuse: boolean) {
  const yaml = [
    ...apiYaml(te.url),
    `redis: { url: "${REDIS_URL}", prefix: ${prefix} }`,
    'worker: { lockDurationMs: 3000 }',
    'feeds:',
    '  - name: homes',
    `    chatbot: ${chatbot}`,
    '    source: { kind: csv, path: feed.csv }',
    `    mapping: { fields: { ${COLUMNS.map((c) => `${c}: ${c}`).join(', ')} } }`,
  ].join('\n');
  const config = { config: parseConfig(yaml, 'test.yaml', {}), file: join(dir, 'test.yaml'), dir };
  const { logger, warnings } = captureLogs();
  const reports = await runForeground(
    { config, lanes: lanesOf(config.config.feeds[0]!), opts: {}, signal: new AbortController().signal },
    { ...lanesDeps(config, te.api, createMemoryStore()), redis: refusingRelease(refuse), logger },
  );
  return { reports, warnings: warnings() };
}

describe('a foreground run whose chatbot lock is not released', () => {
  it('reports as a run whose release succeeds, and warns once: the chatbot, the error, when the lock frees itself', async () => {
    const fine = await run('SN-RELEASED', false);
    const refused = await run('SN-UNRELEASED', true);
    const outcome = (r: (typeof fine.reports)[number]) => ({
      outcome: 'outcome' in r ? r.outcome : undefined,
      created: 'counts' in r ? r.counts.created : undefined,
    });
    expect(fine.reports.map(outcome)).toEqual([{ outcome: 'ok', created: 2 }]);
    expect(refused.reports.map(outcome)).toEqual(fine.reports.map(outcome));
    expect(fine.warnings).toEqual([]);
    expect(refused.warnings).toEqual([
      expect.objectContaining({
        chatbot: 'SN-UNRELEASED',
        err: expect.objectContaining({ message: 'Connection is closed.' }),
        msg: 'the lock of chatbot SN-UNRELEASED was not released (Connection is closed.): it frees itself within 3 s (worker.lockDurationMs), and a run of the chatbot waits for it until then',
      }),
    ]);
    expect(await redis.exists(`${prefix}:lock:chatbot:SN-UNRELEASED:sync`)).toBe(1);
  });
});
