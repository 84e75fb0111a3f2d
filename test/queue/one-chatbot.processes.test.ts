// Invariant 4 with two real worker processes and the real Redis: two feeds of one chatbot, both
// scheduled on the same second, 20 rounds. Their crons are written differently, so each has its own
// scheduler and job (crons written alike would share one job: chatbot-tick.processes.test.ts), and
// the two jobs race for the chatbot. The chatbot's lock keeps them from running at once, and
// each feed leaves the other's listings alone (the writers come from the config, the state is
// loaded and committed under the lock): every listing of both feeds is there once, none was ever
// deleted.
import '../setup/needs-redis.js';
import { writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { listRuns } from '../../src/queue/index.js';
import { startTestEmulator, TEST_SECRET_KEY, TEST_SESSION_KEY } from '../helpers/emulator.js';
import { COLUMNS, csv, rows } from '../sync/helpers/feed.js';
import { REDIS_URL, until } from './helpers.js';
import { useDeployment } from './use-deployment.js';

const d = useDeployment();

const ROUNDS = 20;

describe('two feeds of one chatbot on two worker processes', () => {
  it(`scheduled on the same second for ${ROUNDS} rounds: every listing of both feeds present once, none deleted`, async () => {
    const emu = (d.emu = await startTestEmulator({ latencyMs: 2 }));
    const mapping = `{ fields: { ${COLUMNS.map((c) => `${c}: ${c}`).join(', ')} } }`;
    await writeFile(join(d.dir, 'a.csv'), csv(rows(12, 1)));
    await writeFile(join(d.dir, 'b.csv'), csv(rows(12, 501)));
    const feed = (name: string, cron: string) => `  - name: ${name}
    chatbot: SN-SHARED
    source: { kind: csv, path: ${name}.csv }
    mapping: ${mapping}
    deletes: { maxFraction: 1 }
    schedule: { cron: "${cron}" }
`;
    const file = join(d.dir, 'feedsync.yaml');
    await writeFile(
      file,
      `api: { baseUrl: "${emu.url}", secretKey: ${TEST_SECRET_KEY}, sessionKey: ${TEST_SESSION_KEY}, concurrency: 4, retries: 2 }
redis: { url: "${REDIS_URL}", prefix: ${d.prefix} }
worker: { lockDurationMs: 2000, stalledIntervalMs: 1000, shutdownTimeoutMs: 3000, concurrency: 2, watchdogSeconds: 60, minScheduleIntervalSeconds: 1 }
feeds:
${feed('a', '* * * * * *')}${feed('b', '*/1 * * * * *')}`,
    );
    await d.start(file);
    await d.start(file);
    for (const name of ['a', 'b']) {
      await until(
        `${ROUNDS} runs of feed ${name}`,
        async () =>
          (await listRuns(d.redis, d.prefix, { feed: name, limit: ROUNDS + 10 })).filter((r) => r.outcome === 'ok')
            .length >= ROUNDS,
        120_000,
      );
    }
    const counts = new Map<string, number>();
    for (const l of await emu.listings('SN-SHARED')) counts.set(l.MLSNumber, (counts.get(l.MLSNumber) ?? 0) + 1);
    const expected = [...rows(12, 1), ...rows(12, 501)].map((r) => String(r.MLSNumber)).sort();
    expect([...counts.keys()].sort()).toEqual(expected);
    expect([...counts.values()].every((n) => n === 1)).toBe(true);
    expect((await emu.stats()).requests['/chat/Chatbot/RealEstateDelete']).toBeUndefined();
    // both processes ran syncs
    expect(d.workers.every((w) => /"msg":"synced [ab] /.test(w.logs()))).toBe(true);
  }, 180_000);
});
