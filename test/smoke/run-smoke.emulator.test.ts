// The smoke against the emulator over HTTP: it passes on a healthy chatbot and fails, with the
// right reason, on each way the service can go wrong.
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import type { ChatbotConfig } from '../../src/config/schema.js';
import { silentLogger } from '../../src/log.js';
import { feedsyncCommand } from '../../src/format/invocation.js';
import { pushSettings } from '../../src/settings/index.js';
import { runSmoke } from '../../src/smoke/index.js';
import { createMemoryStore } from '../../src/state/memory-store.js';
import { sampleListing, startTestEmulator, type TestEmulator } from '../helpers/emulator.js';

const cmd = feedsyncCommand().replace(/[.*+?^${}()|[\]\\]/g, '\\$&');

const SN = 'SN-OAK';
const SUFFIX = ' -- Oak Realty';

let t: TestEmulator;
let oak: ChatbotConfig;
beforeAll(async () => {
  t = await startTestEmulator({ chatbots: [SN] });
});
afterAll(() => t.close());
beforeEach(async () => {
  await t.reset();
  t.emulator.configure({ faultRate: 0, errorsAs200: false, answerMode: 'normal', streamFraming: 'sse' });
  await t.api.createListing(sampleListing({ SerialNumber: SN }));
  oak = {
    serialNumber: SN,
    settings: { Name: 'Oak Realty', AnswerSuffix: SUFFIX },
    smoke: { sessionId: await t.session(SN), message: 'Any 3 bedroom homes in Austin?', stream: true },
  };
});

const smoke = (chatbots = [oak]) => runSmoke(chatbots, { api: t.api, logger: silentLogger });
const failed = (report: Awaited<ReturnType<typeof smoke>>) =>
  report.chatbots[0]?.checks.filter((c) => !c.ok).map((c) => c.name);
const asks = async () => (await t.stats()).requests['/chat/Chat/ClientAsk'] ?? {};

describe('runSmoke against the emulator', () => {
  it('passes once the settings were pushed, plain and streamed, with timings', async () => {
    await pushSettings([oak], { api: t.api, store: createMemoryStore(), logger: silentLogger });
    const report = await smoke();
    expect(report.outcome).toBe('ok');
    const [result] = report.chatbots;
    expect(result?.checks.every((c) => c.ok)).toBe(true);
    expect(result?.checks.map((c) => c.name)).toContain('stream.suffix');
    expect(result?.firstFragmentMs).toBeGreaterThanOrEqual(0);
    expect(result?.streamMs).toBeGreaterThanOrEqual(result?.firstFragmentMs ?? 0);
    expect(await asks()).toEqual({ '200': 2 });
  });

  for (const framing of ['sse', 'lines', 'concat'] as const) {
    it(`passes with stream framing ${framing}`, async () => {
      t.emulator.configure({ streamFraming: framing });
      const plain: ChatbotConfig = { ...oak, settings: {} };
      const report = await smoke([plain]);
      expect(report.chatbots[0]?.checks.filter((c) => !c.ok)).toEqual([]);
      expect(report.chatbots[0]?.checks.find((c) => c.name === 'stream.join')?.detail).toMatch(
        /^\d+ fragment\(s\) join to the final Answer$/,
      );
    });
  }

  it('fails with the HTTP error when the service answers 503, calling once each', async () => {
    t.emulator.configure({ faultRate: 1, faults: ['503'] });
    const report = await smoke([{ ...oak, settings: {} }]);
    expect(report.outcome).toBe('failed');
    expect(failed(report)).toEqual(['ask.success', 'stream.success']);
    expect(report.chatbots[0]?.reason).toMatch(/^ask\.success: \/chat\/Chat\/ClientAsk failed: HTTP 503/);
    expect(await asks()).toEqual({ '503': 2 });
  });

  it('fails with the Code when the service answers errors as HTTP 200 with Success false', async () => {
    t.emulator.configure({ faultRate: 1, faults: ['500'], errorsAs200: true });
    const report = await smoke([{ ...oak, settings: {} }]);
    expect(failed(report)).toEqual(['ask.success', 'stream.success']);
    expect(report.chatbots[0]?.reason).toMatch(/^ask\.success: \/chat\/Chat\/ClientAsk failed: HTTP 200, Code 500/);
  });

  it('fails naming the unknown session', async () => {
    const report = await smoke([{ ...oak, settings: {}, smoke: { ...oak.smoke!, sessionId: 987654 } }]);
    expect(failed(report)).toEqual(['ask.success', 'stream.success']);
    expect(report.chatbots[0]?.reason).toMatch(/Code 404.*sessionID 987654 not found/);
  });

  it('fails on an empty answer', async () => {
    t.emulator.configure({ answerMode: 'empty' });
    const report = await smoke([{ ...oak, settings: {} }]);
    expect(report.chatbots[0]?.reason).toBe('ask.content: the answer is empty');
    expect(failed(report)).toEqual(['ask.content', 'ask.noAnswer', 'stream.content']);
  });

  it('fails when the config sets an AnswerSuffix the chatbot was never pushed', async () => {
    const report = await smoke();
    expect(failed(report)).toEqual(['ask.suffix', 'stream.suffix']);
    expect(report.chatbots[0]?.reason).toMatch(/^ask\.suffix: AnswerSuffix " -- Oak Realty" missing at the end of /);
    expect(report.summary).toMatch(/^smoke: 0 passed, 1 failed \(SN-OAK ask\.suffix: .*\) in \d+ ms$/);
  });

  it('fails when the session is another chatbot’s: its answers lack this chatbot’s AnswerSuffix', async () => {
    await pushSettings([oak], { api: t.api, store: createMemoryStore(), logger: silentLogger });
    const other = t.emulator.createSession('SN-OTHER');
    const report = await smoke([{ ...oak, smoke: { ...oak.smoke!, sessionId: other } }]);
    expect(failed(report)).toContain('ask.suffix');
    const detail = report.chatbots[0]?.checks.find((c) => c.name === 'ask.suffix')?.detail;
    expect(detail).toMatch(
      new RegExp(
        `AnswerSuffix " -- Oak Realty" missing at the end of .*; push the settings \\(${cmd} settings\\), and check that smoke\\.sessionId is a session of this chatbot, not another's$`,
      ),
    );
  });

  it('fails on a stream that breaks off before its final object', async () => {
    t.emulator.configure({ answerMode: 'broken-stream' });
    const report = await smoke([{ ...oak, settings: {} }]);
    expect(failed(report)).toEqual(['stream.success']);
    expect(report.chatbots[0]?.reason).toMatch(/^stream\.success: .*final object/);
  });
});
