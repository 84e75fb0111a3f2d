// A keep-alive HTTP server that, after answering, sends bytes nobody asked for on the idle
// connection: a forged response, as a hostile or broken server could (response-queue poisoning:
// GHSA-35p6-xmwp-9g52 for undici, hackerone 3582376 for node:http). A client that reused that
// connection would take the forged bytes as the answer to its next request.
import { once } from 'node:events';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';

export const FORGED = '{"forged":true}';

export interface UnsolicitedServer {
  url: string;
  /** the connections opened to it so far */
  connections(): number;
  /** the answers it has written so far (the forged ones not counted) */
  answers(): number;
  close(): Promise<void>;
}

/** Answers every request with `{"n":<its number>}`, then, `afterMs` later, writes a forged response on the same socket. */
export async function startUnsolicitedServer(afterMs = 10): Promise<UnsolicitedServer> {
  let opened = 0;
  let answered = 0;
  const server: Server = createServer((req, res) => {
    req.resume();
    req.on('end', () => {
      const body = JSON.stringify({ n: ++answered });
      res.setHeader('content-type', 'application/json');
      res.end(body, () => {
        setTimeout(() => {
          if (!req.socket.destroyed)
            req.socket.write(
              `HTTP/1.1 200 OK\r\ncontent-type: application/json\r\ncontent-length: ${FORGED.length}\r\n\r\n${FORGED}`,
            );
        }, afterMs);
      });
    });
  });
  server.on('connection', () => opened++);
  server.listen(0, '127.0.0.1');
  await once(server, 'listening');
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    connections: () => opened,
    answers: () => answered,
    close: async () => {
      server.closeAllConnections();
      await new Promise((r) => server.close(r));
    },
  };
}
