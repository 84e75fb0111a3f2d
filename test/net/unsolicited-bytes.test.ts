// Bytes a server sends unasked on an idle keep-alive connection are never read as the answer to the
// next request: the API client's pool (node:http's Agent, wholePool) destroys such a socket instead
// of reusing it, and the next call, on a new connection, gets its own answer.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { boundedRequest, wholePool } from '../../src/net/request.js';
import { setTimeout as sleep } from 'node:timers/promises';
import { FORGED, startUnsolicitedServer, type UnsolicitedServer } from '../helpers/unsolicited-server.js';

let server: UnsolicitedServer;
beforeAll(async () => {
  server = await startUnsolicitedServer(10);
});
afterAll(() => server.close());

describe('unsolicited bytes on an idle keep-alive connection', () => {
  it('are never taken as the next answer: that connection is dropped, the next call gets its own', async () => {
    const pool = wholePool(1);
    const bodies: string[] = [];
    for (let i = 0; i < 4; i++) {
      const res = await boundedRequest({
        method: 'POST',
        url: server.url + '/x',
        headers: { 'content-type': 'application/json' },
        body: '{}',
        deadlineMs: 5000,
        maxBytes: 1000,
        whole: true,
        pool,
      });
      bodies.push(`${res.status} ${await res.text()}`);
      // (the forged response arrives while the connection is idle)
      await sleep(60);
    }
    expect(bodies).toEqual(['200 {"n":1}', '200 {"n":2}', '200 {"n":3}', '200 {"n":4}']);
    expect(bodies.join()).not.toContain(FORGED);
    // each call on a connection of its own: the poisoned one was not reused
    expect(server.connections()).toBe(4);
  });
});
