// Refusal bodies as a person reads them: decoded (gzip, deflate, br, or gzip by its magic bytes),
// capped, the OData error.message shown, never raw bytes.
import { brotliCompressSync, deflateRawSync, deflateSync, gzipSync } from 'node:zlib';
import { describe, expect, it } from 'vitest';
import { FeedReadError } from '../../src/errors.js';
import { errorBodyMessage } from '../../src/feeds/source/error-body.js';
import { FeedSource, openFeed } from '../../src/feeds/index.js';
import { silentLogger } from '../../src/log.js';
import { useHostileServers } from '../helpers/hostile-server.js';
import { collectUntilError } from './helpers.js';

const odata = (message: string) => Buffer.from(JSON.stringify({ error: { code: '400', message } }));

describe('errorBodyMessage', () => {
  it('decodes gzip, deflate (zlib and raw) and br, and shows the OData error.message', () => {
    expect(errorBodyMessage(gzipSync(odata('COMPRESSION REQUIRED')), 'gzip')).toBe('COMPRESSION REQUIRED');
    expect(errorBodyMessage(deflateSync(odata('bad $orderby')), 'deflate')).toBe('bad $orderby');
    expect(errorBodyMessage(deflateRawSync(odata('bad $orderby')), 'deflate')).toBe('bad $orderby');
    expect(errorBodyMessage(brotliCompressSync(odata('no such field ListPrice')), 'br')).toBe(
      'no such field ListPrice',
    );
  });

  it('gunzips a body that is gzip without saying so (the magic bytes)', () => {
    expect(errorBodyMessage(gzipSync(odata('Invalid filter')), null)).toBe('Invalid filter');
  });

  it('never shows raw bytes: binary is named by its size; text is capped', () => {
    expect(errorBodyMessage(Buffer.from([0, 1, 2, 3, 200, 201, 0, 5]), null)).toBe('(8 bytes of binary data)');
    expect(errorBodyMessage(Buffer.from([0x1f, 0x8b, 8, 0, 1, 2, 3]), 'gzip')).toMatch(/does not decode/);
    const long = errorBodyMessage(Buffer.from('x'.repeat(10_000)), null)!;
    expect(long.length).toBeLessThanOrEqual(301);
  });

  it('a body that decodes past the cap is not expanded further', () => {
    expect(errorBodyMessage(gzipSync(Buffer.alloc(50 * 1024 * 1024, 'a')), 'gzip')).toMatch(/larger than 64 KiB/);
  });

  it('a deflate or br bomb is named as a gzip bomb is (issue 49): the same message whatever the encoding', () => {
    const zeros = Buffer.alloc(50 * 1024 * 1024, 'a');
    const gzip = errorBodyMessage(gzipSync(zeros), 'gzip');
    expect(gzip).toBe('(an error body larger than 64 KiB once decoded)');
    expect(errorBodyMessage(deflateSync(zeros), 'deflate')).toBe(gzip);
    expect(errorBodyMessage(deflateRawSync(zeros), 'deflate')).toBe(gzip);
    expect(errorBodyMessage(brotliCompressSync(zeros), 'br')).toBe(gzip);
  });
});

describe('a refused RESO request over HTTP', () => {
  const hostile = useHostileServers();

  it('reports the gzip-compressed OData message, not its bytes (MLS Grid answers every refusal gzipped)', async () => {
    const server = await hostile((_req, res) => {
      res
        .writeHead(400, { 'content-type': 'application/json', 'content-encoding': 'gzip' })
        .end(gzipSync(odata('Invalid $filter: ListPrice is not searchable')));
    });
    const url = `${server.origin}/v2`;
    const source = FeedSource.parse({ kind: 'reso', url, paging: 'nextLink', retries: 0, timeoutMs: 2000 });
    const { error } = await collectUntilError(openFeed('f', source, { baseDir: '/', logger: silentLogger }).items);
    expect(error).toBeInstanceOf(FeedReadError);
    expect(error!.message).toContain('HTTP 400 Bad Request: Invalid $filter: ListPrice is not searchable');
    expect(error!.message).not.toMatch(/\\u001f|\u001f|�/);
  });
});
