// The one-shot commands that keep state in Redis (sync, undo) end when Redis stops answering in the
// middle of them, as a hung, partitioned or SIGSTOPped Redis does: the port still takes connections,
// nothing is answered, no connection drops, so ioredis never gives a command up by itself (with or
// without maxRetriesPerRequest). Redis is stopped here as the command's first call reaches the
// Chatbot Service: past the check that Redis answers (requireRedis), before the state is written.
// Each must exit, naming that Redis, that it did not answer, and that a rerun may help.
import '../setup/needs-redis.js';
import { createServer, type Server } from 'node:http';
import { once } from 'node:events';
import type { AddressInfo } from 'node:net';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import type { TestEmulator } from '../helpers/emulator.js';
import { throwawayRedis, type ThrowawayRedis } from '../server/redis-server.js';
import { feedsync } from '../settings/run-cli.js';
import { badRows, createStory, goodRows, runIdOf, useUndoEmulator } from '../undo/helpers.js';
import { freshFetch } from '../helpers/fresh-fetch.js';

let te: TestEmulator;
const { dirs } = useUndoEmulator((t) => (te = t));

let redis: ThrowawayRedis | undefined;
let front: Server | undefined;
/** set: the next request to the Chatbot Service stops Redis first */
let stopRedisOnNextCall = false;

beforeEach(async () => {
  redis = await throwawayRedis();
  // the Chatbot Service as the command sees it: the emulator, behind a hook that stops Redis
  front = createServer((req, res) => {
    if (stopRedisOnNextCall) {
      stopRedisOnNextCall = false;
      redis!.pause();
    }
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      const headers = Object.fromEntries(
        Object.entries(req.headers).filter((e): e is [string, string] => typeof e[1] === 'string' && e[0] !== 'host'),
      );
      const body = chunks.length ? Buffer.concat(chunks) : undefined;
      freshFetch(te.url + req.url, { method: req.method, headers, body })
        .then(async (r) => {
          res.writeHead(r.status, { 'content-type': r.headers.get('content-type') ?? 'application/json' });
          res.end(Buffer.from(await r.arrayBuffer()));
        })
        .catch(() => res.destroy());
    });
  });
  front.listen(0, '127.0.0.1');
  await once(front, 'listening');
});
afterEach(async () => {
  stopRedisOnNextCall = false;
  await redis?.stop();
  front?.close();
  redis = front = undefined;
});

async function story() {
  const url = `http://127.0.0.1:${(front!.address() as AddressInfo).port}`;
  const s = await createStory(url, ['redis:', `  url: ${redis!.url}`, '  prefix: test-redis-stops']);
  dirs.push(s.dir);
  return s;
}

/** what a command says when the Redis stopped under it did not answer */
function expectSaysRedisStopped(out: { code: number; stderr: string; killed?: true }): void {
  expect(out.killed, 'the command ended by itself').toBeUndefined();
  expect(out.code, out.stderr).toBe(1);
  expect(out.stderr).toMatch(
    new RegExp(`Redis redis://127\\.0\\.0\\.1:${redis!.port} .*(does not answer|did not answer)`),
  );
  expect(out.stderr).toMatch(/again|rerun|retry/i);
}

describe('a command Redis stops answering mid-way', () => {
  it('sync: exits 1 naming Redis and that it did not answer', { timeout: 150_000 }, async () => {
    const s = await story();
    await s.writeFeed(goodRows());
    stopRedisOnNextCall = true;
    // (the kill is a guard for this test's run only: a command that hangs is killed and fails below)
    const out = await feedsync(['sync', '--config', s.config], {}, { timeout: 90_000, killSignal: 'SIGKILL' });
    expectSaysRedisStopped(out);
  });

  it('undo: exits 1 naming Redis and that it did not answer', { timeout: 150_000 }, async () => {
    const s = await story();
    await s.writeFeed(goodRows());
    expect((await feedsync(['sync', '--config', s.config])).code).toBe(0);
    await s.writeFeed(badRows());
    const bad = await feedsync(['sync', '--config', s.config]);
    expect(bad.code, bad.stderr).toBe(0);
    stopRedisOnNextCall = true;
    const out = await feedsync(
      ['undo', runIdOf(bad.stderr)!, '--config', s.config],
      {},
      { timeout: 90_000, killSignal: 'SIGKILL' },
    );
    expectSaysRedisStopped(out);
  });
});
