// A photo host for the media mirror's tests, strict where real ones are: like MLS Grid's media host
// since 1 June 2026 (docs/vendors.md, MLS Grid), it can demand a User-Agent (any other: 403). Each path serves
// what the test set: an image, a non-image, an oversized body, a slow one that never completes, a
// 404, or a redirect. It counts requests per path and keeps the headers each request came with.
// Listens on 127.0.0.1 (or the address given), port 0; close() drops hanging connections too.
import { readFileSync } from 'node:fs';
import { createServer, type IncomingHttpHeaders, type RequestListener, type Server } from 'node:http';
import { createServer as createTlsServer } from 'node:https';
import type { AddressInfo } from 'node:net';
import { testImage, type ImageKind } from './test-images.js';

export type PhotoAnswer =
  | { kind: 'image'; body: Buffer; contentType?: string }
  | { kind: 'status'; status: number; body?: string }
  /** `bytes` bytes that start like a JPEG, without Content-Length */
  | { kind: 'huge'; bytes: number }
  /** headers and a first chunk, then nothing: the download's deadline ends it */
  | { kind: 'slow' }
  | { kind: 'redirect'; location: string };

export interface PhotoHost {
  origin: string;
  url(path: string): string;
  /** what `path` answers from now on */
  set(path: string, answer: PhotoAnswer): void;
  /** requests per path */
  count(path: string): number;
  total(): number;
  /** the headers of every request, in order */
  seen: Array<{ path: string; headers: IncomingHttpHeaders }>;
  /** every request answers 403 unless its User-Agent is this */
  requireUserAgent?: string;
  close(): Promise<void>;
}

/** A whole image of its type (test-images.ts) whose bytes are its own (`tag`), about `size` bytes. */
export function fakeImage(type: ImageKind, tag: string, size = 300): Buffer {
  return testImage(type, tag, size);
}

/** The test CA (test/helpers/tls/ca.pem) a child process trusts through NODE_EXTRA_CA_CERTS. */
export const TEST_CA = new URL('./tls/ca.pem', import.meta.url).pathname;

export interface PhotoHostOptions {
  /** where it listens (default 127.0.0.1; 127.0.0.2 and the like are other loopback addresses on Linux) */
  address?: string;
  /** https with the test certificate (tls/host.pem: localhost, photos.test, 127.0.0.1, 127.0.0.2; signed by TEST_CA) */
  tls?: boolean;
  /** the host name its URLs carry (default: the address) */
  name?: string;
  /** default 0: any free port */
  port?: number;
}

export async function startPhotoHost(opts: PhotoHostOptions = {}): Promise<PhotoHost> {
  const address = opts.address ?? '127.0.0.1';
  const serve = (listener: RequestListener): Server =>
    opts.tls
      ? createTlsServer(
          {
            key: readFileSync(new URL('./tls/host.key', import.meta.url)),
            cert: readFileSync(new URL('./tls/host.pem', import.meta.url)),
          },
          listener,
        )
      : createServer(listener);
  const answers = new Map<string, PhotoAnswer>();
  const counts = new Map<string, number>();
  const server: Server = serve((req, res) => {
    const path = new URL(req.url ?? '/', 'http://x').pathname;
    counts.set(path, (counts.get(path) ?? 0) + 1);
    host.seen.push({ path, headers: req.headers });
    if (host.requireUserAgent !== undefined && req.headers['user-agent'] !== host.requireUserAgent) {
      res.writeHead(403, { 'content-type': 'text/plain' }).end('User-Agent must be your access token');
      return;
    }
    const a = answers.get(path) ?? { kind: 'status', status: 404, body: 'not found' };
    switch (a.kind) {
      case 'image':
        res
          .writeHead(200, { 'content-type': a.contentType ?? 'image/jpeg', 'content-length': a.body.length })
          .end(a.body);
        return;
      case 'status':
        res.writeHead(a.status, { 'content-type': 'text/html' }).end(a.body ?? '');
        return;
      case 'redirect':
        res.writeHead(302, { location: a.location }).end();
        return;
      case 'slow':
        res.writeHead(200, { 'content-type': 'image/jpeg' });
        res.write(fakeImage('jpeg', 'slow', 100));
        return;
      case 'huge': {
        res.writeHead(200, { 'content-type': 'image/jpeg' });
        const chunk = fakeImage('jpeg', 'huge', 64 * 1024);
        let sent = 0;
        const pump = () => {
          while (sent < a.bytes) {
            sent += chunk.length;
            if (!res.write(chunk)) return void res.once('drain', pump);
          }
          res.end();
        };
        res.on('error', () => undefined);
        pump();
        return;
      }
    }
  });
  await new Promise<void>((resolve) => server.listen(opts.port ?? 0, address, resolve));
  const name = opts.name ?? (address.includes(':') ? `[${address}]` : address);
  const origin = `${opts.tls ? 'https' : 'http'}://${name}:${(server.address() as AddressInfo).port}`;
  const host: PhotoHost = {
    origin,
    url: (path) => origin + path,
    set: (path, answer) => void answers.set(path, answer),
    count: (path) => counts.get(path) ?? 0,
    total: () => [...counts.values()].reduce((a, b) => a + b, 0),
    seen: [],
    close: () =>
      new Promise<void>((resolve, reject) => {
        server.closeAllConnections();
        server.close((err) => (err ? reject(err) : resolve()));
      }),
  };
  return host;
}
