// Issue 35, point 4: the report's source requests are every request made for the feed. A RESO test
// server (test/helpers/reso-server.ts) counts every HTTP request it receives — pages, retries,
// `$metadata`, the confirmation's keys, the keyset proof's `$count`, the reconcile's keys-only read,
// the EntityEvent poll — and the OAuth2 token endpoint's calls apart; each run's report (the object
// `--json` prints, and the text) must say the same numbers. And the confirmation's URLs are measured as
// sent: a key with `'` (doubled in OData, `%27%27` on the wire) and other characters that are
// percent-encoded, against a server that answers 414 past 2,048 characters (IIS's default).
import { beforeEach, describe, expect, it } from 'vitest';
import { FeedConfig } from '../../src/config/schema.js';
import { clearTokenCache } from '../../src/feeds/reso/oauth2.js';
import { formatSyncReport } from '../../src/sync/report/report-format.js';
import type { SyncReport } from '../../src/sync/report/report.js';
import type { TestEmulator } from '../helpers/emulator.js';
import { startResoServer, type ResoServer } from '../helpers/reso-server.js';
import { SN, type SyncEnv, useEmulatorSync } from './helpers/feed.js';
import { keyedResoRecords } from './helpers/reso-records.js';
import { reconcileAsk } from '../../src/feeds/reso/reso-asks.js';

let te: TestEmulator;
let env: SyncEnv;
const emulator = useEmulatorSync((t, e) => {
  te = t;
  env = e;
});
beforeEach(() => clearTokenCache());

const OAUTH = { clientId: 'counts-35', clientSecret: 'counts-secret-35', ttlSeconds: 3600 };

const resoFeed = (server: ResoServer, source: Record<string, unknown> = {}, mapping: Record<string, unknown> = {}) =>
  FeedConfig.parse({
    name: 'mls',
    chatbot: SN,
    source: {
      kind: 'reso',
      url: server.url,
      maxPageSize: 5,
      retries: 1,
      timeoutMs: 5000,
      photosTimestampField: null,
      auth: { kind: 'oauth2', tokenUrl: server.tokenUrl, clientId: OAUTH.clientId, clientSecret: OAUTH.clientSecret },
      ...source,
    },
    mapping: { preset: 'reso', fields: { Url: { template: 'https://broker.test/l/{ListingKey}' }, ...mapping } },
    deletes: { maxFraction: 1, maxCount: 10_000 },
  });

/** What the server received during `run`: source requests (data and $metadata) and token calls. */
async function counted(
  server: ResoServer,
  run: () => Promise<SyncReport>,
): Promise<{ r: SyncReport; source: number; token: number }> {
  const before = { received: server.received, token: server.tokenRequests.length };
  const r = await run();
  const token = server.tokenRequests.length - before.token;
  return { r, source: server.received - before.received - token, token };
}

/** The report (as `--json` prints it, and as text) says what the server received. */
function saysWhatWasMade(x: { r: SyncReport; source: number; token: number }): void {
  const json = (JSON.parse(JSON.stringify(x.r)) as SyncReport).source;
  expect({ requests: json.requests, tokenCalls: json.tokenCalls ?? 0 }).toEqual({
    requests: x.source,
    tokenCalls: x.token,
  });
  const by = Object.values(json.requestsBy ?? {}).reduce<number>((a, b) => a + (b ?? 0), 0);
  expect(by).toBe(x.source);
  const text = formatSyncReport(x.r);
  expect(text).toContain(`${x.source} requests`);
  if (x.token) expect(text).toContain(`${x.token} token call${x.token === 1 ? '' : 's'}`);
  else expect(text).not.toContain('token call');
}

describe("the report's source requests are every request the server received", () => {
  it('a full pull (a retry, a token call), its confirmation ($metadata, the keys), an incremental keyset pull and its proof', async () => {
    const data = keyedResoRecords(20, 35);
    // the first data request answered 503: the retry is a request too
    const server = emulator.closeAfterTest(
      await startResoServer({ records: data, maxPageSize: 5, oauth: OAUTH, failFirst: [503] }),
    );
    const feed = resoFeed(server, { incremental: true });

    const first = await counted(server, () => env.sync(te, feed));
    expect(first.r.outcome, first.r.message).toBe('ok');
    expect(first.token).toBe(1);
    saysWhatWasMade(first);
    expect(first.r.source.requestsBy).toMatchObject({ pages: 6 });

    for (const k of ['K-03', 'K-09', 'K-14']) server.remove(k);
    const full = await counted(server, () => env.sync(te, feed, { full: true }));
    expect(full.r.outcome, full.r.message).toBe('ok');
    expect(full.r.counts.deleted).toBe(3);
    saysWhatWasMade(full);
    // (the reso preset's MLSNumber reads ListingId, else ListingKey: the absences are asked by each)
    expect(full.r.source.requestsBy).toMatchObject({ byKey: 2, metadata: 1 });

    for (const k of ['K-01', 'K-02', 'K-04', 'K-05', 'K-06', 'K-07', 'K-08']) server.touch(k, { ListPrice: 123_456 });
    const incremental = await counted(server, () => env.sync(te, feed));
    expect(incremental.r.outcome, incremental.r.message).toBe('ok');
    expect(incremental.r.source.mode).toBe('incremental');
    expect(incremental.r.counts.updated).toBe(7);
    saysWhatWasMade(incremental);
    expect(incremental.r.source.requestsBy).toMatchObject({ proof: 1 });
  });

  it('a token refused mid-run: the second token call is counted', async () => {
    const server = emulator.closeAfterTest(
      await startResoServer({ records: keyedResoRecords(12, 35), maxPageSize: 5, oauth: OAUTH }),
    );
    server.beforePage = (n, s) => n === 2 && s.revokeTokens();
    const run = await counted(server, () => env.sync(te, resoFeed(server)));
    expect(run.r.outcome, run.r.message).toBe('ok');
    expect(run.token).toBe(2);
    saysWhatWasMade(run);
  });

  it('a keys-only reconcile (its keys, the fetch by key) and an EntityEvent poll (the log, the fetch)', async () => {
    const data = keyedResoRecords(20, 35);
    const server = emulator.closeAfterTest(
      await startResoServer({ records: data, maxPageSize: 5, oauth: OAUTH, entityEvents: true }),
    );
    const feed = resoFeed(server, { incremental: true });
    expect((await env.sync(te, feed)).outcome).toBe('ok');
    server.touch('K-04', { ListPrice: 222_222 });
    server.remove('K-11');
    const reconcile = await counted(server, () => env.sync(te, feed, { ask: reconcileAsk }));
    expect(reconcile.r.outcome, reconcile.r.message).toBe('ok');
    expect(reconcile.r.source.reconcile).toMatchObject({ keys: 19, fetched: 1 });
    expect(reconcile.r.counts.deleted).toBe(1);
    saysWhatWasMade(reconcile);

    clearTokenCache();
    const events = resoFeed(server, { incremental: true, changes: 'entityEvent' });
    expect((await env.sync(te, events, { full: true })).outcome).toBe('ok');
    server.touch('K-06', { ListPrice: 333_333 });
    server.remove('K-12');
    clearTokenCache();
    const poll = await counted(server, () => env.sync(te, events));
    expect(poll.r.outcome, poll.r.message).toBe('ok');
    expect(poll.r.source.events).toMatchObject({ fetched: 1, gone: 1 });
    expect(poll.token).toBe(1);
    saysWhatWasMade(poll);
  });
});

describe("the confirmation's URLs are measured as sent", () => {
  it("keys with ' and characters that are percent-encoded: no URL past 2,048 characters, every absence confirmed", async () => {
    const data = keyedResoRecords(60, 35).map((r, i): Record<string, unknown> => ({
      ...r,
      ListingId: `O'Neil's 'Lot' & #${i} é/${"'".repeat(4)}`,
    }));
    const server = emulator.closeAfterTest(await startResoServer({ records: data, maxPageSize: 100, maxUrl: 2048 }));
    const feed = resoFeed(server, { maxPageSize: 100, auth: undefined });
    expect((await env.sync(te, feed)).outcome).toBe('ok');
    expect(await te.listings(SN)).toHaveLength(60);
    const gone = data.slice(3).map((r) => String(r.ListingKey));
    for (const k of gone) server.remove(k);
    const r = await env.sync(te, feed, { full: true });
    expect(r.outcome, r.message).toBe('ok');
    // every absence asked for by key, none refused: 57 deleted, the 3 left kept
    expect(r.counts.deleted).toBe(57);
    expect((await te.listings(SN)).map((l) => String(l.MLSNumber)).sort()).toEqual(
      data
        .slice(0, 3)
        .map((x) => String(x.ListingId))
        .sort(),
    );
    expect(server.longestUrl).toBeLessThanOrEqual(2048);
    // (the limit was reached: the batches are as long as the limit allows, not cut short)
    expect(server.longestUrl).toBeGreaterThan(1900);
    expect(server.requests.filter((q) => q.filter?.includes('ListingId eq')).length).toBeGreaterThan(1);
  });
});

// Issue 54 point 7: a reconcile reports itself as one (not `full`), its pages as the pages it read (not
// every request), and `source.bytes` every answer's, the confirmation's among them: counted at the server.
describe('a reconcile says what it was and what it read, as the server counted it', () => {
  const plainFeed = (server: ResoServer, source: Record<string, unknown> = {}) =>
    resoFeed(server, { incremental: true, auth: undefined, retries: 0, ...source });
  const keysOnly = (server: ResoServer, from: number) =>
    server.requests.slice(from).filter((r) => r.select !== undefined && !decodeURIComponent(r.url).includes('$expand'));

  it('sync --reconcile: source.mode reconcile, its keys-only pages as pages, every byte the server sent (the confirmation included)', async () => {
    const server = emulator.closeAfterTest(
      await startResoServer({ records: keyedResoRecords(23, 54), maxPageSize: 5 }),
    );
    const feed = plainFeed(server);
    expect((await env.sync(te, feed)).outcome).toBe('ok');
    server.touch('K-04', { ListPrice: 222_222 });
    server.remove('K-11');
    const [from, bytes, received] = [server.requests.length, server.bytesSent, server.received];
    const r = await env.sync(te, feed, { ask: reconcileAsk });
    expect(r.outcome, r.message).toBe('ok');
    expect(r.counts.deleted).toBe(1);
    expect(r.source.mode).toBe('reconcile');
    const pages = keysOnly(server, from).length;
    expect(pages).toBe(Math.ceil(22 / 5) + 1);
    expect(r.source.pages).toBe(pages);
    expect(r.source.requests).toBe(server.received - received);
    expect(r.source.requestsBy).toMatchObject({ keys: pages, byKey: 3, metadata: 1 });
    expect(r.source.bytes).toBe(server.bytesSent - bytes);
    const text = formatSyncReport(r);
    expect(text).toContain(`source: ${pages} pages, ${r.source.requests} requests`);
  });

  it('a full pull: source.bytes includes the answers of the confirmation that runs after the pull', async () => {
    const server = emulator.closeAfterTest(
      await startResoServer({ records: keyedResoRecords(12, 54), maxPageSize: 5 }),
    );
    const feed = plainFeed(server);
    expect((await env.sync(te, feed)).outcome).toBe('ok');
    server.remove('K-03');
    const bytes = server.bytesSent;
    const r = await env.sync(te, feed, { full: true });
    expect(r.outcome, r.message).toBe('ok');
    expect(r.counts.deleted).toBe(1);
    expect(r.source.requestsBy).toMatchObject({ byKey: 2 });
    expect(r.source.bytes).toBe(server.bytesSent - bytes);
  });

  it('an EntityEvent log purged past the mark: the reconcile it runs reports mode reconcile, and every byte', async () => {
    const server = emulator.closeAfterTest(
      await startResoServer({ records: keyedResoRecords(12, 54), maxPageSize: 5, entityEvents: true }),
    );
    const feed = plainFeed(server, { changes: 'entityEvent' });
    server.event('K-01');
    expect((await env.sync(te, feed)).outcome).toBe('ok');
    server.remove('K-05');
    server.purge(Number(server.events.at(-1)!.EntityEventSequence));
    const [bytes, received] = [server.bytesSent, server.received];
    const r = await env.sync(te, feed);
    expect(r.outcome, r.message).toBe('ok');
    expect(r.source.events?.purged).toBeDefined();
    expect(r.source.mode).toBe('reconcile');
    expect(r.source.requests).toBe(server.received - received);
    expect(r.source.bytes).toBe(server.bytesSent - bytes);
    expect(r.source.pages).toBe((r.source.requestsBy?.keys ?? 0) + 1); // the keys-only pages, and the log's one
  });
});
