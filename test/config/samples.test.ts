// The sample configs teach the right habits: the one production advice says to copy has no secret
// defaults (a copy fails naming the variable instead of running with the emulator's dev key), and
// the emulator and the configs read the keys from one pair of variables.
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { parse } from 'yaml';
import { parseConfig } from '../../src/config/load.js';
import { ConfigError } from '../../src/errors.js';

const REPO = join(import.meta.dirname, '../..');
const read = (path: string) => readFileSync(join(REPO, path), 'utf8');
const SECRET_DEFAULT = /\$\{[A-Z0-9_]*(KEY|SECRET|TOKEN|PASSWORD)[A-Z0-9_]*:-[^}]*\}/g;

describe('sample configs', () => {
  it('fixtures/compose.yaml (what production copies) has no secret defaults', () => {
    expect(read('fixtures/compose.yaml').match(SECRET_DEFAULT)).toBeNull();
    expect(read('README.md')).toContain('copy `fixtures/compose.yaml`');
    let error: unknown;
    try {
      parseConfig(read('fixtures/compose.yaml'), 'compose.yaml', {});
    } catch (err) {
      error = err;
    }
    expect(error).toBeInstanceOf(ConfigError);
    expect((error as Error).message).toContain('api.secretKey: environment variable CHATBOT_SECRET_KEY is not set');
    expect((error as Error).message).toContain('api.sessionKey: environment variable CHATBOT_SESSION_KEY is not set');
  });

  it('the emulator and the configs use one pair of variable names for the keys', () => {
    const compose = parse(read('docker-compose.yml'));
    expect(Object.keys(compose.services.emulator.environment)).toEqual(['CHATBOT_SECRET_KEY', 'CHATBOT_SESSION_KEY']);
    expect(compose.services.worker.environment).toMatchObject({
      CHATBOT_SECRET_KEY: expect.any(String),
      CHATBOT_SESSION_KEY: expect.any(String),
    });
    for (const file of [
      'fixtures/compose.yaml',
      'fixtures/demo.yaml',
      'src/emulator/options.ts',
      'README.md',
      'docker-compose.yml',
    ]) {
      expect(read(file), file).not.toMatch(/FEEDSYNC_(SECRET|SESSION)_KEY/);
    }
  });
});
