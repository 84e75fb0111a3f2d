import { describe, expect, it } from 'vitest';
import type { ChatbotConfig } from '../../src/config/schema.js';
import { ConfigError, JOB_LOCK_LOST, NetworkError, WORKER_SHUTDOWN } from '../../src/errors.js';
import { silentLogger } from '../../src/log.js';
import { pushSettings, SETTINGS_HASH_NS, settingsHash } from '../../src/settings/index.js';
import { createMemoryStore } from '../../src/state/memory-store.js';
import { fakeApi } from './fake-api.js';

const oak: ChatbotConfig = {
  serialNumber: 'SN-OAK',
  settings: { Name: 'Oak Realty', AnswerSuffix: ' -- Oak', MessageLimit: -1 },
};
const elm: ChatbotConfig = {
  serialNumber: 'SN-ELM',
  settings: { Name: 'Elm Homes', ChatBubbleColor: 'red', TalkToHumanEmail: 'nobody' },
};
const bare: ChatbotConfig = { serialNumber: 'SN-BARE' };

function setup(behaviour?: Parameters<typeof fakeApi>[0]) {
  const api = fakeApi(behaviour);
  const store = createMemoryStore();
  return { api, store, deps: { api, store, logger: silentLogger } };
}

describe('pushSettings', () => {
  it('sends each chatbot its settings with Edit and remembers the hash', async () => {
    const { api, store, deps } = setup();
    const report = await pushSettings([oak, bare], deps);
    expect(api.edits).toEqual([
      { serialNumber: 'SN-OAK', Name: 'Oak Realty', AnswerSuffix: ' -- Oak', MessageLimit: -1 },
    ]);
    expect(report.outcome).toBe('ok');
    expect(report.chatbots).toEqual([
      { serialNumber: 'SN-OAK', status: 'pushed', fields: ['Name', 'AnswerSuffix', 'MessageLimit'] },
    ]);
    expect(await store.get(SETTINGS_HASH_NS, 'SN-OAK')).toBe(settingsHash('SN-OAK', oak.settings!));
    expect(report.summary).toMatch(/^settings: 1 pushed, 0 unchanged, 0 invalid, 0 failed in \d+ ms$/);
  });

  it('skips unchanged settings, whatever their key order, and pushes them with force', async () => {
    const { api, deps } = setup();
    await pushSettings([oak], deps);
    const reordered: ChatbotConfig = {
      serialNumber: 'SN-OAK',
      settings: { MessageLimit: -1, AnswerSuffix: ' -- Oak', Name: 'Oak Realty' },
    };
    const second = await pushSettings([reordered], deps);
    expect(second.chatbots.map((r) => r.status)).toEqual(['unchanged']);
    expect(api.edits).toHaveLength(1);
    const forced = await pushSettings([oak], deps, { force: true });
    expect(forced.chatbots.map((r) => r.status)).toEqual(['pushed']);
    expect(api.edits).toHaveLength(2);
  });

  it('pushes again when a setting changed', async () => {
    const { api, deps } = setup();
    await pushSettings([oak], deps);
    await pushSettings([{ ...oak, settings: { ...oak.settings, Name: 'Oak Realty Group' } }], deps);
    expect(api.edits.map((e) => e.Name)).toEqual(['Oak Realty', 'Oak Realty Group']);
  });

  it('dry run shows the Edit body and what would be skipped, and writes nothing', async () => {
    const { api, store, deps } = setup();
    const first = await pushSettings([oak], deps, { dryRun: true });
    expect(first.chatbots).toEqual([
      {
        serialNumber: 'SN-OAK',
        status: 'would-push',
        fields: ['Name', 'AnswerSuffix', 'MessageLimit'],
        body: { serialNumber: 'SN-OAK', ...oak.settings },
      },
    ]);
    expect(api.edits).toEqual([]);
    expect(await store.getAll(SETTINGS_HASH_NS)).toEqual(new Map());
    await pushSettings([oak], deps);
    const later = await pushSettings([oak], deps, { dryRun: true });
    expect(later.chatbots.map((r) => r.status)).toEqual(['unchanged']);
    expect(later.summary).toMatch(/^settings \(dry run\): 0 would push, 1 unchanged, 0 invalid in \d+ ms$/);
    expect(api.edits).toHaveLength(1);
  });

  it('sends nothing for a chatbot with invalid settings, lists every issue, and goes on with the others', async () => {
    const { api, deps } = setup();
    const report = await pushSettings([elm, oak], deps);
    expect(api.edits.map((e) => e.serialNumber)).toEqual(['SN-OAK']);
    expect(report.outcome).toBe('failed');
    expect(report.retryable).toBe(false);
    const invalid = report.chatbots[0]!;
    expect(invalid.status).toBe('invalid');
    expect(invalid.issues?.map((i) => i.field)).toEqual([
      'chatbots[0].settings.ChatBubbleColor',
      'chatbots[0].settings.TalkToHumanEmail',
    ]);
  });

  it('names issues by the position in the config when only some chatbots are pushed', async () => {
    const { api, deps } = setup();
    const report = await pushSettings([oak, bare, elm], deps, { only: ['SN-ELM'] });
    expect(api.edits).toEqual([]);
    expect(report.chatbots[0]?.issues?.[0]?.field).toBe('chatbots[2].settings.ChatBubbleColor');
  });

  it('refuses an unknown chatbot, naming the known ones', async () => {
    const { deps } = setup();
    await expect(pushSettings([oak, elm], deps, { only: ['SN-NOPE'] })).rejects.toThrow(ConfigError);
    await expect(pushSettings([oak, elm], deps, { only: ['SN-NOPE'] })).rejects.toThrow(
      /unknown chatbot SN-NOPE: the config has SN-OAK, SN-ELM/,
    );
  });

  it('fails a chatbot whose Edit answers Data other than 1, and remembers nothing', async () => {
    const { store, deps } = setup({ editData: 0 });
    const report = await pushSettings([oak], deps);
    expect(report.outcome).toBe('failed');
    expect(report.chatbots[0]).toMatchObject({
      status: 'failed',
      error: { message: 'Edit answered Data 0 (1 means success)', retryable: false },
    });
    expect(await store.get(SETTINGS_HASH_NS, 'SN-OAK')).toBeUndefined();
  });

  it('fails a chatbot whose Edit throws, and says whether a rerun may help', async () => {
    const { store, deps } = setup({ editError: new NetworkError('/chat/Chatbot/Edit', new Error('ECONNRESET')) });
    const report = await pushSettings([oak], deps);
    expect(report.chatbots[0]).toMatchObject({ status: 'failed', error: { code: 'NETWORK', retryable: true } });
    expect(report.retryable).toBe(true);
    expect(report.summary).toMatch(/0 pushed, 0 unchanged, 0 invalid, 1 failed/);
    expect(await store.get(SETTINGS_HASH_NS, 'SN-OAK')).toBeUndefined();
  });

  it('stops sending when the signal is aborted', async () => {
    const { api, deps } = setup();
    const controller = new AbortController();
    controller.abort();
    const report = await pushSettings([oak], { ...deps, signal: controller.signal });
    expect(api.edits).toEqual([]);
    expect(report.outcome).toBe('aborted');
    expect(report.chatbots[0]).toMatchObject({ status: 'failed', error: { code: 'ABORTED' } });
  });

  it("says the stop's word when a worker's shutdown or a takeover stopped it (no failed run), as a sync does", async () => {
    for (const [reason, word] of [
      [WORKER_SHUTDOWN, 'handed-back'],
      [JOB_LOCK_LOST, 'taken-over'],
    ] as const) {
      const { api, deps } = setup();
      const controller = new AbortController();
      controller.abort(reason);
      const report = await pushSettings([oak], { ...deps, signal: controller.signal });
      expect(api.edits).toEqual([]);
      expect(report.outcome).toBe(word);
    }
  });
});
