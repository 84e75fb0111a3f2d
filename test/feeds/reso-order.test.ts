// What the pages of a keyset pull say is checked (issue 22): a page out of the pull's order is noticed
// on that page, and the pull stops there; a case-insensitive collation (SQL Server's default) is an
// order too, not an error.
import { afterEach, describe, expect, it } from 'vitest';
import { FeedSource } from '../../src/feeds/index.js';
import { openReso } from '../../src/feeds/reso/reso-reader.js';
import { silentLogger } from '../../src/log.js';
import { startResoServer, type ResoServer, type ResoServerOptions } from '../helpers/reso-server.js';
import { collectUntilError } from './helpers.js';

const servers: ResoServer[] = [];
afterEach(async () => void (await Promise.all(servers.splice(0).map((s) => s.close()))));

const record = (key: string) => ({
  ListingKey: key,
  ModificationTimestamp: '2025-03-01T10:00:00.000Z',
  StandardStatus: 'Active',
});

async function pull(keys: string[], opts: Partial<ResoServerOptions> = { order: 'storage' }) {
  const s = await startResoServer({ records: keys.map(record), maxPageSize: 2, ...opts });
  servers.push(s);
  const src = FeedSource.parse({ kind: 'reso', url: s.url, maxPageSize: 2, retries: 0 });
  if (src.kind !== 'reso') throw new Error('not reso');
  const { items, error } = await collectUntilError(
    openReso('mls', src, { baseDir: '/', logger: silentLogger, full: true }).items,
  );
  return { keys: items.map((i) => i.position.id), error, requests: s.requests.length };
}

describe('keyset page order', () => {
  it('a record before the last one read stops the pull on its page, after the records that came in order', async () => {
    const r = await pull(['A', 'B', 'D', 'C', 'E', 'F']);
    expect(r.keys).toEqual(['A', 'B', 'D']);
    expect(r.error?.message).toMatch(
      /record page 2: record "C" came after "D", out of order: the server ignores \$orderby=ListingKey/,
    );
    expect(r.requests).toBe(2);
  });

  it('a server ordering and filtering text case-insensitively is read whole', async () => {
    const r = await pull(['a1', 'B2', 'c3', 'D4', 'e5'], { caseInsensitive: true });
    expect(r.error).toBeUndefined();
    expect(r.keys).toEqual(['a1', 'B2', 'c3', 'D4', 'e5']);
  });
});
