// The OAuth2 token request goes through the same bounded transport as every other request: a
// redirect is refused by name (the client secret never reaches another origin), a huge or endless
// answer fails at the cap, and a server that drips its answer fails at the deadline.
import { afterEach, describe, expect, it } from 'vitest';
import { clearTokenCache, oauth2TokenSource } from '../../src/feeds/reso/oauth2.js';
import { failure } from '../helpers/failure.js';
import { drip, pump, redirect, useHostileServers } from '../helpers/hostile-server.js';

const hostile = useHostileServers();
afterEach(() => clearTokenCache());

const auth = (tokenUrl: string) => ({
  kind: 'oauth2' as const,
  tokenUrl,
  clientId: 'feedsync-test',
  clientSecret: 'oauth-secret-0123456789',
});

describe('OAuth2 token request against hostile servers', () => {
  it('a redirect is refused, not followed: the other origin receives nothing and no retry is made', async () => {
    const elsewhere = await hostile((_req, res) => {
      res.end('{"access_token":"stolen"}');
    });
    const tokens = await hostile((_req, res) => redirect(res, 307, `${elsewhere.url}token`));
    const err = await failure(
      oauth2TokenSource(auth(`${tokens.url}token`), { timeoutMs: 5000, retries: 3, backoffMs: 1 }).token(),
      'the token request',
    );
    expect(err.message).toMatch(/redirect/);
    expect(err.retryable).toBe(false);
    expect(tokens.received).toHaveLength(1);
    expect(elsewhere.received).toHaveLength(0);
  });

  it('an endless answer fails at the byte cap', async () => {
    const tokens = await hostile(async (_req, res, sent) => {
      res.writeHead(200, { 'content-type': 'application/json' });
      await pump(res, Buffer.alloc(64 * 1024, ' '), Infinity, sent);
    });
    const err = await failure(
      oauth2TokenSource(auth(`${tokens.url}token`), { timeoutMs: 10_000, retries: 0 }).token(),
      'the token request',
    );
    expect(err.message).toMatch(/65536 bytes/);
    expect(err.retryable).toBe(false);
    expect(tokens.bytesSent()).toBeLessThan(16 * 1024 * 1024);
  });

  it('an answer dripped a byte at a time fails at the deadline', async () => {
    const tokens = await hostile((_req, res, sent) =>
      drip(res, 100, 10_000, sent, { 'content-type': 'application/json' }),
    );
    const err = await failure(
      oauth2TokenSource(auth(`${tokens.url}token`), { timeoutMs: 1000, retries: 0 }).token(),
      'the token request',
    );
    expect(err.message).toMatch(/1000 ms/);
  });
});
