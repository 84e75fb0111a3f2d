// askStream end to end against the emulator, in each framing the emulator can send.
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { localApiBudget } from '../../src/api/rate-limiter.js';
import type { StreamEvent } from '../../src/api/schemas.js';
import type { Budget } from '../../src/budget/index.js';
import { ApiError, ResponseFormatError } from '../../src/errors.js';
import { sampleListing, startTestEmulator, type TestEmulator } from '../helpers/emulator.js';

let t: TestEmulator;
let sessionID: number;
beforeAll(async () => {
  t = await startTestEmulator({ streamDelayMs: 2 });
});
afterAll(() => t.close());
beforeEach(async () => {
  t.emulator.configure({ answerMode: 'normal', streamFraming: 'sse', nextFaults: [] });
  await t.reset();
  await t.api.createListing(sampleListing({ Address: '12 Oak St — “Ünïcode” 🏡' }));
  await t.api.editSettings({ serialNumber: 'SN-1', AnswerSuffix: ' {"not": "json"} ✓' });
  sessionID = await t.session('SN-1');
});

async function collect(it: AsyncIterable<StreamEvent>): Promise<StreamEvent[]> {
  const out: StreamEvent[] = [];
  for await (const e of it) out.push(e);
  return out;
}

describe('askStream', () => {
  for (const framing of ['sse', 'lines', 'concat'] as const) {
    it(`yields fragments then the final object with ${framing} framing`, async () => {
      t.emulator.configure({ streamFraming: framing });
      const events = await collect(t.api.askStream({ sessionID, content: 'Any 3 bedroom homes in Austin?' }));
      const fragments = events.filter((e) => e.type === 'fragment');
      expect(fragments.length).toBeGreaterThan(3);
      expect(events.filter((e) => e.type === 'final')).toHaveLength(1);
      const final = events.at(-1) as Extract<StreamEvent, { type: 'final' }>;
      expect(final.type).toBe('final');
      expect(fragments.map((f) => (f as { content: string }).content).join('')).toBe(final.Answer);
      expect(final.Answer).toContain('🏡');
      expect(final.Answer.endsWith(' {"not": "json"} ✓')).toBe(true);
      expect(final.AnswerID).toBeGreaterThan(final.QuestionID);
      expect(final.TotalToken).toBeGreaterThan(0);
    });
  }

  it('a stream that ends without the final object is a ResponseFormatError', async () => {
    t.emulator.configure({ answerMode: 'broken-stream' });
    const seen: StreamEvent[] = [];
    let error: unknown;
    try {
      for await (const e of t.api.askStream({ sessionID, content: 'homes in Austin?' })) seen.push(e);
    } catch (err) {
      error = err;
    }
    expect(error).toBeInstanceOf(ResponseFormatError);
    expect((error as Error).message).toContain('without the final object');
    expect(seen.length).toBeGreaterThan(0);
    expect(seen.every((e) => e.type === 'fragment')).toBe(true);
  });

  it('an error answered as a JSON envelope instead of a stream is the ApiError of that envelope', async () => {
    const err = await collect(t.api.askStream({ sessionID: 999_999, content: 'hi' })).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(ApiError);
    expect(err).toMatchObject({ httpStatus: 404, apiCode: 404 });
  });

  it('retries a 503 before the stream starts', async () => {
    t.emulator.configure({ nextFaults: ['503'] });
    const events = await collect(t.api.askStream({ sessionID, content: 'homes in Austin?' }));
    expect(events.at(-1)?.type).toBe('final');
    expect((await t.stats()).requests['/chat/Chat/ClientAsk']).toMatchObject({ '503': 1, '200': 1 });
  });

  it('an empty answer mode streams no fragments and an empty final Answer', async () => {
    t.emulator.configure({ answerMode: 'empty' });
    const events = await collect(t.api.askStream({ sessionID, content: 'homes?' }));
    expect(events).toEqual([expect.objectContaining({ type: 'final', Answer: '' })]);
  });

  it('the consumer may stop early', async () => {
    for await (const e of t.api.askStream({ sessionID, content: 'homes in Austin?' })) {
      expect(e.type).toBe('fragment');
      break;
    }
    // the emulator keeps answering afterwards
    await expect(t.api.ask({ sessionID, content: 'homes?' })).resolves.toMatchObject({ noAnswer: false });
  });
});

/** The client's budget, counting the slots its calls hold (a permit acquired and not yet released). */
function countingBudget(): { budget: Budget; held: () => number } {
  const inner = localApiBudget({ baseUrl: t.url, secretKey: 'k-held', concurrency: 4 });
  let held = 0;
  const budget: Budget = {
    ...inner,
    acquire: async (signal) => {
      const permit = await inner.acquire(signal);
      held++;
      let released = false;
      return {
        release: () => {
          if (!released) held--;
          released = true;
          permit.release();
        },
      };
    },
  };
  return { budget, held: () => held };
}

describe('askStream holds its slot in flight while the answer streams', () => {
  it('the slot is held after the headers, until the stream ends', async () => {
    const { budget, held } = countingBudget();
    const api = t.client({ budget });
    const seen: number[] = [];
    for await (const e of api.askStream({ sessionID, content: 'homes in Austin?' }))
      if (e.type === 'fragment') seen.push(held());
    expect(seen.length).toBeGreaterThan(3);
    expect(seen.every((n) => n === 1)).toBe(true);
    expect(held()).toBe(0);
  });

  it('a consumer that stops early frees it, and so does a broken stream', async () => {
    const { budget, held } = countingBudget();
    const api = t.client({ budget });
    for await (const e of api.askStream({ sessionID, content: 'homes in Austin?' })) {
      expect(held()).toBe(1);
      expect(e.type).toBe('fragment');
      break;
    }
    expect(held()).toBe(0);
    t.emulator.configure({ answerMode: 'broken-stream' });
    expect(await collect(api.askStream({ sessionID, content: 'homes?' })).catch((e: unknown) => e)).toBeInstanceOf(
      ResponseFormatError,
    );
    expect(held()).toBe(0);
  });
});
