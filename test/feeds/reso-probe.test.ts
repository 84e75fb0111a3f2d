// `feed probe`: a few small requests against servers that accept different things; the settings it
// points to; a vendor profile is only asked what it would send (no refusal from the MLS Grid server).
import { afterEach, describe, expect, it } from 'vitest';
import { generateResoRecords } from '../../fixtures/generate.js';
import type { ResoSource } from '../../src/feeds/config-schema.js';
import { FeedSource } from '../../src/feeds/index.js';
import { clearTokenCache } from '../../src/feeds/reso/oauth2.js';
import { probeLines, probeReso } from '../../src/feeds/reso/reso-probe.js';
import { silentLogger } from '../../src/log.js';
import { startResoServer } from '../helpers/reso-server.js';
import { startVendorServer } from '../helpers/vendor-server.js';

const closers: Array<() => Promise<void>> = [];
afterEach(async () => {
  await Promise.all(closers.splice(0).map((c) => c()));
});
const reso = (raw: Record<string, unknown>) => FeedSource.parse({ kind: 'reso', retries: 0, ...raw }) as ResoSource;
const ctx = { baseDir: '/', logger: silentLogger };

describe('feed probe', () => {
  it('a standard server: keyset accepted, its page-size cap found, gzip and quota headers seen', async () => {
    const s = await startResoServer({
      records: generateResoRecords(150, { seed: 2 }),
      maxPageSize: 100,
      gzip: true,
      quota: { perMinute: 600, perHour: 7200 },
    });
    closers.push(() => s.close());
    const r = await probeReso(reso({ url: s.url }), ctx);
    expect(r.results.every((x) => x.ok)).toBe(true);
    expect(r.settings).toMatchObject({ paging: 'keyset', maxPageSize: 100, expandMedia: true, select: true });
    expect(r.differences).toEqual(['maxPageSize: 100 (the server sent 100 of 1000 with a nextLink)']);
    expect(r.compression).toBe('gzip');
    expect(r.quotaHeaders).toEqual(['hour-quota-limit', 'hour-quota-resettime', 'minute-quota-limit']);
    expect(r.requests).toBeLessThanOrEqual(8);
    expect(s.requests).toHaveLength(r.requests);
  });

  it('issue 35: its requests are every request the server received (a retry too), and the token calls apart', async () => {
    clearTokenCache();
    const oauth = { clientId: 'probe-35', clientSecret: 'probe-secret-35', ttlSeconds: 3600 };
    const s = await startResoServer({ records: generateResoRecords(20, { seed: 2 }), oauth, failFirst: [503] });
    closers.push(() => s.close());
    const auth = { kind: 'oauth2', tokenUrl: s.tokenUrl, clientId: oauth.clientId, clientSecret: oauth.clientSecret };
    const r = await probeReso(reso({ url: s.url, auth, retries: 1 }), ctx, { backoffMs: 1 });
    expect(s.tokenRequests).toHaveLength(1);
    expect({ requests: r.requests, tokenCalls: r.tokenCalls }).toEqual({ requests: s.received - 1, tokenCalls: 1 });
    expect(probeLines(r).join('\n')).toContain(`; ${s.received - 1} requests, 1 token call`);
  });

  it('issue 54 point 7: counts every request it makes, the $metadata read that decides how changes are found among them', async () => {
    const s = await startResoServer({ records: generateResoRecords(20, { seed: 2 }), entityEvents: true });
    closers.push(() => s.close());
    const r = await probeReso(reso({ url: s.url, incremental: true }), ctx);
    expect(s.metadataRequests).toBe(1);
    // the server counts every HTTP request it received: the data requests and the $metadata read (no token here)
    expect(r.requests).toBe(s.received);
    expect(r.requests).toBe(s.requests.length + 1);
    expect(probeLines(r).join('\n')).toContain(`; ${s.received} requests`);
  });

  it('issue 38: says how changes are found and why: EntityEvent where $metadata offers it (source.changes auto), else timestamps', async () => {
    const withLog = await startResoServer({ records: generateResoRecords(20, { seed: 2 }), entityEvents: true });
    const without = await startResoServer({ records: generateResoRecords(20, { seed: 2 }) });
    closers.push(
      () => withLog.close(),
      () => without.close(),
    );
    const a = await probeReso(reso({ url: withLog.url, incremental: true }), ctx);
    expect(a.changes).toEqual({
      used: 'entityEvent',
      why: "source.changes: auto, and the server's $metadata offers the EntityEvent entity set (RESO RCP-027)",
    });
    expect(probeLines(a).join('\n')).toContain('changes found by entityEvent: ');
    expect(withLog.metadataRequests).toBe(1);
    const b = await probeReso(reso({ url: without.url, incremental: true }), ctx);
    expect(b.changes).toEqual({
      used: 'timestamps',
      why: "source.changes: auto, and the server's $metadata has no EntityEvent entity set",
    });
    const c = await probeReso(reso({ url: withLog.url, incremental: true, changes: 'timestamps' }), ctx);
    expect(c.changes).toEqual({ used: 'timestamps', why: 'source.changes: timestamps' });
    const d = await probeReso(reso({ url: without.url }), ctx);
    expect(d.changes.used).toBe('timestamps');
    expect(d.changes.why).toMatch(/source.incremental is false/);
    // asked only where the answer decides: once for each auto, incremental source
    expect(withLog.metadataRequests + without.metadataRequests).toBe(2);
  });

  it('a server refusing $orderby: nextLink paging is what to set, and the refusal is shown readably', async () => {
    const s = await startResoServer({ records: generateResoRecords(20, { seed: 2 }), refuseOrderby: true });
    closers.push(() => s.close());
    const r = await probeReso(reso({ url: s.url }), ctx);
    expect(r.results.find((x) => x.what === '$orderby=ListingKey (5 records)')).toMatchObject({
      ok: false,
      detail: expect.stringContaining('The query option $orderby is not supported'),
    });
    expect(r.settings.paging).toBe('nextLink');
    expect(probeLines(r).join('\n')).toContain('paging: nextLink (the source says keyset)');
  });

  it('a key-sorted server that ignores $orderby (issue 35): several records asked both ways show it; nextLink paging is what to set', async () => {
    const s = await startResoServer({ records: generateResoRecords(20, { seed: 2 }), order: 'key' });
    closers.push(() => s.close());
    const r = await probeReso(reso({ url: s.url }), ctx);
    expect(r.results.find((x) => x.what === '$orderby=ListingKey')).toMatchObject({
      ok: false,
      detail: expect.stringContaining('the server ignores $orderby'),
    });
    expect(r.settings.paging).toBe('nextLink');
    expect(probeLines(r).join('\n')).toContain('paging: nextLink (the source says keyset)');
    expect(probeLines(r).join('\n')).not.toContain("the source's settings fit");
  });

  it('vendor mlsgrid: asks only what the profile sends, and confirms it', async () => {
    const records = generateResoRecords(20, { seed: 2 }).map((x) => ({ ...x, OriginatingSystemName: 'actris' }));
    const s = await startVendorServer({
      vendor: 'mlsgrid',
      records,
      token: 'tok-probe-1',
      originatingSystem: 'actris',
    });
    closers.push(() => s.close());
    const r = await probeReso(
      reso({ vendor: 'mlsgrid', url: s.url, bearerToken: 'tok-probe-1', originatingSystem: 'actris' }),
      ctx,
    );
    expect(s.refused).toEqual([]);
    expect(s.tooMany).toEqual([]);
    expect(r.differences).toEqual([]);
    expect(r.compression).toBe('gzip');
    expect(probeLines(r).at(-1)).toBe(
      "the source's settings fit what the server accepts (vendor mlsgrid: paging nextLink, maxPageSize 1000)",
    );
  });
});
