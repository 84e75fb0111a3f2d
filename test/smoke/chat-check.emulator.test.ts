// The chat check against the emulator, through `feedsync sync` as a person runs it: after the sync
// it asks the chatbot (the smoke session) about listings just created or changed and passes
// ("answerable 3/3"); told to leave one listing out of its answers, the emulator makes the check
// fail naming that listing — in the report, in `runs show`, and as a "chat" alert.
import { writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestEmulator, TEST_SECRET_KEY, TEST_SESSION_KEY, type TestEmulator } from '../helpers/emulator.js';
import { rawPost } from '../helpers/raw-post.js';
import { startHttpReceiver } from '../alerts/receivers.js';
import { feedsync } from '../settings/run-cli.js';
import { createSyncEnv, csv, homesConfigYaml, row, rows, SN, type SyncEnv } from '../sync/helpers/feed.js';

let te: TestEmulator;
let env: SyncEnv;
let hook: Awaited<ReturnType<typeof startHttpReceiver>>;
let config: string;
const SESSION = 4242;

beforeAll(async () => {
  te = await startTestEmulator();
  env = await createSyncEnv();
  hook = await startHttpReceiver();
  await rawPost(`${te.url}/__emulator/sessions`, { serialNumber: SN, sessionID: SESSION });
  config = join(env.dir, 'feedsync.yaml');
  const top = [
    'chatbots:',
    `  - { serialNumber: ${SN}, smoke: { sessionId: ${SESSION}, message: "hello" } }`,
    'chatCheck: { enabled: true, listings: 3 }',
    'alerts:',
    '  rules: { closeAfterMinutes: 0 }', // resolved on the next good run (by default once clear for 60 minutes)
    `  channels: [{ kind: webhook, url: "${hook.url}", secret: whsec-chat-check-1 }]`,
  ];
  await writeFile(
    config,
    homesConfigYaml(
      te.url,
      { secretKey: TEST_SECRET_KEY, sessionKey: TEST_SESSION_KEY },
      { deletes: '{ maxFraction: 0.5 }', top },
    ),
  );
});
afterAll(async () => {
  await te.close();
  await hook.close();
  await env.cleanup();
});

describe('chat check', () => {
  it('passes when the chatbot knows the listings, fails naming the one it leaves out', async () => {
    const homes = join(env.dir, 'homes.csv');
    await writeFile(homes, csv(rows(5)));
    const first = await feedsync(['sync', '--config', config, '--json']);
    expect(first.code).toBe(0);
    const [report] = JSON.parse(first.stdout).reports;
    expect(report.chat).toMatchObject({ asked: 3, answerable: 3, missing: [] });
    expect(report.chat.results[0].question).toContain('MLS0001');
    expect(report.chat.results[0].answer).toContain('MLS0001');
    expect(report.summary).toContain('chat check: answerable 3/3');

    // two prices change; the chatbot is told to leave MLS0002 out of its answers
    await writeFile(
      homes,
      csv(rows(5).map((r, i) => (i === 1 || i === 3 ? row(i + 1, { SalePrice: 777000 + i }) : r))),
    );
    const hidden = await rawPost(`${te.url}/__emulator/hide`, { serialNumber: SN, keys: ['MLS0002'] });
    expect(hidden.status).toBe(200);
    const second = await feedsync(['sync', '--config', config]);
    expect(second.code).toBe(0);
    expect(second.stderr).toContain('chat check: answerable 1/2 (not answered: MLS0002)');
    const runId = /runs show (\S+)/.exec(second.stderr)![1]!;

    const shown = await feedsync(['runs', 'show', runId, '--config', config]);
    expect(shown.stdout).toContain('chat check: answerable 1/2 — not answered: MLS0002');

    const alerts = hook.received.map((r) => JSON.parse(r.body));
    expect(alerts).toHaveLength(1);
    expect(alerts[0]).toMatchObject({ status: 'firing', condition: 'chat', feed: 'homes' });
    expect(alerts[0].message).toContain('could not answer about MLS0002 (answerable 1/2)');

    // shown again, and changed again: the check passes and the alert resolves
    await rawPost(`${te.url}/__emulator/hide`, { serialNumber: SN, keys: [] });
    await writeFile(homes, csv(rows(5).map((r, i) => (i === 1 ? row(i + 1, { SalePrice: 888000 }) : r))));
    const third = await feedsync(['sync', '--config', config]);
    expect(third.stderr).toContain('chat check: answerable 2/2');
    expect(hook.received.map((r) => JSON.parse(r.body).status)).toEqual(['firing', 'resolved']);
  }, 90_000);
});
