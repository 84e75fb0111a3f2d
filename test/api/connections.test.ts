// How many connections the API client opens, counted where the emulator sees them (a TCP relay in
// front of it, over real HTTP): no more than api.concurrency, the calls it has in flight at most.
// A pool sized past that grew to about twice it: a call sent as the one before it ended found that
// one's connection not yet free in undici's pool and opened another (a first sync with concurrency 1
// wrote on two sockets in turn; with 4, on 8). The calls go through node:http's Agent now
// (src/net/request.ts wholePool), at most api.concurrency sockets.
import { once } from 'node:events';
import { connect, createServer, type AddressInfo, type Socket } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { sampleListing, startTestEmulator, type TestEmulator } from '../helpers/emulator.js';
import { createSyncEnv, row, rows } from '../sync/helpers/feed.js';

let t: TestEmulator;
beforeAll(async () => {
  t = await startTestEmulator({ latencyMs: 5 });
});
afterAll(() => t.close());

/** A TCP relay to the emulator that counts the sockets opened through it. */
async function countingRelay(port: number) {
  const seen = { opened: 0 };
  const sockets = new Set<Socket>();
  const server = createServer((client) => {
    seen.opened++;
    const upstream = connect(port, '127.0.0.1');
    sockets.add(client).add(upstream);
    client.pipe(upstream).pipe(client);
    const end = () => {
      client.destroy();
      upstream.destroy();
    };
    for (const s of [client, upstream]) s.on('close', end).on('error', end);
  });
  server.listen(0, '127.0.0.1');
  await once(server, 'listening');
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    seen,
    close: async () => {
      for (const s of sockets) s.destroy();
      await new Promise((r) => server.close(r));
    },
  };
}

describe('the API client’s connections', () => {
  it('calls one after another, each sent as the one before ends: one connection at concurrency 1', async () => {
    const relay = await countingRelay(t.emulator.port);
    try {
      const api = t.client({ baseUrl: relay.url, concurrency: 1 });
      for (let i = 0; i < 10; i++)
        await api.createListing(
          sampleListing({ SerialNumber: 'SN-CONN', MLSNumber: `S${i}`, Url: `https://e.test/${i}` }),
        );
      expect(relay.seen.opened).toBe(1);
    } finally {
      await relay.close();
    }
  });

  it.each([1, 4])(
    'a sync run’s paging and writes at api.concurrency %i: as many connections at most',
    async (concurrency) => {
      await t.reset();
      const relay = await countingRelay(t.emulator.port);
      const env = await createSyncEnv();
      try {
        // the run's client as the runtime builds it, its calls through the relay
        const te: TestEmulator = {
          ...t,
          url: relay.url,
          client: (o = {}) => t.client({ ...o, baseUrl: relay.url, concurrency }),
        };
        const feed = env.feed({ deletes: { maxFraction: 1, batchSize: 3 } });
        await env.writeFeed(rows(60));
        expect((await env.sync(te, feed, { api: { concurrency } })).counts).toMatchObject({ created: 60 });
        expect(relay.seen.opened).toBeLessThanOrEqual(concurrency);
        // a rerun (a client of its own): pages, creates, updates and deletes
        relay.seen.opened = 0;
        await env.writeFeed([...rows(40).map((r, i) => (i % 3 ? r : row(i + 1, { SalePrice: 5 }))), ...rows(20, 1000)]);
        expect((await env.sync(te, feed, { api: { concurrency } })).counts).toMatchObject({
          created: 20,
          updated: 14,
          deleted: 20,
        });
        expect(relay.seen.opened).toBeLessThanOrEqual(concurrency);
      } finally {
        await relay.close();
        await env.cleanup();
      }
    },
  );
});
