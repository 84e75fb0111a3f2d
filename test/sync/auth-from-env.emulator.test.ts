// A refused credential whose config value comes from an environment variable, as a worker's sync job
// meets it (jobs/listing-sync.ts: the config loaded once, with the variables it read): the run's
// message names the variable behind the key, never its value, for each place a 401/403 can come
// from: the chatbot's list (paging), a write, and the feed's own server. And still no further call.
// (`feedsync sync` says the same words: test/cli/auth-first-line.cli.test.ts.)
import { writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { JOBS } from '../../jobs/index.js';
import { createCallCounter } from '../../src/api/call-counter.js';
import { loadConfig } from '../../src/config/load.js';
import { silentLogger } from '../../src/log.js';
import { TEST_SECRET_KEY, TEST_SESSION_KEY } from '../helpers/emulator.js';
import { startFeedServer } from '../helpers/feed-server.js';
import { csv, homesConfigYaml, requests, rows, SN, total, useEmulatorSync } from './helpers/feed.js';

const emulator = useEmulatorSync();

/** The worker's sync job of feed `homes`, its config `yaml` loaded with the variables `vars`: its report. */
async function jobRun(yaml: string, vars: Record<string, string>) {
  const { dir, store } = emulator.env();
  await writeFile(join(dir, 'homes.csv'), csv(rows(12)));
  await writeFile(join(dir, 'feedsync.yaml'), yaml);
  const config = await loadConfig(join(dir, 'feedsync.yaml'), vars);
  const { secretKey, sessionKey } = config.config.api;
  const report = await JOBS.sync.process(
    { feed: 'homes' },
    {
      config,
      // (the worker's client sends the keys the config holds: runtime.ts)
      runtime: { api: emulator.te().client({ secretKey, sessionKey }), store },
      logger: silentLogger,
      signal: new AbortController().signal,
      jobId: 'auth-from-env-1',
      attempt: { made: 1, max: 1 },
      calls: createCallCounter(),
    },
  );
  expect(report.outcome).toBe('failed');
  expect(JSON.stringify(report)).not.toMatch(/wrong-[a-z-]*-from-env/);
  return report;
}

describe("a refused credential read from the environment, in a worker's job", () => {
  it('the list refuses the session key: names $CHATBOT_SESSION_KEY; nothing paged further, nothing written', async () => {
    const te = emulator.te();
    const yaml = homesConfigYaml(te.url, { secretKey: TEST_SECRET_KEY, sessionKey: '${CHATBOT_SESSION_KEY}' }, {});
    const report = await jobRun(yaml, { CHATBOT_SESSION_KEY: 'wrong-session-key-from-env' });
    expect(report.message).toBe(
      'the Chatbot Service refused the credentials (HTTP 401) on /chat/Chatbot/RealEstateList: check api.sessionKey (from $CHATBOT_SESSION_KEY); no further call was made',
    );
    expect(total(await requests(te, 'RealEstateList'))).toBe(1);
    expect(total(await requests(te, 'RealEstateCreate'))).toBe(0);
  });

  it('a write refuses the secret key: names $CHATBOT_SECRET_KEY; no call after the first refusal', async () => {
    const te = emulator.te();
    const yaml = homesConfigYaml(
      te.url,
      { secretKey: '${CHATBOT_SECRET_KEY}', sessionKey: TEST_SESSION_KEY },
      { top: ['  concurrency: 1'] },
    );
    const report = await jobRun(yaml, { CHATBOT_SECRET_KEY: 'wrong-secret-key-from-env' });
    const said =
      'the Chatbot Service refused the credentials (HTTP 401) on /chat/Chatbot/RealEstateCreate: check api.secretKey (from $CHATBOT_SECRET_KEY); no further call was made';
    expect(report.message).toBe(said);
    // (the read stopped because the writes did: the same words, so a person reads them once)
    expect(report.source).toMatchObject({ complete: false, error: said });
    expect(total(await requests(te, 'RealEstateCreate'))).toBe(1);
    expect(await te.listings(SN)).toHaveLength(0);
  });

  it("the feed's server refuses its bearer token: names $HOMES_TOKEN under the feed; nothing asked of it again, nothing written", async () => {
    const te = emulator.te();
    const server = emulator.closeAfterTest(await startFeedServer({ status: 403, body: 'forbidden' }));
    const yaml = homesConfigYaml(te.url, { secretKey: TEST_SECRET_KEY, sessionKey: TEST_SESSION_KEY }, {}).replace(
      'source: { kind: csv, path: homes.csv }',
      `source: { kind: csv, url: "${server.url}", bearerToken: "\${HOMES_TOKEN}", retries: 3 }`,
    );
    const report = await jobRun(yaml, { HOMES_TOKEN: 'wrong-token-from-env' });
    expect(report.message).toBe(
      `the feed server refused access (HTTP 403): check feeds[homes].source.bearerToken (or the source's headers) (from $HOMES_TOKEN); nothing further was asked of it (${server.url}: HTTP 403 Forbidden: forbidden)`,
    );
    expect(server.requests).toBe(1);
    expect(total(await requests(te, 'RealEstateCreate'))).toBe(0);
  });
});
