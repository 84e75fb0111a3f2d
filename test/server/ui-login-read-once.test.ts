// The queue UI's login is read from the environment once: the value checked for its length is the
// value the UI then asks for. It was read twice (once to use, once to check), so a token that was
// short at the first read and long at the second was used unchecked.
import { describe, expect, it } from 'vitest';
import { ConfigError } from '../../src/errors.js';
import { uiAdminFromEnv } from '../../src/server/ui-auth.js';

/** an environment whose `name` reads as each of `values` in turn (the last one from then on), counting its reads */
function changing(name: string, values: string[], rest: NodeJS.ProcessEnv = {}) {
  let reads = 0;
  const env = { ...rest } as NodeJS.ProcessEnv;
  Object.defineProperty(env, name, { enumerable: true, get: () => values[Math.min(reads++, values.length - 1)] });
  return { env, reads: () => reads };
}

describe('the queue UI login, read once', () => {
  it('a token short at its read is refused, whatever a later read would say', () => {
    const { env, reads } = changing('FEEDSYNC_UI_TOKEN', ['tok-short-1', 'x'.repeat(40)]);
    let thrown: unknown;
    try {
      uiAdminFromEnv(env);
    } catch (err) {
      thrown = err;
    }
    expect(thrown).toBeInstanceOf(ConfigError);
    expect((thrown as ConfigError).message).toMatch(/FEEDSYNC_UI_TOKEN is too short/);
    expect(reads()).toBe(1);
  });

  it('a password likewise', () => {
    const { env, reads } = changing('FEEDSYNC_UI_PASSWORD', ['pw-short', 'a passphrase long enough'], {
      FEEDSYNC_UI_USER: 'ops',
    });
    expect(() => uiAdminFromEnv(env)).toThrow(/FEEDSYNC_UI_PASSWORD is too short/);
    expect(reads()).toBe(1);
  });
});
