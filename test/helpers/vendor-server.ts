// Local servers that behave as the MLS vendors document theirs, strictly: what a vendor refuses is
// refused with a 4xx and an OData error body, its rate limit answers 429, and every request is
// logged with what was refused. Sources (docs/vendors.md has the detail):
// - MLS Grid API 2.0, https://docs.mlsgrid.com/api-documentation/api-version-2.0: service root
//   /v2, resource Property; `Accept-Encoding: gzip` required, checked before auth (400 "COMPRESSION
//   REQUIRED"), every answer gzipped; bearer token; every `$filter` holds one
//   `OriginatingSystemName eq '<mls>'`; only ModificationTimestamp, OriginatingSystemName,
//   StandardStatus, ListingId, MlgCanView, PhotosChangeTimestamp are searchable; no `$orderby`
//   (replication pages by @odata.nextLink); `$top` is the page size, at most 5000, 1000 with
//   `$expand` (Media, Rooms, UnitTypes); 2 requests/s (429 past it); records carry MlgCanView.
//   Member and Office (`related`) are replicated as Property is, under the same rules (the required
//   OriginatingSystemName term, nextLink paging, $top, the rate): searchable in Member
//   OriginatingSystemName, ModificationTimestamp, MemberMlsId, MlgCanView; in Office the same with
//   OfficeMlsId (docs.mlsgrid.com/api-documentation/api-version-2.0, as compiled in
//   api-evangelist/mls-grid data-model/mls-grid-data-model.yml, which lists for Property also
//   PropertyType and ListOfficeMlsId but not ListAgentKey); Member records carry MlgCanView (false: to be removed).
//   OpenHouse (`related`) too: MLS Grid serves it as a resource of its own (/v2/OpenHouse, not a
//   Property $expand), under the same rules (our reading of its searchable fields:
//   ModificationTimestamp, OriginatingSystemName, ListingId, MlgCanView); its records carry
//   MlgCanView (false: to be removed) and, as the RESO Data Dictionary's OpenHouse resource has them
//   (https://dd.reso.org/DD2.1/Property/OpenHouse/), OpenHouseKey, ListingKey, ListingId,
//   OpenHouseStartTime, OpenHouseEndTime, OpenHouseStatus.
// - Trestle WebAPI, https://trestle-documentation.corelogic.com/webapi.html and webapi-at-scale.html:
//   OAuth2 client credentials at /trestle/oidc/connect/token (scope api); resource under
//   /trestle/odata; `$top` at most 1000 (400 past it); quota headers on every answer
//   (Minute-Quota-Limit, Hour-Quota-Limit, Hour-Quota-ResetTime), 429 past 180 a minute.
// - Bridge, https://www.bridgeinteractive.com/upcoming-change-to-top-and-page-size-behavior-on-bridge-api-v3-endpoint
//   and bridgedataoutput.com/docs/platform: /api/v2/OData/<dataset>/Property; bearer (server) token;
//   page size at most 200 (`$top` on v2, `Prefer: odata.maxpagesize` on v3; 400 past it); `$skip`
//   past 10,000 refused (the replication endpoint is for more).
// - Spark, https://sparkplatform.com/docs/reso/replication and /docs/reso/request_parameters:
//   replication endpoint /Reso/OData; bearer token; `$top` at most 1000 for a replication key;
//   pages by @odata.nextLink with `$skiptoken` (ListingKey order applied by the server); our strict
//   reading of "no other parameters should be specified": `$orderby` and `$skip` are refused.
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { gzipSync } from 'node:zlib';
import { csdl, fieldTypes } from './csdl.js';
import { compileFilter, compileOrderBy, ODataSyntaxError, type Row } from './odata-filter.js';

export type VendorServerName = 'mlsgrid' | 'trestle' | 'bridge' | 'spark';

export interface VendorServerOptions {
  vendor: VendorServerName;
  records: Row[];
  /** the bearer token (mlsgrid, bridge, spark) */
  token?: string;
  /** OAuth2 client (trestle only) */
  oauth?: { clientId: string; clientSecret: string };
  /** MLS Grid: the OriginatingSystemName of the records */
  originatingSystem?: string;
  /** a test of other rules may lift the vendor's request rate (never the profile tests) */
  perSecond?: number;
  /** the Member, Office and OpenHouse resources (keyed MemberKey, OfficeKey, OpenHouseKey), served with the vendor's rules */
  related?: Partial<Record<RelatedResource, Row[]>>;
}

export interface VendorRequest {
  url: string;
  status: number;
  /** the refusal's message, for a 4xx/5xx */
  refusal?: string;
  acceptEncoding?: string;
  at: number;
}

export interface VendorServer {
  /** what a user puts in source.url: the service root */
  url: string;
  origin: string;
  tokenUrl: string;
  requests: VendorRequest[];
  /** data requests refused (4xx but 401/429) and answered 429 */
  readonly refused: VendorRequest[];
  readonly tooMany: VendorRequest[];
  records: Row[];
  /** the Member and Office records held */
  related: Record<RelatedResource, Row[]>;
  /** change a Member or Office record now: fields, and a ModificationTimestamp of the server's clock */
  touchRelated(resource: RelatedResource, key: string, fields?: Row): void;
  /** a new record of a related resource, with a ModificationTimestamp of now */
  addRelated(resource: RelatedResource, record: Row): void;
  /** change a record now: fields, and a ModificationTimestamp of the server's clock */
  touch(key: string, fields?: Row): void;
  remove(key: string): void;
  add(record: Row): void;
  close(): Promise<void>;
}

class Refusal extends Error {
  constructor(
    readonly status: number,
    message: string,
  ) {
    super(message);
  }
}

interface Rules {
  root: string;
  tokenPath?: string;
  /** what a request of `resource` may not ask (throws Refusal) */
  check(q: URLSearchParams, req: IncomingMessage, fields: string[], resource: string): void;
  /** records a page when the request asks `top` (or nothing) */
  pageSize(q: URLSearchParams, prefer: number | undefined): number;
  /** the default order of answers (the vendor's) */
  order: string;
  /** the name of the paging parameter of nextLinks */
  skipParam: '$skip' | '$skiptoken';
  gzipOnly?: boolean;
  perSecond?: number;
  perMinute?: number;
}

const MLSGRID_SEARCHABLE = [
  'ModificationTimestamp',
  'OriginatingSystemName',
  'StandardStatus',
  'ListingId',
  'MlgCanView',
  'PhotosChangeTimestamp',
];
/** MLS Grid's searchable fields by resource (Property's above) */
const MLSGRID_SEARCHABLE_IN: Record<string, string[]> = {
  Property: MLSGRID_SEARCHABLE,
  Member: ['ModificationTimestamp', 'OriginatingSystemName', 'MemberMlsId', 'MlgCanView'],
  Office: ['ModificationTimestamp', 'OriginatingSystemName', 'OfficeMlsId', 'MlgCanView'],
  OpenHouse: ['ModificationTimestamp', 'OriginatingSystemName', 'ListingId', 'MlgCanView'],
  Rooms: ['ModificationTimestamp', 'OriginatingSystemName', 'ListingId', 'MlgCanView'],
};
const RESOURCE_KEY: Record<string, string> = {
  Property: 'ListingKey',
  Member: 'MemberKey',
  Office: 'OfficeKey',
  OpenHouse: 'OpenHouseKey',
  Rooms: 'RoomKey',
};
/** `Rooms`: a test-only related resource (test/sync/related-resource.emulator.test.ts), served as the others are */
export type RelatedResource = 'Member' | 'Office' | 'OpenHouse' | 'Rooms';

function rules(o: VendorServerOptions): Rules {
  const top = (q: URLSearchParams) => (q.has('$top') ? Number(q.get('$top')) : undefined);
  switch (o.vendor) {
    case 'mlsgrid':
      return {
        root: '/v2',
        check(q, _req, fields, resource) {
          if (q.has('$orderby')) throw new Refusal(400, 'The $orderby query option is not supported');
          const filter = q.get('$filter') ?? '';
          const systems = filter.match(/OriginatingSystemName eq '([^']*)'/g) ?? [];
          if (systems.length !== 1)
            throw new Refusal(400, 'The $filter must contain exactly one OriginatingSystemName');
          if (systems[0] !== `OriginatingSystemName eq '${o.originatingSystem}'`)
            throw new Refusal(400, 'Invalid OriginatingSystemName');
          const searchable = MLSGRID_SEARCHABLE_IN[resource]!;
          const bad = fields.filter((f) => !searchable.includes(f));
          if (bad.length)
            throw new Refusal(
              400,
              `Invalid field in $filter: ${bad.join(', ')}. Searchable fields of ${resource}: ${searchable.join(', ')}`,
            );
          const expand = q.get('$expand');
          if (expand && expand.split(',').some((e) => !['Media', 'Rooms', 'UnitTypes'].includes(e.trim())))
            throw new Refusal(400, `Invalid $expand: ${expand}`);
          const t = top(q);
          if (t !== undefined && t > (expand ? 1000 : 5000))
            throw new Refusal(400, `$top may not exceed ${expand ? 1000 : 5000}${expand ? ' with $expand' : ''}`);
        },
        pageSize: (q) => top(q) ?? 500,
        order: 'ModificationTimestamp,ListingKey',
        skipParam: '$skip',
        gzipOnly: true,
        perSecond: 2,
      };
    case 'trestle':
      return {
        root: '/trestle/odata',
        tokenPath: '/trestle/oidc/connect/token',
        check(q) {
          const t = top(q);
          if (t !== undefined && t > 1000) throw new Refusal(400, 'The limit of $top is 1000');
          if (Number(q.get('$skip') ?? 0) >= 1_000_000) throw new Refusal(400, 'Error getting data!');
        },
        pageSize: (q) => Math.min(top(q) ?? 10, 1000),
        order: 'ListingKey',
        skipParam: '$skip',
        perMinute: 180,
      };
    case 'bridge':
      return {
        root: '/api/v2/OData/test',
        check(q, _req) {
          const t = top(q);
          if (t !== undefined && t > 200) throw new Refusal(400, 'Maximum $top value is 200');
          if (Number(q.get('$skip') ?? 0) > 10_000)
            throw new Refusal(400, '$skip may not exceed 10000: use the replication endpoint');
        },
        pageSize: (q, prefer) => Math.min(top(q) ?? prefer ?? 10, prefer ?? 200, 200),
        order: 'ListingKey',
        skipParam: '$skip',
      };
    case 'spark':
      return {
        root: '/Reso/OData',
        check(q) {
          if (q.has('$orderby'))
            throw new Refusal(400, 'Replication requests may not specify $orderby: ListingKey order is applied');
          if (q.has('$skip'))
            throw new Refusal(400, 'Replication requests page by @odata.nextLink ($skiptoken), not $skip');
          const t = top(q);
          if (t !== undefined && t > 1000) throw new Refusal(400, 'The maximum $top value is 1000 (code 1040)');
        },
        pageSize: (q) => top(q) ?? 10,
        order: 'ListingKey',
        skipParam: '$skiptoken',
      };
  }
}

export async function startVendorServer(o: VendorServerOptions): Promise<VendorServer> {
  const r = { ...rules(o), ...(o.perSecond !== undefined && { perSecond: o.perSecond }) };
  const byOrder = compileOrderBy(r.order);
  let records = [...o.records];
  const related: Record<RelatedResource, Row[]> = {
    Member: [...(o.related?.Member ?? [])],
    Office: [...(o.related?.Office ?? [])],
    OpenHouse: [...(o.related?.OpenHouse ?? [])],
    Rooms: [...(o.related?.Rooms ?? [])],
  };
  const rowsOf = (resource: string): Row[] => (resource in related ? related[resource as RelatedResource] : records);
  const requests: VendorRequest[] = [];
  const tokens = new Set<string>();
  const recent: number[] = [];
  let origin = '';

  const knownIn = (rows: Row[]) => (field: string) =>
    rows.some((rec) => field in rec) || MLSGRID_SEARCHABLE.includes(field);

  async function handle(req: IncomingMessage, res: ServerResponse) {
    const url = new URL(req.url ?? '/', origin);
    if (r.tokenPath && req.method === 'POST' && url.pathname === r.tokenPath) return token(req, res);
    const log: VendorRequest = {
      url: req.url ?? '',
      status: 200,
      acceptEncoding: req.headers['accept-encoding'] as string | undefined,
      at: Date.now(),
    };
    requests.push(log);
    const gzip = /\bgzip\b/.test(log.acceptEncoding ?? '');
    const send = (status: number, body: unknown, headers: Record<string, string> = {}) => {
      log.status = status;
      let bytes = Buffer.from(JSON.stringify(body));
      const h: Record<string, string> = { 'content-type': 'application/json', ...quotaHeaders(), ...headers };
      if (gzip && (r.gzipOnly || bytes.length > 1024)) {
        bytes = gzipSync(bytes);
        h['content-encoding'] = 'gzip';
      }
      res.writeHead(status, h).end(bytes);
    };
    const refuse = (status: number, message: string, headers?: Record<string, string>) => {
      log.refusal = message;
      send(status, { error: { code: String(status), message } }, headers);
    };
    // MLS Grid checks compression before anything else, auth included
    if (r.gzipOnly && !gzip) return refuse(400, 'COMPRESSION REQUIRED');
    const now = Date.now();
    const window = r.perSecond ? 1000 : 60_000;
    const limit = r.perSecond ?? r.perMinute;
    if (limit) {
      while (recent.length && recent[0]! <= now - window) recent.shift();
      if (recent.length >= limit) return refuse(429, 'Rate limit exceeded', { 'retry-after': '1' });
      recent.push(now);
    }
    if (!authorized(req.headers.authorization)) return refuse(401, 'invalid or expired token');
    if (url.pathname === `${r.root}/$metadata`) {
      log.status = 200;
      return void res
        .writeHead(200, { 'content-type': 'application/xml' })
        .end(csdl({ Property: { key: 'ListingKey', fields: fieldTypes(records) } }));
    }
    const resource = url.pathname.slice(r.root.length + 1);
    if (!(resource in RESOURCE_KEY) || (resource !== 'Property' && !o.related?.[resource as RelatedResource]))
      return refuse(404, `no resource ${url.pathname}`);
    const q = url.searchParams;
    const all = rowsOf(resource);
    const known = knownIn(all);
    let value: Row[];
    let nextLink: string | undefined;
    try {
      const fields: string[] = [];
      const filterText = q.get('$filter');
      const predicate = filterText
        ? compileFilter(filterText, { known: (f) => (fields.push(f), known(f)) })
        : undefined;
      r.check(q, req, fields, resource);
      const rows = predicate ? all.filter(predicate) : [...all];
      rows.sort(
        q.get('$orderby')
          ? compileOrderBy(q.get('$orderby')!, { known })
          : resource === 'Property'
            ? byOrder
            : compileOrderBy(r.order.replace('ListingKey', RESOURCE_KEY[resource]!)),
      );
      const prefer = /odata\.maxpagesize=(\d+)/.exec(String(req.headers.prefer ?? ''))?.[1];
      const size = r.pageSize(q, prefer ? Number(prefer) : undefined);
      const skip = Number(q.get(r.skipParam) ?? 0);
      const page = rows.slice(skip, skip + size);
      if (skip + page.length < rows.length) {
        const next = new URL(url);
        next.searchParams.set(r.skipParam, String(skip + page.length));
        nextLink = next.toString();
      }
      const select = q
        .get('$select')
        ?.split(',')
        .map((s) => s.trim());
      const expand = (q.get('$expand') ?? '').split(',').map((s) => s.trim());
      value = page.map((row) =>
        Object.fromEntries(
          Object.entries(row).filter(([k]) =>
            k === 'Media' ? expand.includes('Media') : !select || select.includes(k),
          ),
        ),
      );
    } catch (err) {
      if (err instanceof Refusal) return refuse(err.status, err.message);
      if (err instanceof ODataSyntaxError) return refuse(400, err.message);
      throw err;
    }
    send(200, {
      '@odata.context': `${origin}${r.root}/$metadata#${resource}`,
      value,
      ...(nextLink && { '@odata.nextLink': nextLink }),
    });
  }

  function quotaHeaders(): Record<string, string> {
    if (o.vendor !== 'trestle') return {};
    return {
      'Minute-Quota-Limit': '180',
      'Hour-Quota-Limit': '7200',
      'Hour-Quota-ResetTime': String(Math.ceil(Date.now() / 3_600_000) * 3_600_000),
    };
  }

  function authorized(header: string | undefined): boolean {
    const m = /^Bearer (.+)$/.exec(header ?? '');
    if (o.vendor === 'trestle') return Boolean(m && tokens.has(m[1]!));
    return m?.[1] === o.token;
  }

  async function token(req: IncomingMessage, res: ServerResponse) {
    let text = '';
    for await (const chunk of req) text += chunk;
    const form = Object.fromEntries(new URLSearchParams(text));
    const ok =
      o.oauth &&
      o.vendor === 'trestle' &&
      form.grant_type === 'client_credentials' &&
      form.client_id === o.oauth.clientId &&
      form.client_secret === o.oauth.clientSecret &&
      form.scope === 'api';
    if (!ok)
      return void res
        .writeHead(401, { 'content-type': 'application/json' })
        .end(JSON.stringify({ error: 'invalid_client' }));
    const access = `trestle-${Math.random().toString(36).slice(2)}`;
    tokens.add(access);
    res
      .writeHead(200, { 'content-type': 'application/json' })
      .end(JSON.stringify({ access_token: access, token_type: 'Bearer', expires_in: 28_800 }));
  }

  const http: Server = createServer((req, res) => {
    handle(req, res).catch((err) => res.writeHead(500).end(String(err)));
  });
  await new Promise<void>((resolve) => http.listen(0, '127.0.0.1', resolve));
  origin = `http://127.0.0.1:${(http.address() as AddressInfo).port}`;
  const dataRequests = () => requests;
  return {
    url: `${origin}${r.root}`,
    origin,
    tokenUrl: `${origin}${r.tokenPath ?? '/token'}`,
    requests,
    get refused() {
      return dataRequests().filter((q) => q.status >= 400 && q.status !== 401 && q.status !== 429);
    },
    get tooMany() {
      return dataRequests().filter((q) => q.status === 429);
    },
    get records() {
      return records;
    },
    set records(next: Row[]) {
      records = [...next];
    },
    related,
    touchRelated(resource, key, fields = {}) {
      const rows = related[resource];
      const at = rows.findIndex((rec) => rec[RESOURCE_KEY[resource]!] === key);
      if (at < 0) throw new Error(`no ${resource} ${key}`);
      const latest = Math.max(
        Date.now(),
        ...rows.map((rec) => Date.parse(String(rec.ModificationTimestamp)) + 1).filter(Number.isFinite),
      );
      rows[at] = { ...rows[at], ...fields, ModificationTimestamp: new Date(latest).toISOString() };
    },
    addRelated(resource, record) {
      const rows = related[resource];
      const latest = Math.max(
        Date.now(),
        ...[...records, ...rows]
          .map((rec) => Date.parse(String(rec.ModificationTimestamp)) + 1)
          .filter(Number.isFinite),
      );
      rows.push({ ...record, ModificationTimestamp: new Date(latest).toISOString() });
    },
    touch(key, fields = {}) {
      const at = records.findIndex((rec) => rec.ListingKey === key);
      if (at < 0) throw new Error(`no record ${key}`);
      const latest = Math.max(
        ...records.map((rec) => Date.parse(String(rec.ModificationTimestamp))).filter(Number.isFinite),
      );
      records[at] = {
        ...records[at],
        ...fields,
        ModificationTimestamp: new Date(Math.max(Date.now(), latest + 1)).toISOString(),
      };
    },
    remove(key) {
      records = records.filter((rec) => rec.ListingKey !== key);
    },
    add(record) {
      records.push({ ...record, ModificationTimestamp: new Date().toISOString() });
    },
    close: () =>
      new Promise<void>((resolve, reject) => {
        http.closeAllConnections();
        http.close((err) => (err ? reject(err) : resolve()));
      }),
  };
}
