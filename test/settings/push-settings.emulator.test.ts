// Settings push against the emulator over HTTP: what it applies, what it counts, what is skipped.
import '../setup/needs-redis.js';
import { randomUUID } from 'node:crypto';
import { Redis } from 'ioredis';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import type { ChatbotConfig } from '../../src/config/schema.js';
import { silentLogger } from '../../src/log.js';
import { pushSettings, SETTINGS_HASH_NS } from '../../src/settings/index.js';
import { createMemoryStore } from '../../src/state/memory-store.js';
import { createRedisStore } from '../../src/state/redis-store.js';
import { sampleListing, startTestEmulator, type TestEmulator } from '../helpers/emulator.js';

const SN = 'SN-OAK';
const SUFFIX = ' -- Oak Realty, since 1987';
const oak: ChatbotConfig = {
  serialNumber: SN,
  settings: { Name: 'Oak Realty', AnswerSuffix: SUFFIX, MessageLimit: -1 },
};

let t: TestEmulator;
beforeAll(async () => {
  t = await startTestEmulator({ chatbots: [SN] });
});
afterAll(() => t.close());
beforeEach(() => t.reset());

const edits = async () => (await t.stats()).requests['/chat/Chatbot/Edit']?.['200'] ?? 0;
const deps = (store = createMemoryStore()) => ({ api: t.api, store, logger: silentLogger });

async function answerOf(serialNumber: string): Promise<string> {
  await t.api.createListing(sampleListing({ SerialNumber: serialNumber }));
  const sessionID = await t.session(serialNumber);
  return (await t.api.ask({ sessionID, content: 'Any 3 bedroom homes in Austin?' })).content;
}

describe('pushSettings against the emulator', () => {
  it('pushes settings the emulator then applies: the AnswerSuffix ends its answers', async () => {
    expect(await answerOf(SN)).not.toContain(SUFFIX);
    const report = await pushSettings([oak], deps());
    expect(report.chatbots.map((r) => r.status)).toEqual(['pushed']);
    expect(await edits()).toBe(1);
    expect((await answerOf(SN)).endsWith(SUFFIX)).toBe(true);
  });

  it('skips a second run with no Edit call, and pushes again with force', async () => {
    const d = deps();
    await pushSettings([oak], d);
    const second = await pushSettings([oak], d);
    expect(second.chatbots.map((r) => r.status)).toEqual(['unchanged']);
    expect(second.summary).toMatch(/^settings: 0 pushed, 1 unchanged, 0 invalid, 0 failed in \d+ ms$/);
    expect(await edits()).toBe(1);
    const forced = await pushSettings([oak], d, { force: true });
    expect(forced.chatbots.map((r) => r.status)).toEqual(['pushed']);
    expect(await edits()).toBe(2);
  });

  it('dry run sends nothing and remembers nothing', async () => {
    const store = createMemoryStore();
    const report = await pushSettings([oak], deps(store), { dryRun: true });
    expect(report.chatbots[0]).toMatchObject({
      status: 'would-push',
      body: { serialNumber: SN, AnswerSuffix: SUFFIX },
    });
    expect((await t.stats()).total).toBe(0);
    expect(await store.getAll(SETTINGS_HASH_NS)).toEqual(new Map());
    expect(await answerOf(SN)).not.toContain(SUFFIX);
  });

  it('sends nothing for invalid settings', async () => {
    const bad: ChatbotConfig = {
      serialNumber: SN,
      settings: { AnswerSuffix: SUFFIX, ChatBubbleColor: 'red', AIResponseLanguage: 'en' },
    };
    const report = await pushSettings([bad], deps());
    expect(report.outcome).toBe('failed');
    expect(report.chatbots[0]?.issues).toHaveLength(2);
    expect((await t.stats()).total).toBe(0);
  });

  it('fails a chatbot the service does not know, with its answer, and goes on with the others', async () => {
    const report = await pushSettings([{ serialNumber: 'SN-GONE', settings: { Name: 'Gone' } }, oak], deps());
    expect(report.chatbots.map((r) => r.status)).toEqual(['failed', 'pushed']);
    expect(report.chatbots[0]?.error?.message).toMatch(/Edit failed: HTTP 404.*SN-GONE not found/);
    expect(report.outcome).toBe('failed');
  });

  it('keeps the hash in Redis when the store is Redis', async () => {
    const redis = new Redis(process.env.REDIS_URL ?? 'redis://127.0.0.1:6379');
    const prefix = `test-settings-${randomUUID()}`;
    try {
      const store = createRedisStore(redis, prefix);
      await pushSettings([oak], deps(store));
      expect(await redis.hkeys(`${prefix}:state:${SETTINGS_HASH_NS}`)).toEqual([SN]);
      // a fresh store over the same Redis (another process, say) sees the push
      const again = await pushSettings([oak], deps(createRedisStore(redis, prefix)));
      expect(again.chatbots.map((r) => r.status)).toEqual(['unchanged']);
      expect(await edits()).toBe(1);
    } finally {
      await redis.del(`${prefix}:state:${SETTINGS_HASH_NS}`);
      await redis.quit();
    }
  });
});
