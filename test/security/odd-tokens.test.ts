// Issue 23, "mask values, never text": a token endpoint's odd answer cannot corrupt what feedsync
// writes. A `":"` token (masking it in serialized JSON would break every line) and an `Austin`
// token (it would mask every city called Austin) are used but not taken as secrets: the change log
// still parses, `--json` is one document, Austin stays Austin. A token that looks like one masks its
// own feed's outputs only; tokenUrl is named in errors; `expires_in: 0.001` does not cost a token
// request per page, and expired tokens leave the registry.
import { spawn } from 'node:child_process';
import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, afterEach, describe, expect, it } from 'vitest';
import { generateResoRecords } from '../../fixtures/generate.js';
import { clearTokenCache, oauth2TokenSource } from '../../src/feeds/reso/oauth2.js';
import { clearSecrets, maskDeep, maskSecrets, maskText, registerSecret, registerSecretsIn } from '../../src/secrets.js';
import { startResoServer, type ResoServer } from '../helpers/reso-server.js';

const root = fileURLToPath(new URL('../..', import.meta.url));
const servers: ResoServer[] = [];
const dirs: string[] = [];
afterAll(async () => {
  await Promise.all(servers.map((s) => s.close()));
  await Promise.all(dirs.map((d) => rm(d, { recursive: true, force: true })));
});
afterEach(() => {
  clearTokenCache();
  clearSecrets();
});

const oauth = { clientId: 'feedsync-test', clientSecret: 'oauth-secret-0123456789' };

function feedsync(args: string[]): Promise<{ status: number | null; stdout: string; stderr: string }> {
  return new Promise((resolve) => {
    const child = spawn(process.execPath, ['bin/feedsync.js', ...args], {
      cwd: root,
      env: { ...process.env, LOG_LEVEL: 'warn' },
    });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (d) => (stdout += d));
    child.stderr.on('data', (d) => (stderr += d));
    child.on('close', (status) => resolve({ status, stdout, stderr }));
  });
}

async function syncWithToken(token: string) {
  const records = generateResoRecords(6, { seed: 3 }).map((r) => ({ ...r, City: 'Austin' }));
  const server = await startResoServer({ records, oauth: { ...oauth, ttlSeconds: 3600, accessToken: () => token } });
  servers.push(server);
  const dir = await mkdtemp(join(tmpdir(), 'feedsync-token-'));
  dirs.push(dir);
  const config = join(dir, 'feedsync.yaml');
  await writeFile(
    config,
    [
      'api: { baseUrl: embedded, secretKey: token-test-secret-key-1, sessionKey: token-test-session-key-2 }',
      'feeds:',
      '  - name: mls',
      '    chatbot: SN-1',
      `    source: { kind: reso, url: "${server.url}", auth: { kind: oauth2, tokenUrl: "${server.tokenUrl}", clientId: ${oauth.clientId}, clientSecret: ${oauth.clientSecret} } }`,
      '    mapping: { preset: reso, fields: { Url: { template: "https://broker.test/l/{ListingKey}" } } }',
    ].join('\n'),
  );
  const run = await feedsync(['sync', '--config', config, '--json']);
  const lines = (await readFile(join(dir, '.feedsync', 'changes.jsonl'), 'utf8')).split('\n').filter(Boolean);
  return { run, lines, server };
}

describe('odd tokens from a token endpoint', () => {
  it('a ":" token: the run succeeds, --json is one document, every change-log line parses', async () => {
    const { run, lines, server } = await syncWithToken(':');
    expect(server.issued).toEqual([':']);
    expect(run.status, run.stderr).toBe(0);
    const doc = JSON.parse(run.stdout);
    expect(doc.reports[0]).toMatchObject({ outcome: 'ok', counts: { created: 6 } });
    expect(lines.length).toBeGreaterThanOrEqual(7); // six creates and the run
    for (const line of lines) expect(() => JSON.parse(line)).not.toThrow();
    expect(lines.join('\n')).not.toContain('[REDACTED]');
  });

  it('an "Austin" token does not mask the cities called Austin', async () => {
    const { run, lines } = await syncWithToken('Austin');
    expect(run.status, run.stderr).toBe(0);
    expect(lines.filter((l) => l.includes('"Austin"')).length).toBeGreaterThanOrEqual(6);
    expect(lines.join('\n')).not.toContain('[REDACTED]');
  });
});

describe('masking by value and by feed', () => {
  it("a feed's token masks that feed's outputs, not another feed's", () => {
    registerSecret('feed-a-token-0123456789abcdef', 'a');
    const value = { note: 'feed-a-token-0123456789abcdef' };
    expect(maskDeep(value, 'a')).toEqual({ note: '[REDACTED]' });
    expect(maskDeep(value, 'b')).toEqual(value);
    expect(maskDeep(value)).toEqual({ note: '[REDACTED]' }); // an output of no feed: every feed's
  });

  it('serialized text is masked only where masking keeps it JSON; values are masked whatever the secret', () => {
    registerSecret('":"');
    registerSecret('ru');
    registerSecret('n1');
    registerSecret('plain-secret-42');
    const doc = { a: 'x":"y', ok: true, text: 'line\nn1 plain-secret-42' };
    const text = maskText(JSON.stringify(doc));
    expect(JSON.parse(text)).toEqual({ a: 'x":"y', ok: true, text: 'line\n[REDACTED] [REDACTED]' });
    expect(maskDeep(doc)).toEqual({ a: 'x[REDACTED]y', ok: true, text: 'line\n[REDACTED] [REDACTED]' });
  });

  it('a tokenUrl is not a secret: errors name it (its query masked)', () => {
    registerSecretsIn({
      source: {
        auth: { tokenUrl: 'https://auth.mls.test/oauth/token?client_secret=q-secret-99', clientSecret: 'c-secret-77' },
      },
    });
    expect(maskSecrets('POST https://auth.mls.test/oauth/token failed')).toBe(
      'POST https://auth.mls.test/oauth/token failed',
    );
    expect(maskSecrets('q-secret-99 c-secret-77')).toBe('[REDACTED] [REDACTED]');
  });
});

describe('token reuse', () => {
  it('expires_in: 0.001 does not cost a token request per page; the expired token leaves the registry', async () => {
    const server = await startResoServer({
      records: [],
      oauth: { ...oauth, ttlSeconds: 0.001, accessToken: (n) => `short-lived-token-${n}-abcdefgh` },
    });
    servers.push(server);
    const source = oauth2TokenSource(
      { kind: 'oauth2', tokenUrl: server.tokenUrl, ...oauth },
      { timeoutMs: 5000, retries: 0, scope: 'mls' },
    );
    const first = await source.token();
    expect(await source.token()).toBe(first);
    expect(await source.token()).toBe(first);
    expect(server.tokenRequests).toHaveLength(1);
    expect(maskDeep({ t: first }, 'mls')).toEqual({ t: '[REDACTED]' });
    source.refused(first); // the server refused it: forgotten, and no longer a secret
    expect(maskDeep({ t: first }, 'mls')).toEqual({ t: first });
    const second = await source.token();
    expect(second).not.toBe(first);
    expect(server.tokenRequests).toHaveLength(2);
  });
});
