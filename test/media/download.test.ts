// One photo download (src/media/download.ts) against photo hosts on two loopback addresses: the
// address a connection uses is the address that was checked, so a name that resolves to an allowed
// address when checked cannot reach another one when connecting (DNS rebinding); and the whole
// body must be one image (image-check.ts).
import type { LookupAddress } from 'node:dns';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { parseAllowance } from '../../src/media/address-guard.js';
import { downloadPhoto, type PhotoDownloadOptions } from '../../src/media/download.js';
import { photoAgent, type Resolve } from '../../src/media/photo-agent.js';
import { fakeImage, startPhotoHost, type PhotoHost } from '../helpers/photo-host.js';

let allowed: PhotoHost;
let inner: PhotoHost;

beforeAll(async () => {
  allowed = await startPhotoHost({ address: '127.0.0.1' });
  // the same port on another loopback address: where a rebound name would lead
  inner = await startPhotoHost({ address: '127.0.0.2', port: Number(new URL(allowed.origin).port) });
});
afterAll(async () => {
  await Promise.all([allowed.close(), inner.close()]);
});

const options = (resolve?: Resolve): PhotoDownloadOptions => ({
  credentials: { headers: {}, hosts: new Set() },
  agent: photoAgent(parseAllowance(['127.0.0.1']), 1, resolve),
  timeoutMs: 2000,
  maxBytes: 1 << 20,
});

describe('downloadPhoto', () => {
  it('connects to the address it checked: a name rebound between lookups never reaches the other address', async () => {
    for (const h of [allowed, inner]) h.set('/p.jpg', { kind: 'image', body: fakeImage('jpeg', `at ${h.origin}`) });
    const answers = ['127.0.0.1', '127.0.0.2'];
    const asked: string[] = [];
    // a resolver whose answer changes after the first question, as a rebinding DNS server's does
    const rebinding: Resolve = (hostname, _family, callback) => {
      asked.push(hostname);
      const address = answers[Math.min(asked.length - 1, answers.length - 1)]!;
      callback(null, [{ address, family: 4 } satisfies LookupAddress]);
    };
    const url = `http://rebind.test:${new URL(allowed.origin).port}/p.jpg`;
    const first = await downloadPhoto(url, options(rebinding));
    expect(first.ok && first.bytes.equals(fakeImage('jpeg', `at ${allowed.origin}`))).toBe(true);
    const second = await downloadPhoto(url, options(rebinding));
    expect(second).toEqual({
      ok: false,
      reason:
        'refused: rebind.test: 127.0.0.2 is a loopback address, not a public one (feeds[].media.allowInternal allows an internal photo host)',
    });
    expect(asked).toEqual(['rebind.test', 'rebind.test']);
    expect([allowed.count('/p.jpg'), inner.total()]).toEqual([1, 0]);
  });

  it('refuses a name any of whose addresses is internal', async () => {
    const mixed: Resolve = (_h, _f, callback) =>
      callback(null, [
        { address: '127.0.0.1', family: 4 },
        { address: '127.0.0.2', family: 4 },
      ]);
    const got = await downloadPhoto(`http://mixed.test:${new URL(allowed.origin).port}/p.jpg`, options(mixed));
    expect(got.ok ? 'stored' : got.reason).toMatch(/^refused: mixed\.test: 127\.0\.0\.2 is a loopback address/);
    expect(inner.total()).toBe(0);
  });

  it('stores only a body that is one whole image: a GIF header before an HTML page, or an image with more after it, is not one', async () => {
    const gif = fakeImage('gif', 'g');
    allowed.set('/gif-html', {
      kind: 'image',
      body: Buffer.concat([gif.subarray(0, 13), Buffer.from('<html><script>alert(1)</script></html>')]),
      contentType: 'image/gif',
    });
    allowed.set('/gif-tail', {
      kind: 'image',
      body: Buffer.concat([gif, Buffer.alloc(30_000, 'x')]),
      contentType: 'image/gif',
    });
    allowed.set('/png-cut', { kind: 'image', body: fakeImage('png', 'p').subarray(0, 200), contentType: 'image/png' });
    allowed.set('/gif', { kind: 'image', body: Buffer.concat([gif, Buffer.alloc(16)]), contentType: 'text/html' });
    const reasons = await Promise.all(
      ['/gif-html', '/gif-tail', '/png-cut'].map(async (p) => downloadPhoto(allowed.url(p), options())),
    );
    expect(reasons.map((r) => (r.ok ? 'stored' : r.reason))).toEqual([
      'not an image: starts as GIF but is not a whole one: an unknown block 0x3c at byte 13',
      'not an image: a GIF followed by 30000 bytes that are not part of it',
      expect.stringMatching(/^not an image: starts as PNG but is not a whole one: cut short in/),
    ]);
    const ok = await downloadPhoto(allowed.url('/gif'), options());
    expect(ok.ok && { type: ok.type.contentType, width: ok.width, height: ok.height }).toEqual({
      type: 'image/gif',
      width: 2,
      height: 3,
    });
  });
});
