// A wrong api.secretKey as a cron user meets it: `feedsync sync` prints the one line that says what
// to fix first, and once: no warning per write that was in flight, no "feed not read whole" (the
// read stopped because the writes did), the refused writes on one line of failures.
import { writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestEmulator, TEST_SECRET_KEY, TEST_SESSION_KEY, type TestEmulator } from '../helpers/emulator.js';
import { startResoServer, type ResoServer } from '../helpers/reso-server.js';
import { feedsync } from '../settings/run-cli.js';
import { keyedResoRecords, resoFeedYaml } from '../sync/helpers/reso-records.js';
import { createSyncEnv, csv, homesConfigYaml, rows, SN, type SyncEnv } from '../sync/helpers/feed.js';

let te: TestEmulator;
let env: SyncEnv;
let config: string;

beforeAll(async () => {
  te = await startTestEmulator();
  env = await createSyncEnv();
  config = join(env.dir, 'feedsync.yaml');
  await writeFile(join(env.dir, 'homes.csv'), csv(rows(40)));
  await writeFile(
    config,
    homesConfigYaml(
      te.url,
      { secretKey: 'wrong-secret-key-000', sessionKey: TEST_SESSION_KEY },
      { top: ['  concurrency: 8'] },
    ),
  );
});

afterAll(async () => {
  await te.close();
  await env.cleanup();
});

describe('a refused credential', () => {
  it('is the first line of the output, said once; the writes it refused are one line', async () => {
    const r = await feedsync(['sync', '--config', config]);
    expect(r.code).toBe(1);
    const line =
      'the Chatbot Service refused the credentials (HTTP 401) on /chat/Chatbot/RealEstateCreate: check api.secretKey; no further call was made';
    expect(r.stderr.split('\n')[0]).toBe(`feed homes → chatbot ${SN}: failed — ${line}`);
    expect(r.stderr.split('check api.secretKey')).toHaveLength(2);
    expect(r.stderr).not.toContain('"level"');
    expect(r.stderr).not.toContain('feed not read whole');
    expect(r.stderr).not.toContain('wrong-secret-key-000');
    const failures = /failures \((\d+)\):\n((?: {4}.*\n)*)/.exec(r.stderr);
    expect(Number(failures?.[1])).toBeGreaterThan(0);
    expect(failures?.[2]!.trimEnd().split('\n')).toHaveLength(1);
    expect(await te.listings(SN)).toHaveLength(0);
  });

  // the config reads the key from the environment: the key in the config is right, the variable's
  // value is not, and the variable is what the operator must fix (the line said only api.secretKey)
  it('read from the environment: names the variable behind the key, never its value', async () => {
    const file = join(env.dir, 'from-env.yaml');
    await writeFile(
      file,
      homesConfigYaml(te.url, { secretKey: '${CHATBOT_SECRET_KEY}', sessionKey: TEST_SESSION_KEY }, {}),
    );
    const r = await feedsync(['sync', '--config', file], { CHATBOT_SECRET_KEY: 'wrong-secret-key-from-env-7' });
    expect(r.code).toBe(1);
    expect(r.stderr.split('\n')[0]).toContain(
      'check api.secretKey (from $CHATBOT_SECRET_KEY); no further call was made',
    );
    expect(r.stderr + r.stdout).not.toContain('wrong-secret-key-from-env-7');
  });

  // the list is the first call, and the session key its credential: refused there, paging says it
  it('the list refusing a session key read from the environment: names its variable, first', async () => {
    const file = join(env.dir, 'session-from-env.yaml');
    await writeFile(
      file,
      homesConfigYaml(te.url, { secretKey: TEST_SECRET_KEY, sessionKey: '${CHATBOT_SESSION_KEY}' }, {}),
    );
    const r = await feedsync(['sync', '--config', file], { CHATBOT_SESSION_KEY: 'wrong-session-key-from-env-8' });
    expect(r.code).toBe(1);
    // (the line of the feed: the alert of the file's third failed run in a row is logged before it)
    expect(r.stderr.split('\n').find((l) => l.startsWith('feed homes → '))).toBe(
      `feed homes → chatbot ${SN}: failed — the Chatbot Service refused the credentials (HTTP 401) on /chat/Chatbot/RealEstateList: check api.sessionKey (from $CHATBOT_SESSION_KEY); no further call was made`,
    );
    expect(r.stderr + r.stdout).not.toContain('wrong-session-key-from-env-8');
  });
});

// A RESO server answering 401: a bearer token that expired, an OAuth2 client secret that is wrong
// (the token URL refuses it), a client whose fresh tokens the server still refuses. The first line
// says what to check once, under the feed's own name (feeds[mls].source…), names the token URL where
// tokens come from one, and prints no credential: neither the configured ones nor a token issued.
describe('a RESO server refusing the credentials (HTTP 401)', () => {
  const TOKEN = 'expired-token-7c41d9e0';
  const SECRET = 'wrong-client-secret-51b2';
  const resoConfig = async (name: string, source: string[]) => {
    const file = join(env.dir, `${name}.yaml`);
    await writeFile(
      file,
      [
        `api: { baseUrl: ${te.url}, secretKey: k, sessionKey: ${TEST_SESSION_KEY} }`,
        'feeds:',
        ...resoFeedYaml(SN, source),
      ].join('\n'),
    );
    return file;
  };
  const run = (file: string) =>
    feedsync(['sync', '--config', file, '--no-redis'], { MLS_TOKEN: TOKEN, MLS_CLIENT_SECRET: SECRET, REDIS_URL: '' });

  it.each([
    ['bearer token expired', 'source.bearerToken', false, ' (from $MLS_TOKEN)'],
    // (it said 'check feeds[mls].source.bearerToken', then the server's want again in other words)
    ['no credential configured', 'source.auth or source.bearerToken', false, ''],
    [
      'client secret refused at the token URL',
      'source.auth (clientId, clientSecret, scope)',
      true,
      ' (clientSecret from $MLS_CLIENT_SECRET)',
    ],
    [
      'fresh tokens refused',
      'source.auth (clientId, clientSecret, scope)',
      true,
      ' (clientSecret from $MLS_CLIENT_SECRET)',
    ],
  ] as const)(
    '%s: what to check, once, under the feed, and the variable behind it; the token URL; no credential printed',
    async (name, key, oauth, from) => {
      const server = await startResoServer({
        records: keyedResoRecords(3, 8),
        ...(oauth
          ? {
              oauth: {
                clientId: 'mls-client',
                clientSecret: name.startsWith('fresh') ? SECRET : 'the-right-one',
                ttlSeconds: 3600,
              },
            }
          : { token: 'the-right-token-0000' }),
        // (the client's tokens are granted and then refused, the fresh one too: revoked before every page)
        ...(name.startsWith('fresh') && { beforePage: (_n: number, s: ResoServer) => s.revokeTokens() }),
      });
      try {
        const source = oauth
          ? [
              `url: ${server.url}`,
              'auth:',
              '  kind: oauth2',
              `  tokenUrl: ${server.tokenUrl}`,
              '  clientId: mls-client',
              '  clientSecret: ${MLS_CLIENT_SECRET}',
            ]
          : name.startsWith('no credential')
            ? [`url: ${server.url}`]
            : [`url: ${server.url}`, 'bearerToken: ${MLS_TOKEN}'];
        const r = await run(await resoConfig(name.replace(/\W+/g, '-'), source));
        expect(r.code, r.stderr).toBe(1);
        // (the line of the feed: a warning logged before it, an alert of failed runs in a row, is not it)
        const first = r.stderr.split('\n').find((l) => l.startsWith('feed mls → ')) ?? r.stderr;
        expect(first).toMatch(
          new RegExp(
            `^feed mls → chatbot ${SN}: failed — the feed server refused the credentials \\(HTTP 401\\): check feeds\\[mls\\]\\.`,
          ),
        );
        expect(first.split(`check feeds[mls].${key}`)).toHaveLength(2);
        expect(first.split(/\bcheck\b/)).toHaveLength(2);
        // (the key's value comes from a variable: the variable is named, after what to check)
        expect(first).toMatch(new RegExp(`check feeds\\[mls\\]\\.[^;]*${from.replace(/[()$]/g, '\\$&')};`));
        expect(first).not.toContain('feeds[]');
        if (oauth) expect(first).toContain(`OAuth2 client "mls-client" of ${server.tokenUrl}`);
        for (const secret of [TOKEN, SECRET, ...server.issued]) expect(r.stderr + r.stdout).not.toContain(secret);
      } finally {
        await server.close();
      }
    },
  );
});
