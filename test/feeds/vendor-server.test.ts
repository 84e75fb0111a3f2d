// The vendor test servers refuse what each vendor documents it refuses (so the profile tests' "no
// refusal, no 429" means something): status, OData body, gzip-only, rate limits.
import { request } from 'node:http';
import { gunzipSync } from 'node:zlib';
import { afterEach, describe, expect, it } from 'vitest';
import { generateResoRecords } from '../../fixtures/generate.js';
import { startVendorServer, type VendorServer, type VendorServerName } from '../helpers/vendor-server.js';

const servers: VendorServer[] = [];
afterEach(async () => {
  await Promise.all(servers.splice(0).map((s) => s.close()));
});

async function server(vendor: VendorServerName, perSecond?: number) {
  const records = generateResoRecords(5, { seed: 1 }).map((r) => ({ ...r, OriginatingSystemName: 'actris' }));
  const s = await startVendorServer({
    vendor,
    records,
    token: 'tok',
    originatingSystem: 'actris',
    ...(perSecond && { perSecond }),
  });
  servers.push(s);
  return s;
}

/** GET with exactly these headers; the body gunzipped when it came gzipped. */
function get(
  url: string,
  headers: Record<string, string> = { authorization: 'Bearer tok', 'accept-encoding': 'gzip' },
): Promise<{ status: number; body: string; encoding?: string }> {
  return new Promise((resolve, reject) => {
    request(url, { headers }, (res) => {
      const chunks: Buffer[] = [];
      res.on('data', (c) => chunks.push(c));
      res.on('end', () => {
        const raw = Buffer.concat(chunks);
        const encoding = res.headers['content-encoding'];
        resolve({ status: res.statusCode!, encoding, body: (encoding === 'gzip' ? gunzipSync(raw) : raw).toString() });
      });
    })
      .on('error', reject)
      .end();
  });
}

const q = (s: VendorServer, query: string) => `${s.url}/Property?${query.replace(/ /g, '%20')}`;
const sys = "$filter=OriginatingSystemName eq 'actris'";

describe('the MLS Grid test server', () => {
  it('wants gzip before anything else (400 COMPRESSION REQUIRED, even without a token), and gzips every answer', async () => {
    const s = await server('mlsgrid');
    const plain = await get(q(s, sys), {});
    expect(plain.status).toBe(400);
    expect(JSON.parse(plain.body).error.message).toBe('COMPRESSION REQUIRED');
    const ok = await get(q(s, sys));
    expect(ok).toMatchObject({ status: 200, encoding: 'gzip' });
  });

  it('refuses $orderby, a missing OriginatingSystemName, fields it cannot search, and $top past its caps', async () => {
    const s = await server('mlsgrid', 1000);
    for (const [query, message] of [
      [`${sys}&$orderby=ListingKey`, /\$orderby/],
      ['$top=10', /OriginatingSystemName/],
      [`${sys} and City eq 'Austin'`, /Invalid field in \$filter: City/],
      [`${sys}&$top=5001`, /5000/],
      [`${sys}&$top=1001&$expand=Media`, /1000 with \$expand/],
    ] as const) {
      const r = await get(q(s, query));
      expect(r.status, query).toBe(400);
      expect(JSON.parse(r.body).error.message).toMatch(message);
    }
    expect((await get(q(s, `${sys}&$top=5000`))).status).toBe(200);
  });

  it('answers 429 past 2 requests a second', async () => {
    const s = await server('mlsgrid');
    const statuses = await Promise.all([1, 2, 3].map(() => get(q(s, sys)).then((r) => r.status)));
    expect(statuses.sort()).toEqual([200, 200, 429]);
  });
});

describe("the other vendors' test servers", () => {
  it('trestle: OAuth2 tokens only, $top at most 1000, quota headers', async () => {
    const s = await server('trestle');
    expect((await get(q(s, '$top=1'))).status).toBe(401);
  });

  it('bridge: page size at most 200, $skip at most 10,000', async () => {
    const s = await server('bridge');
    expect((await get(q(s, '$top=201'))).status).toBe(400);
    expect((await get(q(s, '$skip=10001'))).status).toBe(400);
    expect((await get(q(s, '$top=200'))).status).toBe(200);
  });

  it('spark: no $orderby, no $skip, $top at most 1000, nextLinks by $skiptoken', async () => {
    const s = await server('spark');
    expect((await get(q(s, '$orderby=ListingKey'))).status).toBe(400);
    expect((await get(q(s, '$skip=2'))).status).toBe(400);
    expect((await get(q(s, '$top=1001'))).status).toBe(400);
    const page = JSON.parse((await get(q(s, '$top=2'))).body);
    expect(page['@odata.nextLink']).toContain('%24skiptoken=2');
  });
});
