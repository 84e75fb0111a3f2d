// An HTTP proxy to the emulator that refuses one chatbot's writes (routing and roster tests).
import { once } from 'node:events';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { freshFetch } from './fresh-fetch.js';

/**
 * An HTTP proxy to the emulator that answers 503 to every listing write (create, update, delete)
 * for one serial number and forwards everything else: that chatbot's writes fail, its list pages.
 */
export async function refusingWritesOf(
  target: string,
  serialNumber: string,
): Promise<{ url: string; refused: number; close(): Promise<void> }> {
  const state = { refused: 0 };
  const server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      const body = Buffer.concat(chunks);
      if (/RealEstate(Create|Update|Delete)$/.test(req.url ?? '') && body.toString().includes(`"${serialNumber}"`)) {
        state.refused++;
        res
          .writeHead(503, { 'content-type': 'application/json' })
          .end(JSON.stringify({ error: `writes into ${serialNumber} refused by the test` }));
        return;
      }
      const headers = Object.fromEntries(
        Object.entries(req.headers).filter(([k]) => !['host', 'connection', 'content-length'].includes(k)),
      ) as Record<string, string>;
      freshFetch(target + req.url, { method: req.method, headers, ...(body.length && { body }) }).then(
        async (answer) => {
          res
            .writeHead(answer.status, { 'content-type': answer.headers.get('content-type') ?? 'application/json' })
            .end(Buffer.from(await answer.arrayBuffer()));
        },
        (err: Error) => res.writeHead(502).end(err.message),
      );
    });
  });
  server.listen(0, '127.0.0.1');
  await once(server, 'listening');
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    get refused() {
      return state.refused;
    },
    close: async () => {
      server.closeAllConnections();
      await new Promise((r) => server.close(r));
    },
  };
}
