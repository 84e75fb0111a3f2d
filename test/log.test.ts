// Secrets never reach the log: not in config dumps, not in headers, not inside error messages.
import { Writable } from 'node:stream';
import { describe, expect, it } from 'vitest';
import { createApiClient } from '../src/api/client.js';
import { createLogger, redactSecrets, registerSecret } from '../src/log.js';
import { startTestEmulator } from './helpers/emulator.js';

const SECRET = 'sk-live-7f3a9c2e51d04b8a';
const SESSION = 'sess-2b6e0d9f4c1a8e37';

function capture() {
  const lines: string[] = [];
  const stream = new Writable({
    write(chunk, _enc, done) {
      lines.push(String(chunk));
      done();
    },
  });
  return { logger: createLogger({ level: 'debug', destination: stream }), text: () => lines.join('') };
}

describe('log redaction', () => {
  it('masks the keys in config objects and auth headers by field name, even when not registered', () => {
    const { logger, text } = capture();
    const unregistered = 'never-registered-key-55';
    logger.info({ api: { baseUrl: 'https://x', secretKey: unregistered, sessionKey: unregistered } }, 'config');
    logger.info(
      {
        headers: {
          Authorization: unregistered,
          'chatrobot-sessionkey': unregistered,
          'content-type': 'application/json',
        },
      },
      'request',
    );
    logger.info({ req: { headers: { authorization: unregistered, 'chatrobot-sessionkey': unregistered } } }, 'nested');
    logger.info({ secretKey: unregistered, sessionKey: unregistered }, 'top level');
    const out = text();
    expect(out).not.toContain(unregistered);
    expect(out).toContain('[REDACTED]');
    expect(out).toContain('application/json'); // the rest is kept
    expect(out.split('\n').filter(Boolean)).toHaveLength(4);
  });

  it('masks a registered key anywhere: messages, error messages and stacks, unexpected fields', () => {
    registerSecret(SECRET);
    registerSecret(SESSION);
    const { logger, text } = capture();
    logger.error({ err: new Error(`upstream said: bad key ${SECRET}`) }, 'call failed');
    logger.warn(`retrying with ${SESSION}`);
    logger.info({ whatever: { deep: [`Bearer ${SECRET}`] } }, 'odd place');
    const out = text();
    expect(out).not.toContain(SECRET);
    expect(out).not.toContain(SESSION);
    expect(out).toContain('bad key [REDACTED]');
    expect(redactSecrets(`x ${SECRET} y`)).toBe('x [REDACTED] y');
  });

  it('the client registers its keys: its errors and call events, logged, show neither key', async () => {
    const secretKey = 'client-secret-9d8c7b6a';
    const sessionKey = 'client-session-1a2b3c4d';
    const t = await startTestEmulator({ secretKey: 'emulator-wants-another', sessionKey: 'emulator-wants-other' });
    const { logger, text } = capture();
    const api = createApiClient({
      baseUrl: t.url,
      secretKey,
      sessionKey,
      timeoutMs: 2000,
      onCall: (e) => logger.debug({ call: e }, 'api call'),
    });
    const errors = await Promise.all([
      api.createListing({} as never).catch((e: unknown) => e),
      api.listListings({ SerialNumber: 'SN-1' }).catch((e: unknown) => e),
      api.editSettings({ serialNumber: 'SN-1' }).catch((e: unknown) => e),
    ]);
    await t.close();
    for (const err of errors)
      logger.error({ err, opts: { secretKey, sessionKey } }, `failed: ${(err as Error).message} with ${secretKey}`);
    const out = text();
    expect(out).toContain('HTTP 401');
    expect(out).not.toContain(secretKey);
    expect(out).not.toContain(sessionKey);
  });
});
