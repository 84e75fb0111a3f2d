// The emulator's /__emulator/ paths are open on loopback only; on any other address they need its key.
import type { IncomingMessage } from 'node:http';
import { describe, expect, it } from 'vitest';
import { adminAllowed } from '../../src/emulator/server.js';

const req = (headers: Record<string, string>) => ({ headers }) as unknown as IncomingMessage;

describe('emulator admin paths', () => {
  it('are open on loopback, and need the secret key on any other address', () => {
    for (const host of ['127.0.0.1', 'localhost', '::1']) expect(adminAllowed(req({}), host, 'k-1')).toBe(true);
    for (const host of ['0.0.0.0', '::', '10.1.2.3']) {
      expect(adminAllowed(req({}), host, 'k-1')).toBe(false);
      expect(adminAllowed(req({ authorization: 'wrong' }), host, 'k-1')).toBe(false);
      expect(adminAllowed(req({ authorization: 'k-1' }), host, 'k-1')).toBe(true);
      expect(adminAllowed(req({ 'x-emulator-key': 'k-1' }), host, 'k-1')).toBe(true);
    }
  });
});
