// `feedsync feed preview` names the feed's URL as every other place of a feed does (displayUrl): its
// origin and path, never its userinfo or query — not masked in place by the last guard on stdout, left out.
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startFeedServer, type FeedServer } from '../helpers/feed-server.js';
import { feedsync } from '../settings/run-cli.js';
import { csv, homesConfigYaml, rows } from '../sync/helpers/feed.js';

let server: FeedServer;
let dir: string;
let config: string;
let shown: string;
beforeAll(async () => {
  server = await startFeedServer({ status: 200, body: csv(rows(3)) });
  const u = new URL(server.url);
  shown = `${u.origin}${u.pathname}`;
  const url = `http://feeduser:s3cr3tpw@${u.host}${u.pathname}?access_token=tok-9f8e7d6c`;
  dir = await mkdtemp(join(tmpdir(), 'feedsync-preview-url-'));
  config = join(dir, 'feedsync.yaml');
  const yaml = homesConfigYaml('http://127.0.0.1:9', { secretKey: 'k', sessionKey: 's' }, {});
  await writeFile(
    config,
    yaml.replace('source: { kind: csv, path: homes.csv }', `source: { kind: csv, url: "${url}" }`),
  );
});
afterAll(async () => {
  await server.close();
  await rm(dir, { recursive: true, force: true });
});

describe('feed preview of a feed whose URL carries credentials', () => {
  it('the report names the URL without userinfo or query', async () => {
    const r = await feedsync(['feed', 'preview', '--config', config, '--feed', 'homes', '--limit', '1']);
    expect(r.code).toBe(0);
    expect(r.stdout.split('\n')[0]).toMatch(new RegExp(`^feed homes \\(csv, ${shown.replace(/[.]/g, '\\.')}\\) → `));
    for (const out of [r.stdout, r.stderr]) {
      expect(out).not.toContain('s3cr3tpw');
      expect(out).not.toContain('feeduser');
      expect(out).not.toContain('tok-9f8e7d6c');
      expect(out).not.toContain('@127.0.0.1');
    }
  });

  it('--json: `source` is the URL without userinfo or query', async () => {
    const r = await feedsync(['feed', 'preview', '--config', config, '--feed', 'homes', '--limit', '1', '--json']);
    expect(r.code).toBe(0);
    expect(JSON.parse(r.stdout).source).toBe(shown);
    expect(r.stdout).not.toContain('s3cr3tpw');
  });
});
