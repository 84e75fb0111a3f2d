import { describe, expect, it } from 'vitest';
import type { ChatbotConfig } from '../../src/config/schema.js';
import { ApiError, ConfigError, JOB_LOCK_LOST, WORKER_SHUTDOWN } from '../../src/errors.js';
import { feedsyncCommand } from '../../src/format/invocation.js';
import { silentLogger } from '../../src/log.js';
import { runSmoke } from '../../src/smoke/index.js';
import { fakeApi } from '../settings/fake-api.js';

const smoke = { sessionId: 7, message: 'Any 3 bedroom homes in Austin?', stream: true };
const oak: ChatbotConfig = { serialNumber: 'SN-OAK', smoke };
const failedChecks = (report: Awaited<ReturnType<typeof runSmoke>>) =>
  report.chatbots.flatMap((r) => r.checks.filter((c) => !c.ok).map((c) => c.name));

describe('runSmoke', () => {
  it('passes when both answers check out, and reports the timings', async () => {
    const api = fakeApi();
    const report = await runSmoke([oak, { serialNumber: 'SN-NONE' }], { api, logger: silentLogger });
    expect(report.outcome).toBe('ok');
    expect(api.asks).toEqual([{ sessionID: 7, content: smoke.message }]);
    expect(api.streams).toEqual([{ sessionID: 7, content: smoke.message, stream: true }]);
    const [result] = report.chatbots;
    expect(report.chatbots).toHaveLength(1);
    expect(result?.ok).toBe(true);
    expect(result?.checks.map((c) => c.name)).toEqual([
      'ask.success',
      'ask.content',
      'ask.noAnswer',
      'ask.totalToken',
      'stream.success',
      'stream.content',
      'stream.totalToken',
      'stream.join',
    ]);
    expect(result?.firstFragmentMs).toBeTypeOf('number');
    expect(result?.streamMs).toBeTypeOf('number');
    expect(report.summary).toMatch(/^smoke: 1 passed, 0 failed in \d+ ms$/);
  });

  it("says the stop's word when a worker's shutdown or a takeover stopped it (no failed run), as a sync does", async () => {
    for (const [reason, word] of [
      [WORKER_SHUTDOWN, 'handed-back'],
      [JOB_LOCK_LOST, 'taken-over'],
      [undefined, 'aborted'],
    ] as const) {
      const controller = new AbortController();
      controller.abort(reason);
      const report = await runSmoke([oak], { api: fakeApi(), logger: silentLogger, signal: controller.signal });
      expect(report.outcome).toBe(word);
    }
  });

  it('skips the streamed call when smoke.stream is false', async () => {
    const api = fakeApi();
    const report = await runSmoke([{ serialNumber: 'SN-OAK', smoke: { ...smoke, stream: false } }], {
      api,
      logger: silentLogger,
    });
    expect(api.streams).toEqual([]);
    expect(report.chatbots[0]?.streamMs).toBeUndefined();
    expect(report.outcome).toBe('ok');
  });

  it('fails with the error when the service answers Success false', async () => {
    const api = fakeApi({ askError: new ApiError('/chat/Chat/ClientAsk', 200, 404, 'session not found') });
    const report = await runSmoke([oak], { api, logger: silentLogger });
    expect(report.outcome).toBe('failed');
    expect(report.chatbots[0]?.reason).toBe(
      'ask.success: /chat/Chat/ClientAsk failed: HTTP 200, Code 404: session not found',
    );
    expect(report.summary).toContain('SN-OAK ask.success: /chat/Chat/ClientAsk failed');
  });

  it('fails on an empty answer and on noAnswer', async () => {
    const report = await runSmoke([oak], {
      api: fakeApi({ answer: { content: '  ', noAnswer: true } }),
      logger: silentLogger,
    });
    expect(failedChecks(report)).toEqual(['ask.content', 'ask.noAnswer']);
  });

  it('fails when tokens are not positive', async () => {
    const report = await runSmoke([oak], { api: fakeApi({ answer: { totalToken: 0 } }), logger: silentLogger });
    expect(failedChecks(report)).toEqual(['ask.totalToken']);
  });

  it('checks the AnswerSuffix of the chatbot settings at the end of both answers', async () => {
    const withSuffix: ChatbotConfig = { ...oak, settings: { AnswerSuffix: ' -- Oak Realty' } };
    const missing = await runSmoke([withSuffix], { api: fakeApi(), logger: silentLogger });
    expect(failedChecks(missing)).toEqual(['ask.suffix', 'stream.suffix']);
    expect(missing.chatbots[0]?.reason).toBe(
      `ask.suffix: AnswerSuffix " -- Oak Realty" missing at the end of "Three homes match."; push the settings (${feedsyncCommand()} settings), and check that smoke.sessionId is a session of this chatbot, not another's`,
    );
    const answer = 'Three homes match. -- Oak Realty';
    const present = await runSmoke([withSuffix], {
      api: fakeApi({
        answer: { content: answer },
        stream: [
          { type: 'fragment', content: 'Three homes match.' },
          { type: 'fragment', content: ' -- Oak Realty' },
          { type: 'final', QuestionID: 1, AnswerID: 2, Answer: answer, TotalToken: 9 },
        ],
      }),
      logger: silentLogger,
    });
    expect(failedChecks(present)).toEqual([]);
  });

  it('fails when the fragments do not join to the final Answer', async () => {
    const api = fakeApi({
      stream: [
        { type: 'fragment', content: 'Three homes ' },
        { type: 'final', QuestionID: 1, AnswerID: 2, Answer: 'Three homes match.', TotalToken: 9 },
      ],
    });
    const report = await runSmoke([oak], { api, logger: silentLogger });
    expect(failedChecks(report)).toEqual(['stream.join']);
    expect(report.chatbots[0]?.reason).toMatch(
      /^stream\.join: 1 fragment\(s\) join to 12 characters, the final Answer has 18; they differ from character 12/,
    );
  });

  it('fails when the stream ends without its final object, or breaks off', async () => {
    const noFinal = await runSmoke([oak], {
      api: fakeApi({ stream: [{ type: 'fragment', content: 'Three' }] }),
      logger: silentLogger,
    });
    expect(noFinal.chatbots[0]?.reason).toBe(
      'stream.success: the stream ended without the final object after 1 fragment(s)',
    );
    const broken = await runSmoke([oak], {
      api: fakeApi({ stream: [{ type: 'fragment', content: 'Three' }], streamError: new Error('socket hang up') }),
      logger: silentLogger,
    });
    expect(broken.chatbots[0]?.reason).toBe('stream.success: socket hang up (after 1 fragment(s))');
  });

  it('refuses a named chatbot without a smoke message, and an unknown one', async () => {
    const api = fakeApi();
    await expect(
      runSmoke([oak, { serialNumber: 'SN-NONE' }], { api, logger: silentLogger }, { only: ['SN-NONE'] }),
    ).rejects.toThrow(ConfigError);
    await expect(runSmoke([oak], { api, logger: silentLogger }, { only: ['SN-X'] })).rejects.toThrow(
      /unknown chatbot SN-X: the config has SN-OAK/,
    );
    expect(api.asks).toEqual([]);
  });
});
