// Servers that behave as an attacker or a broken upstream would: huge and endless bodies, slow
// drips, gzip bombs, redirects to another origin, error pages that echo the request's headers.
// Each listens on 127.0.0.1 port 0 and records what it was sent, so a test can assert what a second
// origin received.
import { once } from 'node:events';
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { gzipSync } from 'node:zlib';
import { afterEach } from 'vitest';

export interface ReceivedRequest {
  method: string;
  url: string;
  headers: IncomingMessage['headers'];
  body: string;
}

export interface HostileServer {
  url: string;
  origin: string;
  received: ReceivedRequest[];
  /** bytes of body written by the server, all responses together */
  bytesSent: () => number;
  close(): Promise<void>;
}

export type Handler = (
  req: IncomingMessage & { body: string },
  res: ServerResponse,
  sent: (n: number) => void,
) => void | Promise<void>;

/** `startHostile` for the tests of one file: every server a test starts is closed after it. */
export function useHostileServers(): (handler: Handler) => Promise<HostileServer> {
  const servers: HostileServer[] = [];
  afterEach(async () => {
    for (const s of servers.splice(0)) await s.close();
  });
  return async (handler) => {
    const s = await startHostile(handler);
    servers.push(s);
    return s;
  };
}

export async function startHostile(handler: Handler): Promise<HostileServer> {
  const received: ReceivedRequest[] = [];
  let sent = 0;
  const server: Server = createServer(async (req, res) => {
    const chunks: Buffer[] = [];
    for await (const c of req) chunks.push(c as Buffer);
    const body = Buffer.concat(chunks).toString('utf8');
    received.push({ method: req.method ?? '', url: req.url ?? '', headers: req.headers, body });
    res.on('error', () => {});
    try {
      await handler(Object.assign(req, { body }), res, (n) => (sent += n));
    } catch {
      res.destroy();
    }
  });
  server.listen(0, '127.0.0.1');
  await once(server, 'listening');
  const { port } = server.address() as AddressInfo;
  const origin = `http://127.0.0.1:${port}`;
  return {
    url: `${origin}/`,
    origin,
    received,
    bytesSent: () => sent,
    close: async () => {
      server.closeAllConnections();
      server.close();
      await once(server, 'close').catch(() => {});
    },
  };
}

/** Writes `chunk` again and again (forever when total is Infinity), respecting backpressure; stops when the client leaves. */
export async function pump(
  res: ServerResponse,
  chunk: Buffer,
  total: number,
  sent: (n: number) => void = () => {},
): Promise<void> {
  let written = 0;
  let gone = false;
  res.on('close', () => (gone = true));
  while (!gone && written < total) {
    const piece = total - written < chunk.length ? chunk.subarray(0, total - written) : chunk;
    written += piece.length;
    sent(piece.length);
    if (!res.write(piece)) await drained(res);
  }
  if (!gone) res.end();
}

function drained(res: ServerResponse): Promise<void> {
  return new Promise((resolve) => {
    const done = () => {
      res.off('drain', done);
      res.off('close', done);
      resolve();
    };
    res.on('drain', done);
    res.on('close', done);
  });
}

/** A JSON envelope whose Message is `bytes` long, streamed without a Content-Length. */
export async function hugeEnvelope(res: ServerResponse, bytes: number, sent?: (n: number) => void): Promise<void> {
  res.writeHead(200, { 'content-type': 'application/json' });
  res.write('{"Success":true,"Code":200,"Message":"');
  await pump(res, Buffer.alloc(1024 * 1024, 'x'), bytes, sent);
}

/** One byte every `everyMs`, `total` bytes in all; the client's deadline should end it long before. */
export async function drip(
  res: ServerResponse,
  everyMs: number,
  total: number,
  sent: (n: number) => void,
  head: Record<string, string> = {},
): Promise<void> {
  res.writeHead(200, { 'content-type': 'application/json', ...head });
  let gone = false;
  res.on('close', () => (gone = true));
  for (let i = 0; i < total && !gone; i++) {
    res.write(' ');
    sent(1);
    await new Promise((r) => setTimeout(r, everyMs));
  }
  if (!gone) res.end('{}');
}

/**
 * A gzip bomb: `mebibytes` MiB of zeros as concatenated gzip members of 1 MiB each (a valid gzip
 * stream that gunzip reads whole). 10 GiB of zeros is about 10 MB on the wire.
 */
export const ZERO_MEMBER = gzipSync(Buffer.alloc(1024 * 1024), { level: 9 });

export async function gzipBomb(
  res: ServerResponse,
  mebibytes: number,
  head: Record<string, string>,
  sent?: (n: number) => void,
): Promise<void> {
  res.writeHead(200, head);
  await pump(res, Buffer.concat(Array.from({ length: 64 }, () => ZERO_MEMBER)), mebibytes * ZERO_MEMBER.length, sent);
}

/** An error page that shows the request's headers back, as some proxies and frameworks do. */
export function echoHeaders(req: IncomingMessage & { body: string }, res: ServerResponse, status: number): void {
  res.writeHead(status, { 'content-type': 'text/html' });
  const h = req.headers;
  const creds = [h.authorization, h['chatrobot-sessionkey'], h['x-api-auth']].filter(Boolean).join(' ');
  res.end(`${creds} ${req.url} error ${status} ${JSON.stringify(h)}\n${req.body.slice(0, 2000)}`);
}

/** Sends a redirect to `location`. */
export function redirect(res: ServerResponse, status: number, location: string): void {
  res.writeHead(status, { location });
  res.end();
}
