// A feed server that keeps an MLS's rules: each bearer token may make `perSecond` requests in any
// one-second window; one more and the token is suspended (403 for good), as MLS Grid does. Serves
// whatever `body(path)` returns, with optional extra headers (quota headers) on every answer.
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';

export interface FakeMls {
  url: string;
  /** every request: arrival time, token, path, status */
  log: Array<{ at: number; token: string; path: string; status: number }>;
  suspended: Set<string>;
  /** the next answers (in order) instead of the feed: status and headers */
  script: Array<{ status: number; headers?: Record<string, string> }>;
  close(): Promise<void>;
}

export async function startFakeMls(opts: {
  perSecond: number;
  body: (path: string) => string | undefined;
  headers?: () => Record<string, string>;
}): Promise<FakeMls> {
  const fake = { log: [], suspended: new Set<string>(), script: [] } as unknown as FakeMls;
  const answer = (req: IncomingMessage, res: ServerResponse) => {
    const at = Date.now();
    const token = String(req.headers.authorization ?? '').replace(/^Bearer /, '');
    const path = new URL(req.url ?? '/', 'http://mls').pathname;
    const send = (status: number, text: string, headers: Record<string, string> = {}) => {
      fake.log.push({ at, token, path, status });
      res.writeHead(status, {
        'content-type': status === 200 ? 'text/csv' : 'text/plain',
        ...opts.headers?.(),
        ...headers,
      });
      res.end(text);
    };
    if (fake.suspended.has(token)) return send(403, 'token suspended');
    const recent = fake.log.filter((r) => r.token === token && r.status !== 403 && r.at > at - 1000).length;
    if (recent >= opts.perSecond) {
      fake.suspended.add(token);
      return send(403, `token suspended: more than ${opts.perSecond} requests in one second`);
    }
    const scripted = fake.script.shift();
    if (scripted) return send(scripted.status, `scripted ${scripted.status}`, scripted.headers);
    const body = opts.body(path);
    return body === undefined ? send(404, 'no such feed') : send(200, body);
  };
  const server = createServer(answer);
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  fake.url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  fake.close = () =>
    new Promise<void>((resolve) => {
      server.close(() => resolve());
      server.closeAllConnections();
    });
  return fake;
}
