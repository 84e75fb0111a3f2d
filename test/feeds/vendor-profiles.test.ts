// source.vendor: each profile's defaults under the user's keys, its rules as config errors that name
// the key and what to do, and the queries it builds.
import { describe, expect, it } from 'vitest';
import { FeedSource } from '../../src/feeds/index.js';
import type { ResoSource } from '../../src/feeds/config-schema.js';
import { keyFilters, pullQuery, queryUrl } from '../../src/feeds/reso/reso-query.js';
import { describeVendor } from '../../src/feeds/vendors/describe.js';
import { filterFields } from '../../src/feeds/vendors/filter-fields.js';
import { VENDORS } from '../../src/feeds/vendors/registry.js';

const reso = (raw: Record<string, unknown>): ResoSource => {
  const s = FeedSource.parse({ kind: 'reso', ...raw });
  if (s.kind !== 'reso') throw new Error('not reso');
  return s;
};
const issues = (raw: Record<string, unknown>) => {
  const r = FeedSource.safeParse({ kind: 'reso', ...raw });
  return r.success ? [] : r.error.issues.map((i) => `${i.path.join('.')}: ${i.message}`);
};

describe('vendor profiles in config', () => {
  it('mlsgrid with url, bearerToken and originatingSystem is all a user writes', () => {
    const s = reso({ vendor: 'mlsgrid', bearerToken: 'tok', originatingSystem: 'actris' });
    expect(s).toMatchObject({
      url: 'https://api.mlsgrid.com/v2',
      paging: 'nextLink',
      maxPageSize: 1000,
      photosTimestampField: null,
    });
    expect(s.limits).toEqual({ perSecond: 2, perHour: 7200, perDay: 40_000, bytesPerHour: 4 * 1024 ** 3 });
  });

  it('the user overrides any key; limits and auth merge key by key', () => {
    const s = reso({
      vendor: 'mlsgrid',
      bearerToken: 'tok',
      originatingSystem: 'mred',
      maxPageSize: 500,
      limits: { perDay: 20_000 },
    });
    expect(s.maxPageSize).toBe(500);
    expect(s.limits).toMatchObject({ perSecond: 2, perDay: 20_000 });
    const t = reso({ vendor: 'trestle', auth: { clientId: 'c', clientSecret: 's' } });
    expect(t.auth).toEqual({
      kind: 'oauth2',
      tokenUrl: 'https://api-trestle.corelogic.com/trestle/oidc/connect/token',
      scope: 'api',
      clientId: 'c',
      clientSecret: 's',
    });
    expect(t.url).toBe('https://api-trestle.corelogic.com/trestle/odata');
    expect(reso({ vendor: 'trestle', url: 'https://other.test/odata', bearerToken: 'x' }).auth).toBeUndefined();
  });

  it('mlsgrid without originatingSystem, with a filter on a field it cannot search, or keyset paging: errors naming the key', () => {
    expect(issues({ vendor: 'mlsgrid', bearerToken: 't' })).toEqual([
      expect.stringMatching(/^originatingSystem: vendor mlsgrid needs source.originatingSystem/),
    ]);
    const bad = issues({
      vendor: 'mlsgrid',
      bearerToken: 't',
      originatingSystem: 'actris',
      filter: "City eq 'Austin' and StandardStatus eq 'Active'",
    });
    expect(bad).toEqual([
      expect.stringMatching(
        /^filter: vendor mlsgrid cannot filter on City: its searchable fields are ModificationTimestamp, OriginatingSystemName, StandardStatus, ListingId, MlgCanView, PhotosChangeTimestamp/,
      ),
    ]);
    expect(issues({ vendor: 'mlsgrid', bearerToken: 't', originatingSystem: 'actris', paging: 'keyset' })).toEqual([
      expect.stringMatching(/^paging: .*refuses \$orderby/),
    ]);
    expect(issues({ vendor: 'mlsgrid', bearerToken: 't', originatingSystem: 'actris', maxPageSize: 5000 })).toEqual([
      expect.stringMatching(/^maxPageSize: .*at most 1000 records a page with \$expand/),
    ]);
    expect(
      issues({
        vendor: 'mlsgrid',
        bearerToken: 't',
        originatingSystem: 'actris',
        maxPageSize: 5000,
        expandMedia: false,
      }),
    ).toEqual([]);
  });

  it('a url with a query string is an error saying which keys hold filter and select', () => {
    const [issue] = issues({
      url: "https://api.mlsgrid.com/v2/Property?$filter=OriginatingSystemName eq 'actris'&$top=10",
    });
    expect(issue).toMatch(/^url: the url carries a query string \(\$filter, \$top\).*source\.filter.*source\.select/);
  });

  it('a url ending with the resource is used as is, not doubled', () => {
    expect(queryUrl('https://api.mlsgrid.com/v2/Property', 'Property', { top: 5 })).toBe(
      'https://api.mlsgrid.com/v2/Property?$top=5',
    );
    expect(queryUrl('https://api.mlsgrid.com/v2/', 'Property', {})).toBe('https://api.mlsgrid.com/v2/Property');
  });

  it('filterFields finds compared and function fields, never text inside literals', () => {
    expect(
      filterFields(
        "City eq 'a eq b' and contains(PublicRemarks,'pool') or (ListPrice gt 5 and not MlgCanView eq false)",
      ),
    ).toEqual(['City', 'ListPrice', 'MlgCanView', 'PublicRemarks']);
  });
});

describe('queries by profile', () => {
  const mls = reso({ vendor: 'mlsgrid', bearerToken: 't', originatingSystem: 'actris', incremental: true });

  it('mlsgrid: the MLS in every filter, MlgCanView eq true on a full pull, gt from the mark, $top as the page size, never $orderby', () => {
    const full = pullQuery(mls, VENDORS.mlsgrid, { full: true, order: 'key' });
    expect(full).toMatchObject({
      filter: "(OriginatingSystemName eq 'actris') and (MlgCanView eq true)",
      top: 1000,
      orderby: undefined,
      expandMedia: true,
    });
    const inc = pullQuery(mls, VENDORS.mlsgrid, {
      full: false,
      since: 'ModificationTimestamp gt 2026-01-01T00:00:00.000Z',
    });
    expect(inc.filter).toBe(
      "(OriginatingSystemName eq 'actris') and (ModificationTimestamp gt 2026-01-01T00:00:00.000Z)",
    );
  });

  it('the generic profile: $orderby by key, $top only as a total', () => {
    const s = reso({ url: 'https://reso.test/odata' });
    expect(pullQuery(s, VENDORS.reso, { full: true, order: 'key', remaining: 50 })).toMatchObject({
      orderby: 'ListingKey',
      top: 50,
      filter: undefined,
    });
  });

  it("confirm queries ask for keys within the vendor's or-limit, and not at all on a field it cannot search", () => {
    expect(keyFilters(VENDORS.mlsgrid, 'ListingKey', ['a'], mls)).toBeUndefined();
    const byId = keyFilters(VENDORS.mlsgrid, 'ListingId', ['1', '2', '3', '4', '5', '6'], mls)!;
    expect(byId).toHaveLength(2);
    expect(byId[1]).toBe("(OriginatingSystemName eq 'actris') and (ListingId eq '6')");
    expect(keyFilters(VENDORS.reso, 'ListingKey', ["O'Hara"])).toEqual(["ListingKey eq 'O''Hara'"]);
  });

  it('describes what will be sent', () => {
    expect(describeVendor(mls)).toBe(
      "vendor mlsgrid (MLS Grid API 2.0): paging nextLink, no $orderby, $top 1000 a page, every $filter: OriginatingSystemName eq 'actris', full pulls: MlgCanView eq true, " +
        'incremental: ModificationTimestamp gt <mark>, searchable: ModificationTimestamp, OriginatingSystemName, StandardStatus, ListingId, MlgCanView, PhotosChangeTimestamp, ' +
        '2 req/s, 7200/hour, 40000/day, 4 GB/hour, bearer token, Accept-Encoding: gzip',
    );
  });
});

describe('limits.bytesPerHour', () => {
  it("stops the read once the hour's bytes are spent, retryable at the next hour, and nothing more is asked", async () => {
    const { startResoServer } = await import('../helpers/reso-server.js');
    const { generateResoRecords } = await import('../../fixtures/generate.js');
    const { openReso } = await import('../../src/feeds/reso/reso-reader.js');
    const { silentLogger } = await import('../../src/log.js');
    const { collectUntilError } = await import('./helpers.js');
    const s = await startResoServer({ records: generateResoRecords(30, { seed: 4 }), maxPageSize: 10 });
    try {
      const src = reso({
        url: s.url,
        maxPageSize: 10,
        limits: { bytesPerHour: 5000 },
        bearerToken: `bytes-${Math.random()}`,
      });
      const { items, error } = await collectUntilError(
        openReso('mls', src, { baseDir: '/', logger: silentLogger }).items,
      );
      expect(items).toHaveLength(10); // the first page (more than 5000 bytes) was read whole
      expect(error).toBeInstanceOf(Error);
      expect(error!.message).toMatch(/bytes read this hour, source.limits.bytesPerHour is 5000; .*retried at/);
      expect((error as { retryable?: boolean }).retryable).toBe(true);
      expect(s.requests).toHaveLength(1);
    } finally {
      await s.close();
    }
  });
});
