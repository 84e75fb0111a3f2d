// `feedsync settings` as a user runs it: a child process against the emulator over HTTP.
import { rm } from 'node:fs/promises';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestEmulator, type TestEmulator } from '../helpers/emulator.js';
import { feedsync, writeTestConfig } from './run-cli.js';

let t: TestEmulator;
let dir: string;
let config: string;
beforeAll(async () => {
  t = await startTestEmulator({ chatbots: ['SN-OAK', 'SN-ELM'] });
  ({ dir, config } = await writeTestConfig(t.url, [
    '  - serialNumber: SN-OAK',
    '    settings: { Name: Oak Realty, AnswerSuffix: " -- Oak", AIResponseLanguage: English }',
    '  - serialNumber: SN-ELM',
    '    settings: { Name: Elm Homes, TalkToHumanEmail: nobody, AIResponseLanguage: es }',
  ]));
});
afterAll(async () => {
  await t.close();
  await rm(dir, { recursive: true, force: true });
});

const edits = async () => (await t.stats()).requests['/chat/Chatbot/Edit']?.['200'] ?? 0;

describe('feedsync settings', () => {
  it('dry run prints one JSON report, sends nothing; exit 1 because one chatbot is invalid', async () => {
    const run = await feedsync(['settings', '--config', config, '--dry-run', '--json']);
    expect(run.code).toBe(1);
    const report = JSON.parse(run.stdout);
    expect(report.chatbots.map((r: { status: string }) => r.status)).toEqual(['would-push', 'invalid']);
    expect(report.chatbots[1].issues.map((i: { field: string }) => i.field)).toEqual([
      'chatbots[1].settings.TalkToHumanEmail',
      'chatbots[1].settings.AIResponseLanguage',
    ]);
    expect(await edits()).toBe(0);
  });

  it('pushes one chatbot, then finds it unchanged; the table goes to stderr', async () => {
    const first = await feedsync(['settings', '--config', config, '--chatbot', 'SN-OAK']);
    expect(first.code).toBe(0);
    expect(first.stdout).toBe('');
    expect(first.stderr).toMatch(/SN-OAK\s+pushed/);
    expect(first.stderr).toMatch(/settings: 1 pushed, 0 unchanged, 0 invalid, 0 failed in \d+ ms/);
    const state = JSON.parse((await feedsync(['state', 'export', '--config', config])).stdout);
    expect(Object.keys(state['settings-hash'])).toEqual(['SN-OAK']);
    const second = await feedsync(['settings', '--config', config, '--chatbot', 'SN-OAK', '--json']);
    expect(JSON.parse(second.stdout).chatbots[0].status).toBe('unchanged');
    expect(await edits()).toBe(1);
  });

  it('exits 2 on an unknown --chatbot, naming the known ones', async () => {
    const run = await feedsync(['settings', '--config', config, '--chatbot', 'SN-NOPE']);
    expect(run.code).toBe(2);
    expect(run.stderr).toContain('unknown chatbot SN-NOPE: the config has SN-OAK, SN-ELM');
  });
});
