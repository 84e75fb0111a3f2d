// Done-when of the alerts: real syncs (the CLI, against the emulator) trip the delete guard; a
// webhook receiver started here gets ONE signed alert for it — not one per run while it holds —
// and ONE "resolved" after the feed is fixed (the half-empty feed also trips the valid-records-drop
// rule, which alerts and resolves once beside it). Nothing was deleted meanwhile.
import { createHmac } from 'node:crypto';
import { writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { TEST_SECRET_KEY, TEST_SESSION_KEY } from '../helpers/emulator.js';
import { feedsync } from '../settings/run-cli.js';
import { csv, homesConfigYaml, rows, SN, useEmulatorSync } from '../sync/helpers/feed.js';
import { startHttpReceiver } from './receivers.js';

let hook: Awaited<ReturnType<typeof startHttpReceiver>>;
let config: string;
const SECRET = 'whsec-guard-test-9f2';

const sync = useEmulatorSync({ perFile: true });
beforeAll(async () => {
  hook = await startHttpReceiver();
  config = join(sync.env().dir, 'feedsync.yaml');
  // resolved on the first good run (by default an alert resolves once clear for 60 minutes: rules.test.ts)
  const top = [
    'alerts:',
    '  rules: { closeAfterMinutes: 0 }',
    '  channels:',
    `    - { kind: webhook, url: "${hook.url}/alerts", secret: ${SECRET} }`,
  ];
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
  await hook.close();
});

describe('alert on a tripped guard', () => {
  it('one guard alert while the guard holds, one "resolved" after the fix', async () => {
    const homes = join(sync.env().dir, 'homes.csv');
    await writeFile(homes, csv(rows(10)));
    expect((await feedsync(['sync', '--config', config])).code).toBe(0);
    expect(hook.received).toHaveLength(0);

    // a truncated export: half the feed is missing
    await writeFile(homes, csv(rows(5)));
    const tripped = await feedsync(['sync', '--config', config]);
    expect(tripped.code).toBe(3);
    const again = await feedsync(['sync', '--config', config]);
    expect(again.code).toBe(3);
    expect((await sync.te().listings(SN)).length).toBe(10); // nothing deleted
    // the truncated feed also dropped the valid records by half: that rule fires beside the guard, once too
    const seen = () => hook.received.map((r) => JSON.parse(r.body) as { condition: string; status: string });
    expect(
      seen()
        .map((a) => `${a.status} ${a.condition}`)
        .sort(),
    ).toEqual(['firing dropped', 'firing guard']);

    await writeFile(homes, csv(rows(10)));
    expect((await feedsync(['sync', '--config', config])).code).toBe(0);
    expect(
      seen()
        .map((a) => `${a.status} ${a.condition}`)
        .sort(),
    ).toEqual(['firing dropped', 'firing guard', 'resolved dropped', 'resolved guard']);

    const [firing, resolved] = hook.received
      .filter((r) => JSON.parse(r.body).condition === 'guard')
      .map((r) => {
        expect(r.headers['x-feedsync-signature']).toBe(
          `sha256=${createHmac('sha256', SECRET).update(`${r.headers['x-feedsync-timestamp']}.${r.body}`).digest('hex')}`,
        );
        return JSON.parse(r.body);
      });
    expect(firing).toMatchObject({
      type: 'feedsync.alert',
      status: 'firing',
      condition: 'guard',
      feed: 'homes',
      chatbot: SN,
    });
    expect(firing.message).toContain('exceed deletes.maxFraction');
    expect(firing.hint).toContain(`feedsync runs show ${firing.runId}`);
    expect(resolved).toMatchObject({ status: 'resolved', condition: 'guard', feed: 'homes', since: firing.since });
  }, 90_000);
});
