// Which variable a config value came from, as a refused credential's message says it: the paths are
// the ones messages name (a feed by its name), and only the variables, never a value.
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { fromEnvWords } from '../../src/config/env-words.js';
import { loadConfig } from '../../src/config/load.js';

const dirs: string[] = [];
afterAll(async () => {
  for (const d of dirs) await rm(d, { recursive: true, force: true });
});

async function loaded(yaml: string, env: NodeJS.ProcessEnv) {
  const dir = await mkdtemp(join(tmpdir(), 'feedsync-env-words-'));
  dirs.push(dir);
  await writeFile(join(dir, 'feedsync.yaml'), yaml);
  return loadConfig(join(dir, 'feedsync.yaml'), env);
}

const YAML = [
  'api:',
  '  baseUrl: http://127.0.0.1:9',
  '  secretKey: ${CHATBOT_SECRET_KEY}',
  '  sessionKey: literal-session-key-1',
  'feeds:',
  '  - name: other',
  '    chatbot: SN-1',
  '    source: { kind: csv, path: a.csv }',
  '    mapping: { preset: reso }',
  '  - name: mls',
  '    chatbot: SN-2',
  '    source:',
  '      kind: reso',
  '      url: http://127.0.0.1:9/odata',
  '      auth: { kind: oauth2, tokenUrl: "http://127.0.0.1:9/token", clientId: "${MLS_ID:-mls-client}", clientSecret: "${MLS_SECRET}" }',
  '    mapping: { preset: reso }',
].join('\n');

describe('fromEnvWords', () => {
  it('names the variable behind a key, a group key by its parts, nothing for a key written in the config', async () => {
    const l = await loaded(YAML, { CHATBOT_SECRET_KEY: 'secret-value-0001', MLS_SECRET: 'secret-value-0002' });
    expect(fromEnvWords(l.fromEnv, 'api.secretKey')).toBe(' (from $CHATBOT_SECRET_KEY)');
    expect(fromEnvWords(l.fromEnv, 'api.sessionKey')).toBe('');
    // (the feed by its name, as the message names it; a defaulted variable is named too)
    expect(fromEnvWords(l.fromEnv, 'feeds[mls].source.auth')).toBe(
      ' (clientId from $MLS_ID; clientSecret from $MLS_SECRET)',
    );
    expect(fromEnvWords(l.fromEnv, 'feeds[other].source')).toBe('');
    expect(JSON.stringify([...(l.fromEnv ?? [])])).not.toMatch(/secret-value/);
  });
});
