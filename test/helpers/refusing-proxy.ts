// HTTP proxies to the emulator that tamper with some calls and forward the others as sent: one that
// refuses a chatbot's writes (routing and roster tests), one that rewrites the list's answers (a
// service that pages badly: the seal tests).
import { once } from 'node:events';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { freshFetch } from './fresh-fetch.js';

/** An answer as the proxy sends it on. */
export interface ProxyAnswer {
  status: number;
  contentType: string;
  body: Buffer;
}

/** A call the proxy received: its path, its body, and the emulator's answer to it, asked for when wanted. */
export interface ProxyCall {
  path: string;
  body: Buffer;
  forward(): Promise<ProxyAnswer>;
}

/** An HTTP proxy to `target` whose every answer is `answer`'s (call.forward(): the emulator's own). */
export async function proxyOf(
  target: string,
  answer: (call: ProxyCall) => Promise<ProxyAnswer>,
): Promise<{ url: string; close(): Promise<void> }> {
  const server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      const body = Buffer.concat(chunks);
      const headers = Object.fromEntries(
        Object.entries(req.headers).filter(([k]) => !['host', 'connection', 'content-length'].includes(k)),
      ) as Record<string, string>;
      const forward = async (): Promise<ProxyAnswer> => {
        const got = await freshFetch(target + req.url, { method: req.method, headers, ...(body.length && { body }) });
        return {
          status: got.status,
          contentType: got.headers.get('content-type') ?? 'application/json',
          body: Buffer.from(await got.arrayBuffer()),
        };
      };
      answer({ path: req.url ?? '', body, forward }).then(
        (a) => res.writeHead(a.status, { 'content-type': a.contentType }).end(a.body),
        (err: Error) => res.writeHead(502).end(err.message),
      );
    });
  });
  server.listen(0, '127.0.0.1');
  await once(server, 'listening');
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    close: async () => {
      server.closeAllConnections();
      await new Promise((r) => server.close(r));
    },
  };
}

/**
 * An HTTP proxy to the emulator that answers 503 to every listing write (create, update, delete)
 * for one serial number and forwards everything else: that chatbot's writes fail, its list pages.
 */
export async function refusingWritesOf(
  target: string,
  serialNumber: string,
): Promise<{ url: string; refused: number; close(): Promise<void> }> {
  const state = { refused: 0 };
  const proxy = await proxyOf(target, async (call) => {
    if (/RealEstate(Create|Update|Delete)$/.test(call.path) && call.body.toString().includes(`"${serialNumber}"`)) {
      state.refused++;
      const refusal = { error: `writes into ${serialNumber} refused by the test` };
      return { status: 503, contentType: 'application/json', body: Buffer.from(JSON.stringify(refusal)) };
    }
    return call.forward();
  });
  return {
    url: proxy.url,
    get refused() {
      return state.refused;
    },
    close: proxy.close,
  };
}

/** A list page as the emulator answered it (its envelope's Data), with the page asked for. */
export interface ListPage {
  pageNumber: number;
  pageSize: number;
  data: { List: Array<Record<string, unknown>>; VirtualCount: number };
}

/**
 * An HTTP proxy to the emulator whose RealEstateList answers `page` makes of the emulator's (its
 * Data rewritten; a status: that answer, an error), everything else forwarded.
 */
export async function listTamperingOf(
  target: string,
  page: (p: ListPage) => ListPage['data'] | { status: number },
): Promise<{ url: string; close(): Promise<void> }> {
  return proxyOf(target, async (call) => {
    const answer = await call.forward();
    if (!call.path.endsWith('/RealEstateList') || answer.status !== 200) return answer;
    const asked = JSON.parse(call.body.toString()) as { PageNumber: number; PageSize: number };
    const envelope = JSON.parse(answer.body.toString()) as { Data: ListPage['data'] };
    const made = page({ pageNumber: asked.PageNumber, pageSize: asked.PageSize, data: envelope.Data });
    if ('status' in made) {
      const failure = { Data: null, Version: '1', Success: false, Code: made.status, Message: 'failed by the test' };
      return { status: made.status, contentType: 'application/json', body: Buffer.from(JSON.stringify(failure)) };
    }
    return { ...answer, body: Buffer.from(JSON.stringify({ ...envelope, Data: made })) };
  });
}
