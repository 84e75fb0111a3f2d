// `feedsync smoke` as a user runs it: a child process against the emulator over HTTP.
import { rm } from 'node:fs/promises';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { sampleListing, startTestEmulator, type TestEmulator } from '../helpers/emulator.js';
import { feedsync, writeTestConfig } from '../settings/run-cli.js';

let t: TestEmulator;
let dir: string;
let config: string;
beforeAll(async () => {
  t = await startTestEmulator({ chatbots: ['SN-OAK', 'SN-ELM', 'SN-QUIET'] });
  await t.api.createListing(sampleListing({ SerialNumber: 'SN-OAK' }));
  await t.api.createListing(sampleListing({ SerialNumber: 'SN-ELM' }));
  const oakSession = await t.session('SN-OAK');
  const elmSession = await t.session('SN-ELM');
  ({ dir, config } = await writeTestConfig(t.url, [
    '  - serialNumber: SN-OAK',
    `    smoke: { sessionId: ${oakSession}, message: "Any 3 bedroom homes in Austin?" }`,
    '  - serialNumber: SN-ELM',
    '    settings: { AnswerSuffix: " -- Elm Homes" }', // never pushed: the suffix check fails
    `    smoke: { sessionId: ${elmSession}, message: "Any 3 bedroom homes in Austin?", stream: false }`,
    '  - serialNumber: SN-QUIET',
  ]));
});
afterAll(async () => {
  await t.close();
  await rm(dir, { recursive: true, force: true });
});

describe('feedsync smoke', () => {
  it('exits 0 when the chatbot passes, with the timings in the JSON report', async () => {
    const run = await feedsync(['smoke', '--config', config, '--chatbot', 'SN-OAK', '--json']);
    expect(run.code).toBe(0);
    const report = JSON.parse(run.stdout);
    expect(report.outcome).toBe('ok');
    expect(report.chatbots[0]).toMatchObject({ serialNumber: 'SN-OAK', ok: true });
    expect(report.chatbots[0].firstFragmentMs).toBeTypeOf('number');
  });

  it('exits 1 with the reason when a check fails, and prints it for people on stderr', async () => {
    const run = await feedsync(['smoke', '--config', config]);
    expect(run.code).toBe(1);
    expect(run.stdout).toBe('');
    expect(run.stderr).toMatch(/SN-OAK\s+ok/);
    expect(run.stderr).toContain('SN-ELM ask.suffix: AnswerSuffix " -- Elm Homes" missing at the end of');
    expect(run.stderr).toMatch(/smoke: 1 passed, 1 failed \(SN-ELM ask\.suffix: .*\) in \d+ ms/);
  });

  it('exits 2 for a named chatbot without a smoke message', async () => {
    const run = await feedsync(['smoke', '--config', config, '--chatbot', 'SN-QUIET']);
    expect(run.code).toBe(2);
    expect(run.stderr).toContain('chatbot SN-QUIET has no smoke message in config');
  });
});
