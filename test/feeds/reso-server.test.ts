// The test OData server itself behaves as the field notes describe (the reader's tests rely on it).
import { afterEach, describe, expect, it } from 'vitest';
import { startResoServer, type ResoServer } from '../helpers/reso-server.js';
import { freshFetch } from '../helpers/fresh-fetch.js';

let server: ResoServer | undefined;
afterEach(async () => {
  await server?.close();
  server = undefined;
});

type Page = { value: Array<Record<string, unknown>>; '@odata.nextLink'?: string };
const page = async (url: string) => (await (await freshFetch(url)).json()) as Page;
const rec = (key: string, ts: string, extra: Record<string, unknown> = {}) => ({
  ListingKey: key,
  ModificationTimestamp: ts,
  StandardStatus: 'Coming Soon',
  ...extra,
});

describe('the test OData server', () => {
  it('sends quota headers on every answer and a 429 with Retry-After past the minute quota, counting every request', async () => {
    server = await startResoServer({
      records: [rec('A', '2025-01-01T00:00:00Z')],
      quota: { perMinute: 2, perHour: 7200 },
    });
    const answers = [];
    for (let i = 0; i < 3; i++) answers.push(await freshFetch(`${server.url}/Property`));
    expect(answers.map((a) => a.status)).toEqual([200, 200, 429]);
    expect(answers[0]!.headers.get('minute-quota-limit')).toBe('2');
    expect(answers[0]!.headers.get('hour-quota-limit')).toBe('7200');
    expect(Date.parse(answers[0]!.headers.get('hour-quota-resettime')!)).toBeGreaterThan(Date.now());
    expect(answers[2]!.headers.get('retry-after')).toBe('1');
    expect(server.requests.map((r) => r.status)).toEqual([200, 200, 429]);
  });

  it('serves lookups as OData member names in enum mode, filters and orders, and pages with $skip over records as they are now', async () => {
    server = await startResoServer({
      records: [rec('B', '2025-01-02T00:00:00Z'), rec('A', '2025-01-01T00:00:00Z'), rec('C', '2025-01-03T00:00:00Z')],
      spelling: 'enum',
      maxPageSize: 1,
    });
    const q = encodeURIComponent(
      "ModificationTimestamp ge 2025-01-02T00:00:00.000Z and StandardStatus eq 'ComingSoon'",
    );
    const first = await page(`${server.url}/Property?$filter=${q}&$orderby=ListingKey%20desc`);
    expect(first.value.map((r) => [r.ListingKey, r.StandardStatus])).toEqual([['C', 'ComingSoon']]);
    server.remove('C');
    const second = await page(first['@odata.nextLink']!);
    expect(second.value).toEqual([]); // B shifted onto the page already read: $skip lost it
    const bad = await freshFetch(`${server.url}/Property?$filter=${encodeURIComponent('NoSuchField eq 1')}`);
    expect(bad.status).toBe(400);
  });
});
