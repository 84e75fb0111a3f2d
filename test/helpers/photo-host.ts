// A photo host for the media mirror's tests, strict where real ones are: like MLS Grid's media host
// since 1 June 2026 (FIELD-NOTES.md), it can demand a User-Agent (any other: 403). Each path serves
// what the test set: an image, a non-image, an oversized body, a slow one that never completes, a
// 404, or a redirect. It counts requests per path and keeps the headers each request came with.
// Listens on 127.0.0.1, port 0; close() drops hanging connections too.
import { createServer, type IncomingHttpHeaders, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';

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

/** An image with the magic bytes of its type and a body of its own (`tag` makes it unique). */
export function fakeImage(type: 'jpeg' | 'png' | 'gif' | 'webp' | 'avif', tag: string, size = 300): Buffer {
  const head = {
    jpeg: Buffer.from([0xff, 0xd8, 0xff, 0xe0]),
    png: Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]),
    gif: Buffer.from('GIF89a', 'latin1'),
    webp: Buffer.concat([Buffer.from('RIFF', 'latin1'), Buffer.from([0, 0, 0, 0]), Buffer.from('WEBPVP8 ', 'latin1')]),
    avif: Buffer.concat([Buffer.from([0, 0, 0, 0x1c]), Buffer.from('ftypavif\0\0\0\0avifmif1miaf', 'latin1')]),
  }[type];
  const fill = Buffer.alloc(Math.max(0, size - head.length), `${tag}|`);
  return Buffer.concat([head, fill]);
}

export async function startPhotoHost(): Promise<PhotoHost> {
  const answers = new Map<string, PhotoAnswer>();
  const counts = new Map<string, number>();
  const server: Server = createServer((req, res) => {
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
        res.writeHead(200, { 'content-type': a.contentType ?? 'image/jpeg', 'content-length': a.body.length }).end(a.body);
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
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const origin = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
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
