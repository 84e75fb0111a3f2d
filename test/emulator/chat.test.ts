// ClientAsk in the emulator: answers drawn from the listings, and the settings that change them
// (AnswerSuffix, RateLimitCount/RateLimitTime/RateLimitMessage, MessageLimit).
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { ApiError } from '../../src/errors.js';
import { sampleListing, startTestEmulator, type TestEmulator } from '../helpers/emulator.js';
import { freshFetch } from '../helpers/fresh-fetch.js';

let t: TestEmulator;
beforeAll(async () => {
  t = await startTestEmulator();
});
afterAll(() => t.close());
beforeEach(async () => {
  t.emulator.configure({ answerMode: 'normal' });
  await t.reset();
});

describe('emulator: ClientAsk', () => {
  it('answers from the chatbot listings, the same way every time', async () => {
    await t.api.createListing(sampleListing({ MLSNumber: 'A1', Bedrooms: 3, City: 'Austin', Address: '1 Elm St' }));
    await t.api.createListing(sampleListing({ MLSNumber: 'A2', Bedrooms: 4, City: 'Austin', Address: '2 Elm St' }));
    await t.api.createListing(sampleListing({ MLSNumber: 'D1', Bedrooms: 3, City: 'Dallas', Address: '3 Elm St' }));
    const sessionID = await t.session('SN-1');
    const a = await t.api.ask({ sessionID, content: 'Any 3 bedroom homes in Austin?' });
    expect(a).toMatchObject({ noAnswer: false });
    expect(a.content).toContain('1 Elm St');
    expect(a.content).not.toContain('2 Elm St');
    expect(a.content).not.toContain('3 Elm St');
    const again = await t.api.ask({ sessionID, content: 'Any 3 bedroom homes in Austin?' });
    expect(again.content).toBe(a.content);
    expect(again.messageid).not.toBe(a.messageid);

    const none = await t.api.ask({ sessionID, content: '7 bedrooms in Dallas?' });
    expect(none.noAnswer).toBe(true);
    const summary = await t.api.ask({ sessionID, content: 'hello' });
    expect(summary).toMatchObject({ noAnswer: false });
    expect(summary.content).toContain('3 listings');
  });

  it('has no answer for a chatbot without listings, and another chatbot listings stay apart', async () => {
    await t.api.createListing(sampleListing({ SerialNumber: 'SN-2' }));
    const sessionID = await t.session('SN-1');
    expect(await t.api.ask({ sessionID, content: 'homes?' })).toMatchObject({ noAnswer: true });
  });

  it('appends AnswerSuffix as set by Edit; a later Edit merges with the earlier one', async () => {
    await t.api.createListing(sampleListing());
    await t.api.editSettings({ serialNumber: 'SN-1', AnswerSuffix: ' Call us!' });
    await t.api.editSettings({ serialNumber: 'SN-1', Name: 'Oak Realty' });
    const sessionID = await t.session('SN-1');
    expect((await t.api.ask({ sessionID, content: 'homes?' })).content.endsWith(' Call us!')).toBe(true);
  });

  it('answers RateLimitMessage past RateLimitCount messages in RateLimitTime seconds, per session', async () => {
    await t.api.createListing(sampleListing());
    await t.api.editSettings({
      serialNumber: 'SN-1',
      RateLimitCount: 2,
      RateLimitTime: 3600,
      RateLimitMessage: 'Slow down.',
    });
    const s1 = await t.session('SN-1');
    const s2 = await t.session('SN-1');
    const answers = [];
    for (let i = 0; i < 3; i++) answers.push(await t.api.ask({ sessionID: s1, content: 'homes?' }));
    expect(answers.map((a) => a.content === 'Slow down.')).toEqual([false, false, true]);
    expect(answers[2]!.noAnswer).toBe(true);
    expect((await t.api.ask({ sessionID: s2, content: 'homes?' })).content).not.toBe('Slow down.');
  });

  it('fails with Code 403 past MessageLimit messages this month; -1 is unlimited', async () => {
    await t.api.editSettings({ serialNumber: 'SN-1', MessageLimit: 2 });
    const sessionID = await t.session('SN-1');
    await t.api.ask({ sessionID, content: 'one' });
    await t.api.ask({ sessionID, content: 'two' });
    const err = await t.api.ask({ sessionID, content: 'three' }).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(ApiError);
    expect(err).toMatchObject({ apiCode: 403, retryable: false });
    await t.api.editSettings({ serialNumber: 'SN-1', MessageLimit: -1 });
    await expect(t.api.ask({ sessionID, content: 'four' })).resolves.toBeDefined();
  });

  it("answerMode 'empty' gives an empty answer with noAnswer", async () => {
    await t.api.createListing(sampleListing());
    t.emulator.configure({ answerMode: 'empty' });
    const sessionID = await t.session('SN-1');
    expect(await t.api.ask({ sessionID, content: 'homes?' })).toMatchObject({ content: '', noAnswer: true });
  });

  it('sessions: a chosen sessionID can be registered (for a config smoke sessionId), unknown ones fail', async () => {
    expect(t.emulator.createSession('SN-1', 1001)).toBe(1001);
    await expect(t.api.ask({ sessionID: 1001, content: 'homes?' })).resolves.toBeDefined();
    const res = await freshFetch(`${t.url}/__emulator/sessions`, {
      method: 'POST',
      body: JSON.stringify({ serialNumber: 'SN-1', sessionID: 5000 }),
    });
    expect(await res.json()).toEqual({ sessionID: 5000 });
    expect(await t.session('SN-1')).toBe(5001);
    await expect(t.api.ask({ sessionID: 7, content: 'hi' })).rejects.toMatchObject({ apiCode: 404 });
  });
});
