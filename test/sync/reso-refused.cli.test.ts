// A RESO server that refuses the feed's credentials at its first request: the report a person reads
// says so once, in words, not as paging counts ("0 pages, 1 requests (1 pages)").
import { writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { generateResoRecords } from '../../fixtures/generate.js';
import { startResoServer, type ResoServer } from '../helpers/reso-server.js';
import { feedsync } from '../settings/run-cli.js';
import { apiYaml, SN, useEmulatorSync } from './helpers/feed.js';
import { resoFeedYaml } from './helpers/reso-records.js';

let config: string;
let reso: ResoServer;
const sync = useEmulatorSync({ perFile: true });
beforeAll(async () => {
  reso = await startResoServer({ records: generateResoRecords(3, { seed: 1 }), token: 'the-right-token' });
  config = join(sync.env().dir, 'feedsync.yaml');
  await writeFile(
    config,
    [...apiYaml(sync.te().url), 'feeds:', ...resoFeedYaml(SN, [`url: ${reso.url}`, 'bearerToken: a-wrong-token'])].join(
      '\n',
    ),
  );
});

afterAll(async () => reso?.close());

describe('a RESO server refusing the credentials', () => {
  it('says once that the first request was refused, where and what to check; no paging counts of nothing', async () => {
    const r = await feedsync(['sync', '--config', config]);
    expect(r.code).toBe(1);
    const lines = r.stderr.split('\n');
    expect(lines[0]).toBe(
      `feed mls → chatbot ${SN}: failed — the feed server refused the credentials (HTTP 401): check feeds[mls].source.bearerToken; nothing further was asked of it (${reso.url}/Property, record page 1: the RESO server refused the bearer token of source.bearerToken)`,
    );
    expect(lines).toContain('  source: the first request was refused (HTTP 401); nothing read');
    expect(r.stderr.match(/HTTP 401/g)).toHaveLength(2);
    expect(r.stderr).not.toContain('feed not read whole');
    expect(r.stderr).not.toContain('0 pages');
  });
});
