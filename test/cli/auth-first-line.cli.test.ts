// A wrong api.secretKey as a cron user meets it: `feedsync sync` prints the one line that says what
// to fix first, and once: no warning per write that was in flight, no "feed not read whole" (the
// read stopped because the writes did), the refused writes on one line of failures.
import { writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestEmulator, TEST_SESSION_KEY, type TestEmulator } from '../helpers/emulator.js';
import { feedsync } from '../settings/run-cli.js';
import { createSyncEnv, csv, homesConfigYaml, rows, SN, type SyncEnv } from '../sync/helpers/feed.js';

let te: TestEmulator;
let env: SyncEnv;
let config: string;

beforeAll(async () => {
  te = await startTestEmulator();
  env = await createSyncEnv();
  config = join(env.dir, 'feedsync.yaml');
  await writeFile(join(env.dir, 'homes.csv'), csv(rows(40)));
  await writeFile(
    config,
    homesConfigYaml(
      te.url,
      { secretKey: 'wrong-secret-key-000', sessionKey: TEST_SESSION_KEY },
      { top: ['  concurrency: 8'] },
    ),
  );
});

afterAll(async () => {
  await te.close();
  await env.cleanup();
});

describe('a refused credential', () => {
  it('is the first line of the output, said once; the writes it refused are one line', async () => {
    const r = await feedsync(['sync', '--config', config]);
    expect(r.code).toBe(1);
    const line =
      'the Chatbot Service refused the credentials (HTTP 401) on /chat/Chatbot/RealEstateCreate: check api.secretKey; no further call was made';
    expect(r.stderr.split('\n')[0]).toBe(`feed homes → chatbot ${SN}: failed — ${line}`);
    expect(r.stderr.split('check api.secretKey')).toHaveLength(2);
    expect(r.stderr).not.toContain('"level"');
    expect(r.stderr).not.toContain('feed not read whole');
    expect(r.stderr).not.toContain('wrong-secret-key-000');
    const failures = /failures \((\d+)\):\n((?: {4}.*\n)*)/.exec(r.stderr);
    expect(Number(failures?.[1])).toBeGreaterThan(0);
    expect(failures?.[2]!.trimEnd().split('\n')).toHaveLength(1);
    expect(await te.listings(SN)).toHaveLength(0);
  });
});
