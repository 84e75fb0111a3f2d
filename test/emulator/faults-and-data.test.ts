// Seeded faults repeat exactly; the data file keeps listings between runs; the admin paths.
import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { ENDPOINTS } from '../../src/api/schemas.js';
import { ConfigError } from '../../src/errors.js';
import { startEmulator } from '../../src/emulator/index.js';
import { sampleListing, startTestEmulator, TEST_SESSION_KEY, type TestEmulator } from '../helpers/emulator.js';
import { rawPost } from '../helpers/raw-post.js';
import { freshFetch } from '../helpers/fresh-fetch.js';

const open: TestEmulator[] = [];
const dirs: string[] = [];
afterEach(async () => {
  await Promise.all(open.splice(0).map((e) => e.close()));
  await Promise.all(dirs.splice(0).map((d) => rm(d, { recursive: true, force: true })));
});
async function emulator(opts: Parameters<typeof startTestEmulator>[0]) {
  const e = await startTestEmulator(opts);
  open.push(e);
  return e;
}
async function tempDir() {
  const d = await mkdtemp(join(tmpdir(), 'feedsync-emu-'));
  dirs.push(d);
  return d;
}

async function statusSequence(t: TestEmulator, n: number): Promise<string[]> {
  const out: string[] = [];
  for (let i = 0; i < n; i++) {
    try {
      const res = await rawPost(
        t.url + ENDPOINTS.list,
        { SerialNumber: 'SN-1' },
        { 'chatrobot-sessionkey': TEST_SESSION_KEY },
      );
      out.push(String(res.status));
    } catch {
      out.push('dropped');
    }
  }
  return out;
}

describe('emulator: faults', () => {
  it('draws the same faults from the same seed, split over the fault list', async () => {
    const a = await emulator({ faultRate: 0.5, seed: 42 });
    const b = await emulator({ faultRate: 0.5, seed: 42 });
    const seqA = await statusSequence(a, 40);
    const seqB = await statusSequence(b, 40);
    expect(seqA).toEqual(seqB);
    for (const kind of ['200', '500', '503', '429', 'dropped']) expect(seqA).toContain(kind);
    const stats = await a.stats();
    expect(stats.total).toBe(40);
    expect(stats.requests[ENDPOINTS.list]!.dropped).toBe(seqA.filter((s) => s === 'dropped').length);
  });

  it('sends Retry-After with an injected 429 and never faults the admin paths', async () => {
    const t = await emulator({ faultRate: 1, faults: ['429'] });
    const res = await rawPost(
      t.url + ENDPOINTS.list,
      { SerialNumber: 'SN-1' },
      { 'chatrobot-sessionkey': TEST_SESSION_KEY },
    );
    expect(res.status).toBe(429);
    expect(res.headers.get('retry-after')).toBe('1');
    expect(res.body).toMatchObject({ Success: false, Code: 429 });
    expect((await t.stats()).total).toBe(1);
    await t.reset();
    expect(await t.stats()).toEqual({ requests: {}, total: 0 });
  });

  it('errorsAs200 answers a fault as HTTP 200 with Success false and the Code in the body', async () => {
    const t = await emulator({ errorsAs200: true, nextFaults: ['503'] });
    const res = await rawPost(
      t.url + ENDPOINTS.list,
      { SerialNumber: 'SN-1' },
      { 'chatrobot-sessionkey': TEST_SESSION_KEY },
    );
    expect(res.status).toBe(200);
    expect(res.body).toMatchObject({ Success: false, Code: 503 });
  });
});

describe('emulator: data file', () => {
  it('keeps listings, settings and sessions across a restart', async () => {
    const file = join(await tempDir(), 'nested', 'emulator.json');
    const first = await emulator({ dataFile: file });
    const id = await first.api.createListing(sampleListing());
    await first.api.editSettings({ serialNumber: 'SN-1', AnswerSuffix: ' bye' });
    const sessionID = await first.session('SN-1');
    await first.close();
    open.splice(open.indexOf(first), 1);
    expect(JSON.parse(await readFile(file, 'utf8')).listings['SN-1']).toHaveLength(1);

    const second = await emulator({ dataFile: file });
    expect((await second.listings('SN-1')).map((l) => String(l.ID))).toEqual([id]);
    expect((await second.api.ask({ sessionID, content: 'homes?' })).content.endsWith(' bye')).toBe(true);
    const next = await second.api.createListing(sampleListing({ MLSNumber: 'A2' }));
    expect(Number(next)).toBeGreaterThan(Number(id));
  });

  it('refuses a data file that is not its own, saying which file', async () => {
    const file = join(await tempDir(), 'emulator.json');
    await writeFile(file, '{"hello": 1}');
    const err = await startEmulator({ dataFile: file }).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(ConfigError);
    expect((err as Error).message).toContain(file);
  });

  it('refuses a data file whose listing is not one the service could hold (no MLSNumber, no Url), naming the field', async () => {
    const file = join(await tempDir(), 'emulator.json');
    const saved = { nextId: 2, nextMessageId: 1, nextSessionId: 1001, settings: {}, sessions: {}, monthly: {} };
    const { MLSNumber: _m, Url: _u, ...partial } = sampleListing();
    await writeFile(file, JSON.stringify({ ...saved, listings: { 'SN-1': [{ ...partial, ID: 1 }] } }));
    const err = await startEmulator({ dataFile: file }).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(ConfigError);
    expect((err as ConfigError).issues?.map((i) => i.path)).toContain('listings.SN-1.0.MLSNumber');
  });

  it('refuses a data file whose chatbot settings are not settings (a number for AnswerSuffix)', async () => {
    const file = join(await tempDir(), 'emulator.json');
    const saved = { nextId: 1, nextMessageId: 1, nextSessionId: 1001, listings: {}, sessions: {}, monthly: {} };
    await writeFile(file, JSON.stringify({ ...saved, settings: { 'SN-1': { AnswerSuffix: 5 } } }));
    const err = await startEmulator({ dataFile: file }).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(ConfigError);
    expect((err as ConfigError).issues?.map((i) => i.path)).toContain('settings.SN-1.AnswerSuffix');
  });
});

describe('emulator: admin paths', () => {
  it('lists stored listings in ID order, counts requests per path and status, and resets', async () => {
    const t = await emulator({});
    await t.api.createListing(sampleListing({ MLSNumber: 'B' }));
    await t.api.createListing(sampleListing({ MLSNumber: 'A' }));
    await t
      .client({ sessionKey: 'wrong-key-0000' })
      .listListings({ SerialNumber: 'SN-1' })
      .catch(() => undefined);
    const listed = (await (await freshFetch(`${t.url}/__emulator/listings?serialNumber=SN-1`)).json()) as {
      serialNumber: string;
      listings: Array<{ MLSNumber: string; ID: number }>;
    };
    expect(listed.serialNumber).toBe('SN-1');
    expect(listed.listings.map((l) => [l.ID, l.MLSNumber])).toEqual([
      [1, 'B'],
      [2, 'A'],
    ]);
    expect(await t.stats()).toEqual({
      requests: { [ENDPOINTS.create]: { '200': 2 }, [ENDPOINTS.list]: { '401': 1 } },
      total: 3,
    });
    await t.reset();
    expect(await t.listings('SN-1')).toEqual([]);
    expect((await freshFetch(`${t.url}/__emulator/listings`)).status).toBe(400);
    expect((await freshFetch(`${t.url}/__emulator/nope`)).status).toBe(404);
  });
});
