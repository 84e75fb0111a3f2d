// A RESO Web API (OData) server for tests that behaves the way the field notes say real ones do,
// not the way our fixtures happen to be:
// - lookups in either spelling (`spelling: 'enum'` serves OData member names: ActiveUnderContract);
// - `$filter` (eq ne gt ge lt le, and/or/not, parentheses; a filter on an unknown field is a 400),
//   `$orderby`, `$select`, `$expand=Media` and `$expand=OpenHouse` (a record's `Media` and `OpenHouse`
//   lists are sent only when expanded: Trestle expands OpenHouse into Property, its Web API reference,
//   https://trestle-documentation.corelogic.com/webapi-reference.html; OpenHouse fields OpenHouseStartTime,
//   OpenHouseEndTime, OpenHouseStatus as the RESO Data Dictionary and Bridge's OpenHouse resource name them), `$top` as a total and `Prefer: odata.maxpagesize` as the
//   page size (capped by `maxPageSize`), and `@odata.nextLink`s built with `$skip` over the records as
//   they are when each page is asked for: a record changed between pages shifts the later ones;
// - timestamps compared as instants, or as text (`textTimestamps`);
// - a static bearer token, or OAuth2 client credentials (`oauth`): POST /token, tokens that expire;
// - quota headers (Minute-Quota-Limit, Hour-Quota-Limit, Hour-Quota-ResetTime) and a 429 past the minute quota;
// - every request counted (`received`: every HTTP request of any kind, the token's and $metadata's
//   too); hooks to change records before a page, rewrite nextLinks, break a body;
// - `maxUrl`: a 414 URI Too Long to any request whose URL (origin, path and query as sent, percent-
//   encoding included) is longer, as IIS (behind many RESO servers) refuses a query string past its
//   maxQueryString, 2,048 by default (https://learn.microsoft.com/en-us/iis/configuration/system.webserver/security/requestfiltering/requestlimits/).
//
// And the way real servers sometimes misbehave (issue 22; docs/reso-paging.md, "What real servers
// do"), each an option of this one server:
// - `order: 'storage'`: `$orderby` ignored, records served in the order they are stored (`records` as
//   given, a touched or added record at the end), as some servers, proxies and vendor changes do;
// - `order: 'scramble'`: `$orderby` ignored, every answer in another (seeded) order;
// - `failPages: { from, status }`: every page request from the `from`-th on (1-based; the one-record
//   "where does the server stand" requests, `$orderby ... desc`, are not pages) is answered `status`;
// - `refuseOrderby`: a 400 (gzipped OData error) to any `$orderby`, as nextLink-only servers answer;
// - `order: 'key'`: `$orderby` ignored, every answer in key order (key-sorted storage, issue 35): a
//   time-filtered answer can then look time-ordered page by page while a keyset cursor jumps past
//   earlier changes.
// `$count=true` answers `@odata.count`, the number of records the filter matches (OData 4.0 Part 2,
// 11.2.5.5 System Query Option $count; the RESO Web API Core 2.0 is a profile of OData 4.0, RCP-37),
// unless `noCount`: then it is ignored, as some servers do.
//
// `entityEvents` keeps the RESO EntityEvent log of RCP-027 v2.0.2, ratified December 2023
// (https://transport.reso.org/proposals/entity-events.html, and the Data Dictionary's EntityEvent
// resource): an append-only log whose EntityEventSequence is a logical timestamp (Int64, positive,
// rising; not contiguous), with the ResourceName and ResourceRecordKey of the record created,
// updated or deleted (ResourceRecordUrl optional); no event type and no payload, so a consumer
// fetches the record by key and infers a delete when it is not returned. RCP-027 lets a producer
// purge old events: `purge(upTo)` drops them, and a poll from before the oldest kept is answered with
// what is left, or refused with `refusePurged` (the RCP names no status: 400 and 410 are both seen).
// RCP-027 also lets a producer compact the log: "EntityEventSequence numbers MAY be hidden from feeds
// as long as at least one later record contains a final record for that resource name and key"
// (RCP-027 v2.0.2, "Entity Events"; RESOStandards/transport proposals/entity-events.md): `compact`
// keeps only the newest event of each record, so a record that changes again loses its earlier event.
// A Media event names a Media record (ResourceName `Media`, ResourceRecordKey its MediaKey); the
// `/Media` resource (Data Dictionary Media: MediaKey, ResourceName, ResourceRecordKey of the record it
// belongs to) says which listing. `types` and `$metadata`: OData 4.0 CSDL, as test/helpers/csdl.ts writes it.
//
// `lookups` serves the RESO `Lookup` resource (Data Dictionary 2.0, Lookup resource; RCP-032: one
// record per value of a list — LookupName, LookupValue, StandardLookupValue, LegacyODataValue),
// named in `$metadata`, each field of `lookupNames` annotated `RESO.OData.Metadata.LookupName`.
// MLS Grid moved its enumerations there in March 2022 ("Metadata no longer contains enumerations.
// Obtain lookups through the Lookup resource": https://docs.mlsgrid.com/releases/reso-enums-to-lookups-transition)
// and asks that it not be pulled more than once a day, more often "may result in interruption of
// service for inefficient usage practices" (https://docs.mlsgrid.com/, master.md; quoted by the
// rate-limit summary of the MLS Grid docs at github.com/api-evangelist/mls-grid,
// rate-limits/mls-grid-rate-limits.yml, "Lookup Resource Polling": the stored excerpts of
// docs.mlsgrid.com itself do not show the sentence; the mlsgrid vendor profile keeps the limit,
// src/feeds/vendors/mlsgrid.ts): `lookupEvery` enforces that,
// answering a read begun sooner than that after the last with a 429. `$metadata` declares `Media`
// and `OpenHouse` as navigation properties of Property (what `$expand` brings), as RESO servers
// do. `metadataOf` rewrites the
// Property fields `$metadata` announces (a field renamed there before the records change).
// Neither is settable by the records: both are settable while the server runs.
//
// `related` serves the roster and open houses beside Property, as resources of their own at the same
// service root, each asked as Property is ($filter, $orderby, $select, $top, $skip nextLinks, $count;
// `order`, quotas and failures alike) and named in `$metadata`: the Data Dictionary's Member resource
// (key MemberKey; MemberFullName, MemberPreferredPhone…), Office (key OfficeKey; OfficeName,
// OfficePhone…) and OpenHouse (key OpenHouseKey; the ListingKey and ListingId of its listing,
// OpenHouseStartTime, OpenHouseEndTime, OpenHouseStatus) — RESO Data Dictionary 2.1,
// https://dd.reso.org/DD2.1/Member/, /DD2.1/Office/, /DD2.1/Property/OpenHouse/ (one string key per
// resource, named <Resource>Key, as the DD 2.1 EDMX declares them; summarized in
// api-evangelist/reso data-model/reso-data-model.yml), each record with its own
// ModificationTimestamp. With `entityEvents`, a change to one (`touchRelated`) logs an event naming
// that resource and key: RCP-027's events name any resource of the server ("a phone number change
// for an agent" is one of its business events; its example log holds `"ResourceName": "Member"`
// beside Property and Media events, RESOStandards/transport proposals/entity-events.md), and its
// certification wants every ResourceName of the log defined in the metadata. So an EntityEvent poll
// sees Member, Office and OpenHouse events beside Property's and must keep to its own resource.
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { gzipSync } from 'node:zlib';
import { csdl, fieldTypes } from './csdl.js';
import { compileFilter, compileOrderBy, ODataSyntaxError, type Row } from './odata-filter.js';
import { inSpelling, type Spelling } from './reso-spelling.js';

export interface ResoServerOptions {
  /** records in Data Dictionary display spelling; served in `spelling` */
  records: Row[];
  spelling?: Spelling;
  keyField?: string;
  /** most records the server puts on a page, whatever is asked (default 100) */
  maxPageSize?: number;
  /** a static bearer token every data request must carry */
  token?: string;
  /** OAuth2 client credentials: tokens from POST /token, valid `ttlSeconds` */
  /** `accessToken`: the n-th token issued (1-based), for odd tokens (`":"`, `Austin`); default a random one */
  oauth?: {
    clientId: string;
    clientSecret: string;
    scope?: string;
    ttlSeconds: number;
    accessToken?: (n: number) => string;
  };
  gzip?: boolean;
  /** answer the first N data requests with this status (e.g. [503]) */
  failFirst?: number[];
  /** compare timestamps as text, as some servers do */
  textTimestamps?: boolean;
  /** compare text case-insensitively in $filter and $orderby (a SQL Server's default collation) */
  caseInsensitive?: boolean;
  /** fields a filter may name besides those the records carry (a field the server has, always empty) */
  fields?: string[];
  /** send quota headers; past `perMinute` data requests in a minute, 429 with Retry-After */
  quota?: { perMinute: number; perHour: number };
  /** before the n-th data request (1-based) is checked and answered: change `server.records`, revoke tokens */
  beforePage?: (n: number, server: ResoServer) => void;
  /** the nextLink the n-th data request sends (given the one the server made) */
  nextLink?: (made: string | undefined, n: number) => string | undefined;
  /** send half the body of these data requests (1-based), then drop the connection */
  brokenBodies?: number[];
  /** honour `$orderby` (default); or ignore it: serve the storage order, or a new seeded order per request */
  order?: ServerOrder;
  /** the seed of `order: 'scramble'` */
  seed?: number;
  /** answer every page request from the `from`-th on (1-based) with `status` */
  failPages?: { from: number; status: number };
  /** refuse any `$orderby` with a 400 and a gzipped OData error (as servers that page by nextLink only do) */
  refuseOrderby?: boolean;
  /** ignore `$count=true` (no `@odata.count` in the answer) */
  noCount?: boolean;
  /**
   * Edm types of fields, as `$metadata` says (others: Edm.String, numbers Edm.Decimal, the timestamp
   * Edm.DateTimeOffset); a numeric field compared with a quoted literal is a 400 (ASP.NET OData's words)
   */
  types?: Record<string, string>;
  /** serve `$metadata` (default), or answer it 404 as some servers do */
  metadata?: boolean;
  /**
   * Keep an EntityEvent log (RESO RCP-027): every touch, remove and `event(key)` appends one event
   * (EntityEventSequence, ResourceName, ResourceRecordKey; no type, no payload), the sequence rising
   * with gaps (every third event skips one); served at `/EntityEvent` with $filter, $orderby, $top
   * and nextLinks, and named in $metadata.
   */
  entityEvents?: boolean;
  /**
   * With entityEvents: how the server answers a poll from a sequence it has purged past (`EntityEventSequence
   * gt|ge N` with N before the oldest event kept): this status (400, 410: refused), or, by default, the
   * events it still holds (the client must notice the mark's own event is gone).
   */
  refusePurged?: number;
  /**
   * With entityEvents: keep only the newest event of each record (RCP-027 lets a producer hide an event
   * a later one for the same ResourceName and ResourceRecordKey supersedes): an event logged for a
   * record drops that record's earlier ones
   */
  compact?: boolean;
  /** answer 414 to a request whose URL (`${origin}${path and query}`, as sent) is longer than this */
  maxUrl?: number;
  /** the Lookup resource's records (LookupName, LookupValue, StandardLookupValue, LegacyODataValue, …); none: no Lookup resource */
  lookups?: Row[];
  /** field → LookupName: annotated in `$metadata` */
  lookupNames?: Record<string, string>;
  /** a Lookup read (its first page) sooner than this many ms after the last one is answered 429 */
  lookupEvery?: number;
  /** the server's clock for `lookupEvery` (default Date.now) */
  clock?: () => number;
  /** the Member, Office and OpenHouse resources (keyed MemberKey, OfficeKey, OpenHouseKey), in display spelling */
  related?: Partial<Record<RelatedResourceName, Row[]>>;
}

export type RelatedResourceName = 'Member' | 'Office' | 'OpenHouse';
/** each related resource's key (RESO Data Dictionary: <Resource>Key) */
const RELATED_KEY: Record<RelatedResourceName, string> = {
  Member: 'MemberKey',
  Office: 'OfficeKey',
  OpenHouse: 'OpenHouseKey',
};

export type ServerOrder = 'honour' | 'storage' | 'scramble' | 'key';

export interface ResoRequest {
  url: string;
  filter?: string;
  orderby?: string;
  top?: number;
  skip?: number;
  select?: string;
  prefer?: string;
  authorization?: string;
  acceptEncoding?: string;
  status: number;
}

export interface ResoServer {
  /** the service root + resource path prefix: `${url}/Property` is the Property resource */
  url: string;
  origin: string;
  tokenUrl: string;
  /** data requests, in order */
  requests: ResoRequest[];
  /** token requests (POST /token), in order, with the form fields sent */
  tokenRequests: Record<string, string>[];
  /** the access tokens issued, in order */
  issued: string[];
  /** the records as held (display spelling), ordered by ModificationTimestamp then key */
  records: Row[];
  /** set ModificationTimestamp (default: now, or a millisecond after the latest if that is later) and any other fields of one record */
  touch(key: string, fields?: Row): Row;
  remove(key: string): void;
  /** every token issued so far stops being accepted (as after a server-side revocation) */
  revokeTokens(): void;
  /** as the option: settable while the server runs (n counts data requests from the start) */
  beforePage?: (n: number, server: ResoServer) => void;
  /** as the option: settable while the server runs (a proxy or a vendor change can make any server ignore $orderby) */
  order: ServerOrder;
  /** page requests answered so far or refused by `failPages` (requests with `$orderby ... desc` aside) */
  readonly pages: number;
  /** `$metadata` requests (not in `requests`) */
  readonly metadataRequests: number;
  /** every HTTP request received (data, `$metadata`, token, refused or not) */
  readonly received: number;
  /** the longest URL received (`${origin}${path and query}`, as sent), in characters */
  readonly longestUrl: number;
  /** bytes of the bodies answered, as sent (data, `$metadata`, Lookup; the token endpoint's aside) */
  readonly bytesSent: number;
  /** the EntityEvent log (entityEvents) */
  events: Row[];
  /** as the options: settable while the server runs */
  lookups?: Row[];
  lookupNames?: Record<string, string>;
  /** the Property fields `$metadata` announces, from those the records carry */
  metadataOf?: (fields: Map<string, string>) => Map<string, string>;
  /** requests of the Lookup resource (every page), answered or refused */
  readonly lookupRequests: number;
  /** log an event for a record (a change the server makes without a new ModificationTimestamp, such as lost visibility) */
  event(key: string, resource?: string): void;
  /** drop the log's events up to this sequence, as producers purge old events (RCP-027 lets them) */
  purge(upTo: number): void;
  /** the related resources' records held (`related`) */
  related: Partial<Record<RelatedResourceName, Row[]>>;
  /** change a related record now (fields, a ModificationTimestamp of the server's clock after every one it holds); with entityEvents, an event naming it */
  touchRelated(resource: RelatedResourceName, key: string, fields?: Row): Row;
  close(): Promise<void>;
}

export async function startResoServer(opts: ResoServerOptions): Promise<ResoServer> {
  const keyField = opts.keyField ?? 'ListingKey';
  const spelling = opts.spelling ?? 'display';
  const cmpOpts = { textTimestamps: opts.textTimestamps, caseInsensitive: opts.caseInsensitive };
  const byTimeAndKey = compileOrderBy(`ModificationTimestamp,${keyField}`, cmpOpts);
  // stored as given by a server that ignores $orderby: its answers show the storage order
  const stored = (rows: Row[]) =>
    opts.order === 'storage' || opts.order === 'scramble' ? [...rows] : [...rows].sort(byTimeAndKey);
  let records = stored(opts.records);
  let pages = 0;
  let seed = opts.seed ?? 1;
  const random = () => {
    // mulberry32: the same scramble for the same seed
    seed = (seed + 0x6d2b79f5) | 0;
    let t = Math.imul(seed ^ (seed >>> 15), 1 | seed);
    t = (t + Math.imul(t ^ (t >>> 7), 61 | t)) ^ t;
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
  const requests: ResoRequest[] = [];
  const tokenRequests: Record<string, string>[] = [];
  const failures = [...(opts.failFirst ?? [])];
  const tokens = new Map<string, number>(); // token → expires at (ms)
  const recent: number[] = [];
  let issued = 0;
  let origin = '';

  const related: Partial<Record<RelatedResourceName, Row[]>> = Object.fromEntries(
    Object.entries(opts.related ?? {}).map(([name, rows]) => [name, [...rows]]),
  );
  /** the records a resource path serves and their key: Property's, or a related resource's */
  const tableOf = (path: string): { name: string; rows: Row[]; key: string } | undefined => {
    if (path.endsWith('/Property')) return { name: 'Property', rows: records, key: keyField };
    const name = Object.keys(related).find((r) => path.endsWith(`/${r}`)) as RelatedResourceName | undefined;
    return name ? { name, rows: related[name]!, key: RELATED_KEY[name] } : undefined;
  };
  const knownIn = (rows: Row[]) => (field: string) =>
    field === 'Media' || (opts.fields ?? []).includes(field) || rows.some((r) => field in r);

  async function handle(req: IncomingMessage, res: ServerResponse) {
    const url = new URL(req.url ?? '/', origin);
    if (req.method === 'POST' && url.pathname === '/token') return token(req, res);
    const q = url.searchParams;
    const log: ResoRequest = {
      url: req.url ?? '',
      filter: q.get('$filter') ?? undefined,
      orderby: q.get('$orderby') ?? undefined,
      top: q.has('$top') ? Number(q.get('$top')) : undefined,
      skip: q.has('$skip') ? Number(q.get('$skip')) : undefined,
      select: q.get('$select') ?? undefined,
      prefer: req.headers.prefer === undefined ? undefined : String(req.headers.prefer),
      authorization: req.headers.authorization,
      acceptEncoding: req.headers['accept-encoding'] as string | undefined,
      status: 200,
    };
    if (url.pathname.endsWith('/$metadata')) return metadata(req, res);
    if (url.pathname.endsWith('/Lookup')) return lookupPage(req, res, url);
    requests.push(log);
    const n = requests.length;
    const send = (status: number, body: unknown, headers: Record<string, string> = {}) => {
      log.status = status;
      res
        .writeHead(status, { 'content-type': 'application/json', ...quotaHeaders(), ...headers })
        .end(JSON.stringify(body));
    };
    const failure = failures.shift();
    if (failure) return send(failure, { error: { code: String(failure), message: 'try later' } });
    if (!log.orderby?.endsWith(' desc')) pages++;
    if (opts.failPages && !log.orderby?.endsWith(' desc') && pages >= opts.failPages.from) {
      const status = opts.failPages.status;
      return send(status, {
        error: {
          code: String(status),
          message: status === 400 ? 'The query specified in the URI is not valid.' : 'An error has occurred.',
        },
      });
    }
    if (opts.quota) {
      const now = Date.now();
      while (recent.length && recent[0]! < now - 60_000) recent.shift();
      recent.push(now);
      if (recent.length > opts.quota.perMinute)
        return send(429, { error: { message: 'Minute quota exceeded' } }, { 'retry-after': '1' });
    }
    server.beforePage?.(n, server);
    if (!authorized(req.headers.authorization))
      return send(401, { error: { code: '401', message: 'invalid or expired token' } });
    if (opts.entityEvents && url.pathname.endsWith('/EntityEvent')) return eventPage(url, q, send);
    if (url.pathname.endsWith('/Media')) return mediaPage(url, q, send);
    const table = tableOf(url.pathname);
    if (!table) return send(404, { error: { message: `no resource ${url.pathname}` } });
    const known = knownIn(table.rows);
    if (opts.refuseOrderby && q.has('$orderby')) {
      log.status = 400;
      const body = gzipSync(
        JSON.stringify({ error: { code: '400', message: 'The query option $orderby is not supported' } }),
      );
      return void res.writeHead(400, { 'content-type': 'application/json', 'content-encoding': 'gzip' }).end(body);
    }

    let rows: Row[];
    let page: Row[];
    let nextLink: string | undefined;
    let count: number | undefined;
    try {
      rows = table.rows.map((r) => inSpelling(r, spelling));
      const filter = q.get('$filter');
      if (filter) rows = rows.filter(compileFilter(filter, { ...cmpOpts, known, types: (f) => opts.types?.[f] }));
      const orderby = q.get('$orderby');
      if (orderby) compileOrderBy(orderby, { ...cmpOpts, known }); // checked (a 400 for an unknown field) whatever the order served
      if (orderby && server.order === 'honour') rows.sort(compileOrderBy(orderby, { ...cmpOpts, known }));
      if (server.order === 'key') rows.sort(compileOrderBy(table.key, cmpOpts));
      if (q.get('$count') === 'true' && !opts.noCount) count = rows.length;
      if (server.order === 'scramble') {
        for (let i = rows.length - 1; i > 0; i--) {
          const j = Math.floor(random() * (i + 1));
          [rows[i], rows[j]] = [rows[j]!, rows[i]!];
        }
      }
      const skip = Number(q.get('$skip') ?? 0);
      const top = q.has('$top') ? Number(q.get('$top')) : undefined;
      const asked = Number(/odata\.maxpagesize=(\d+)/.exec(log.prefer ?? '')?.[1] ?? opts.maxPageSize ?? 100);
      const size = Math.min(asked, opts.maxPageSize ?? 100, top ?? Number.POSITIVE_INFINITY);
      page = rows.slice(skip, skip + size);
      const served = skip + page.length;
      if (served < rows.length && (top === undefined || page.length < top)) {
        const next = new URL(url);
        next.searchParams.set('$skip', String(served));
        if (top !== undefined) next.searchParams.set('$top', String(top - page.length));
        nextLink = next.toString();
      }
    } catch (err) {
      if (err instanceof ODataSyntaxError) return send(400, { error: { code: '400', message: err.message } });
      throw err;
    }
    const select = q
      .get('$select')
      ?.split(',')
      .map((s) => s.trim());
    const expand = {
      Media: /(^|,)\s*Media\b/.test(q.get('$expand') ?? ''),
      OpenHouse: /(^|,)\s*OpenHouse\b/.test(q.get('$expand') ?? ''),
    };
    const value = page.map((r) => shape(r, select, expand));
    nextLink = opts.nextLink ? opts.nextLink(nextLink, n) : nextLink;
    const body = {
      '@odata.context': `${origin}/reso/odata/$metadata#${table.name}`,
      ...(count !== undefined && { '@odata.count': count }),
      value,
      ...(nextLink && { '@odata.nextLink': nextLink }),
    };
    let bytes = Buffer.from(JSON.stringify(body));
    const headers: Record<string, string> = { 'content-type': 'application/json', ...quotaHeaders() };
    if (opts.gzip && /gzip/.test(log.acceptEncoding ?? '')) {
      bytes = gzipSync(bytes);
      headers['content-encoding'] = 'gzip';
    }
    if (opts.brokenBodies?.includes(n)) {
      res.writeHead(200, { ...headers, 'content-length': String(bytes.length) });
      res.write(bytes.subarray(0, Math.floor(bytes.length / 2)), () => res.destroy());
      return;
    }
    res.writeHead(200, headers).end(bytes);
  }

  let sequence = 100;
  const events: Row[] = [];
  const logEvent = (key: unknown, resource = 'Property') => {
    sequence += events.length % 3 === 2 ? 2 : 1; // gaps are legal
    if (opts.compact) {
      const keep = events.filter((e) => e.ResourceName !== resource || e.ResourceRecordKey !== key);
      events.splice(0, events.length, ...keep);
    }
    events.push({ EntityEventSequence: sequence, ResourceName: resource, ResourceRecordKey: key });
  };
  let purgedTo = 0;
  /** a page of the EntityEvent log: filtered, ordered, paged by $skip nextLinks */
  function eventPage(url: URL, q: URLSearchParams, send: (status: number, body: unknown) => void) {
    const known = (f: string) =>
      ['EntityEventSequence', 'ResourceName', 'ResourceRecordKey', 'ResourceRecordUrl'].includes(f);
    const from = /EntityEventSequence (?:gt|ge) (\d+)/.exec(q.get('$filter') ?? '');
    if (opts.refusePurged && from && Number(from[1]) < purgedTo) {
      return send(opts.refusePurged, {
        error: { code: String(opts.refusePurged), message: `events up to ${purgedTo} have been purged` },
      });
    }
    try {
      let rows = [...events];
      const filter = q.get('$filter');
      if (filter) rows = rows.filter(compileFilter(filter, { known }));
      rows.sort(compileOrderBy(q.get('$orderby') ?? 'EntityEventSequence', { known }));
      const skip = Number(q.get('$skip') ?? 0);
      const size = Math.min(q.has('$top') ? Number(q.get('$top')) : Infinity, opts.maxPageSize ?? 100);
      const page = rows.slice(skip, skip + size);
      const next = new URL(url);
      next.searchParams.set('$skip', String(skip + page.length));
      const more = skip + page.length < rows.length && !q.has('$top');
      send(200, { value: page, ...(more && { '@odata.nextLink': next.toString() }) });
    } catch (err) {
      if (err instanceof ODataSyntaxError) return send(400, { error: { code: '400', message: err.message } });
      throw err;
    }
  }

  /**
   * The Media resource (Data Dictionary): every record's Media, each with the ResourceName and
   * ResourceRecordKey of the record it belongs to; $filter, $select, paged by $skip nextLinks.
   */
  function mediaPage(url: URL, q: URLSearchParams, send: (status: number, body: unknown) => void) {
    const all = records.flatMap((r) =>
      (Array.isArray(r.Media) ? (r.Media as Row[]) : []).map((m) => ({
        ...m,
        ResourceName: 'Property',
        ResourceRecordKey: r[keyField],
      })),
    );
    const fields = new Set(all.flatMap((m) => Object.keys(m)));
    try {
      const filter = q.get('$filter');
      const rows = filter ? all.filter(compileFilter(filter, { known: (f) => fields.has(f) })) : all;
      const skip = Number(q.get('$skip') ?? 0);
      const page = rows.slice(skip, skip + (opts.maxPageSize ?? 100));
      const select = q
        .get('$select')
        ?.split(',')
        .map((f) => f.trim());
      const next = new URL(url);
      next.searchParams.set('$skip', String(skip + page.length));
      const more = skip + page.length < rows.length;
      send(200, {
        value: page.map((m) => shape(m, select, { Media: false, OpenHouse: false })),
        ...(more && { '@odata.nextLink': next.toString() }),
      });
    } catch (err) {
      if (err instanceof ODataSyntaxError) return send(400, { error: { code: '400', message: err.message } });
      throw err;
    }
  }

  let lookupRequests = 0;
  let lastLookupRead: number | undefined;
  /** a page of the Lookup resource: $filter, paged by $skip nextLinks; a read begun too soon after the last refused */
  function lookupPage(req: IncomingMessage, res: ServerResponse, url: URL) {
    lookupRequests++;
    const send = (status: number, body: unknown) =>
      void res.writeHead(status, { 'content-type': 'application/json' }).end(JSON.stringify(body));
    if (!authorized(req.headers.authorization))
      return send(401, { error: { code: '401', message: 'invalid or expired token' } });
    if (!server.lookups) return send(404, { error: { message: `no resource ${url.pathname}` } });
    const q = url.searchParams;
    const now = (opts.clock ?? Date.now)();
    if (!q.has('$skip')) {
      if (opts.lookupEvery !== undefined && lastLookupRead !== undefined && now - lastLookupRead < opts.lookupEvery) {
        return send(429, { error: { code: '429', message: 'the Lookup resource is to be read at most once a day' } });
      }
      lastLookupRead = now;
    }
    const all = server.lookups;
    const fields = new Set([
      'LookupKey',
      'LookupName',
      'LookupValue',
      'StandardLookupValue',
      'LegacyODataValue',
      'OriginatingSystemName',
      'ModificationTimestamp',
    ]);
    try {
      const filter = q.get('$filter');
      const rows = filter ? all.filter(compileFilter(filter, { known: (f) => fields.has(f) })) : all;
      const skip = Number(q.get('$skip') ?? 0);
      const page = rows.slice(skip, skip + (opts.maxPageSize ?? 100));
      const next = new URL(url);
      next.searchParams.set('$skip', String(skip + page.length));
      send(200, { value: page, ...(skip + page.length < rows.length && { '@odata.nextLink': next.toString() }) });
    } catch (err) {
      if (err instanceof ODataSyntaxError) return send(400, { error: { code: '400', message: err.message } });
      throw err;
    }
  }

  let metadataRequests = 0;
  /** the service's CSDL: the Property entity type of the fields the records carry, typed by `types` */
  function metadata(req: IncomingMessage, res: ServerResponse) {
    metadataRequests++;
    if (!authorized(req.headers.authorization))
      return void res
        .writeHead(401, { 'content-type': 'application/json' })
        .end('{"error":{"message":"unauthorized"}}');
    if (opts.metadata === false)
      return void res
        .writeHead(404, { 'content-type': 'application/json' })
        .end('{"error":{"message":"no $metadata"}}');
    const eventFields = new Map([
      ['EntityEventSequence', 'Edm.Int64'],
      ['ResourceName', 'Edm.String'],
      ['ResourceRecordKey', 'Edm.String'],
      ['ResourceRecordUrl', 'Edm.String'],
    ]);
    const derived = fieldTypes(records, opts.types);
    const fields = server.metadataOf ? server.metadataOf(derived) : derived;
    const lookupFields = new Map(
      [
        'LookupKey',
        'LookupName',
        'LookupValue',
        'StandardLookupValue',
        'LegacyODataValue',
        'ModificationTimestamp',
      ].map((f) => [f, 'Edm.String']),
    );
    const sets = {
      Property: {
        key: keyField,
        fields,
        lookups: new Map(Object.entries(server.lookupNames ?? {})),
        navigation: {
          Media: 'Collection(org.reso.metadata.Media)',
          OpenHouse: 'Collection(org.reso.metadata.OpenHouse)',
        },
      },
      ...(opts.entityEvents && { EntityEvent: { key: 'EntityEventSequence', fields: eventFields } }),
      ...(server.lookups && { Lookup: { key: 'LookupKey', fields: lookupFields } }),
      ...Object.fromEntries(
        Object.entries(related).map(([name, rows]) => [
          name,
          { key: RELATED_KEY[name as RelatedResourceName], fields: fieldTypes(rows) },
        ]),
      ),
    };
    res.writeHead(200, { 'content-type': 'application/xml' }).end(csdl(sets));
  }

  function quotaHeaders(): Record<string, string> {
    if (!opts.quota) return {};
    const reset = new Date(Math.ceil(Date.now() / 3_600_000) * 3_600_000).toISOString();
    return {
      'Minute-Quota-Limit': String(opts.quota.perMinute),
      'Hour-Quota-Limit': String(opts.quota.perHour),
      'Hour-Quota-ResetTime': reset,
    };
  }

  function authorized(header: string | undefined): boolean {
    if (opts.token) return header === `Bearer ${opts.token}`;
    if (opts.oauth) {
      const m = /^Bearer (.+)$/.exec(header ?? '');
      const expires = m ? tokens.get(m[1]!) : undefined;
      return expires !== undefined && expires > Date.now();
    }
    return true;
  }

  async function token(req: IncomingMessage, res: ServerResponse) {
    let text = '';
    for await (const chunk of req) text += chunk;
    const form = Object.fromEntries(new URLSearchParams(text));
    tokenRequests.push(form);
    const o = opts.oauth;
    const ok =
      o &&
      form.grant_type === 'client_credentials' &&
      form.client_id === o.clientId &&
      form.client_secret === o.clientSecret &&
      (o.scope === undefined || form.scope === o.scope);
    if (!ok) {
      res.writeHead(401, { 'content-type': 'application/json' }).end(JSON.stringify({ error: 'invalid_client' }));
      return;
    }
    const access = o.accessToken?.(++issued) ?? `tok-${++issued}-${Math.random().toString(36).slice(2)}`;
    tokens.set(access, Date.now() + o.ttlSeconds * 1000);
    server.issued.push(access);
    res
      .writeHead(200, { 'content-type': 'application/json' })
      .end(JSON.stringify({ access_token: access, token_type: 'Bearer', expires_in: o.ttlSeconds }));
  }

  let received = 0;
  let longestUrl = 0;
  let bytesSent = 0;
  const http: Server = createServer((req, res) => {
    received++;
    if (!(req.method === 'POST' && req.url === '/token')) countBytes(res);
    const length = origin.length + (req.url ?? '').length;
    longestUrl = Math.max(longestUrl, length);
    if (opts.maxUrl !== undefined && length > opts.maxUrl) {
      res
        .writeHead(414, { 'content-type': 'application/json' })
        .end(JSON.stringify({ error: { code: '414', message: 'The request URL is too long.' } }));
      return;
    }
    handle(req, res).catch((err) => res.writeHead(500).end(String(err)));
  });
  await new Promise<void>((resolve) => http.listen(0, '127.0.0.1', resolve));
  origin = `http://127.0.0.1:${(http.address() as AddressInfo).port}`;

  /** the bytes of every body `res` sends, added to bytesSent */
  function countBytes(res: ServerResponse) {
    const add = (chunk: unknown) => {
      if (typeof chunk === 'string' || chunk instanceof Uint8Array) bytesSent += Buffer.byteLength(chunk);
    };
    const write = res.write.bind(res) as (...args: unknown[]) => boolean;
    const end = res.end.bind(res) as (...args: unknown[]) => ServerResponse;
    res.write = ((chunk: unknown, ...rest: unknown[]) => (add(chunk), write(chunk, ...rest))) as typeof res.write;
    res.end = ((chunk?: unknown, ...rest: unknown[]) => {
      if (typeof chunk !== 'function') add(chunk);
      return end(chunk, ...rest);
    }) as typeof res.end;
  }

  const server: ResoServer = {
    url: `${origin}/reso/odata`,
    origin,
    tokenUrl: `${origin}/token`,
    requests,
    tokenRequests,
    issued: [],
    get records() {
      return records;
    },
    set records(next: Row[]) {
      records = stored(next);
    },
    order: opts.order ?? 'honour',
    get pages() {
      return pages;
    },
    get metadataRequests() {
      return metadataRequests;
    },
    get received() {
      return received;
    },
    get longestUrl() {
      return longestUrl;
    },
    get bytesSent() {
      return bytesSent;
    },
    lookups: opts.lookups,
    lookupNames: opts.lookupNames,
    get lookupRequests() {
      return lookupRequests;
    },
    events,
    event: (key, resource) => logEvent(key, resource),
    purge(upTo) {
      purgedTo = Math.max(purgedTo, upTo + 1);
      const keep = events.filter((e) => Number(e.EntityEventSequence) > upTo);
      events.splice(0, events.length, ...keep);
    },
    touch(key, fields = {}) {
      const at = records.findIndex((r) => r[keyField] === key);
      if (at < 0) throw new Error(`no record ${key}`);
      const latest = Math.max(
        ...records.map((r) => Date.parse(String(r.ModificationTimestamp))).filter(Number.isFinite),
      );
      // a change is stamped by the server's clock, and after every stamp it holds (a Date header is never before it)
      const touched = {
        ...records[at],
        ModificationTimestamp: new Date(Math.max(latest + 1, Date.now())).toISOString(),
        ...fields,
      };
      // (a server that ignores $orderby stores the new version where updates go: at the end)
      server.records =
        opts.order === 'storage' || opts.order === 'scramble'
          ? [...records.slice(0, at), ...records.slice(at + 1), touched]
          : [...records.slice(0, at), touched, ...records.slice(at + 1)];
      if (opts.entityEvents) logEvent(key);
      return touched;
    },
    remove(key) {
      records = records.filter((r) => r[keyField] !== key);
      if (opts.entityEvents) logEvent(key);
    },
    revokeTokens() {
      tokens.clear();
    },
    related,
    touchRelated(resource, key, fields = {}) {
      const rows = related[resource];
      const at = rows?.findIndex((r) => r[RELATED_KEY[resource]] === key) ?? -1;
      if (!rows || at < 0) throw new Error(`no ${resource} ${key}`);
      const latest = Math.max(
        ...[...records, ...rows].map((r) => Date.parse(String(r.ModificationTimestamp))).filter(Number.isFinite),
      );
      const touched = {
        ...rows[at],
        ...fields,
        ModificationTimestamp: new Date(Math.max(latest + 1, Date.now())).toISOString(),
      };
      rows[at] = touched;
      if (opts.entityEvents) logEvent(key, resource);
      return touched;
    },
    beforePage: opts.beforePage,
    close: () =>
      new Promise<void>((resolve, reject) => {
        http.closeAllConnections();
        http.close((err) => (err ? reject(err) : resolve()));
      }),
  };
  return server;
}

function shape(r: Row, select: string[] | undefined, expand: { Media: boolean; OpenHouse: boolean }): Row {
  const out: Row = {};
  for (const [k, v] of Object.entries(r)) {
    if (k === 'Media' || k === 'OpenHouse' ? !expand[k] : select && !select.includes(k)) continue;
    out[k] = v;
  }
  return out;
}
