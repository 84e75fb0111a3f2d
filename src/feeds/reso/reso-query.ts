// The OData queries of a RESO pull, as plain data → URL. Pure: no I/O.
//
// Keyset paging: each page asks for the records after the last one read, so a record changed (and
// moved to the end) or deleted during the pull cannot shift another one out of the pages, the way a
// `$skip` nextLink does.
// - A full pull orders by key: `key gt 'last'`. A record changed during it keeps its place.
// - An incremental pull orders by (ModificationTimestamp, key) from the mark: `ModificationTimestamp
//   ge <mark>` (ge: records written later with the mark's exact timestamp are read again, whatever
//   their key), then `ModificationTimestamp gt <t> or (ModificationTimestamp eq <t> and key gt 'k')`.
// Timestamps go out as the server sent them (its own format and precision, since some servers
// compare them as text); our clock, where one is needed, as ISO 8601 with milliseconds.
//
// A vendor profile (vendors/) bends this: no `$orderby` (nextLink paging), `$top` as the page size,
// a filter term every request carries, `gt` instead of `ge`, only some fields searchable.
import { byCodeUnit } from '../../compare.js';
import { FeedReadError } from '../../errors.js';
import type { ResoSource } from '../config-schema.js';
import { typedLiteral } from './reso-metadata.js';
import type { VendorProfile } from '../vendors/profile.js';

export const TS = 'ModificationTimestamp';

/** ISO 8601 as OData writes a DateTimeOffset literal; anything else is never put in a filter. */
const ISO_TIMESTAMP = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}(:\d{2}(\.\d{1,9})?)?(Z|[+-]\d{2}:\d{2})$/;

/** A timestamp that may be a mark: ISO 8601, parses, and not after `now` (a future stamp would freeze pulls). */
export function usableTimestamp(value: unknown, now: number): string | undefined {
  if (typeof value !== 'string' || !ISO_TIMESTAMP.test(value)) return undefined;
  const t = Date.parse(value);
  return Number.isNaN(t) || t > now ? undefined : value;
}

export function laterOf(a: string | undefined, b: string | undefined): string | undefined {
  if (a === undefined) return b;
  if (b === undefined) return a;
  return Date.parse(b) > Date.parse(a) ? b : a;
}

/** A key as an OData literal: numbers bare, text quoted with '' for '. */
export function keyLiteral(key: unknown): string {
  return typeof key === 'number' && Number.isFinite(key) ? String(key) : `'${String(key).replace(/'/g, "''")}'`;
}

export function and(...parts: Array<string | undefined>): string | undefined {
  const present = parts.filter((p): p is string => Boolean(p));
  if (present.length <= 1) return present[0];
  return present.map((p) => `(${p})`).join(' and ');
}

export interface QueryParts {
  filter?: string;
  orderby?: string;
  top?: number;
  select?: string[];
  expandMedia?: boolean;
  expandOpenHouse?: boolean;
}

/** The resource's URL: the service root and the resource, or `base` itself when it already ends with the resource. */
export function resourceUrl(base: string, resource: string): string {
  const root = base.replace(/\/+$/, '');
  return root.endsWith(`/${resource}`) ? root : `${root}/${resource}`;
}

/**
 * The query's URL exactly as it is sent: normalised as a URL parser (undici's, the WHATWG one) sends
 * it, so `'` — which encodeURIComponent leaves, and an OData literal doubles (`O''Neil`) — is `%27`
 * here too, and a length measured on it (reso-confirm.ts MAX_URL) is the length on the wire.
 */
export function queryUrl(base: string, resource: string, q: QueryParts): string {
  const params: string[] = [];
  if (q.filter) params.push(`$filter=${encodeURIComponent(q.filter)}`);
  if (q.orderby) params.push(`$orderby=${encodeURIComponent(q.orderby)}`);
  if (q.top !== undefined) params.push(`$top=${q.top}`);
  if (q.select?.length) params.push(`$select=${encodeURIComponent(q.select.join(','))}`);
  const expand = [...(q.expandMedia ? ['Media'] : []), ...(q.expandOpenHouse ? ['OpenHouse'] : [])];
  if (expand.length) params.push(`$expand=${expand.join(',')}`);
  return new URL(`${resourceUrl(base, resource)}${params.length ? `?${params.join('&')}` : ''}`).href;
}

/**
 * Records changed since the mark: by ModificationTimestamp, or by the photos' own timestamp where
 * the server has one. `ge` reads the mark's own timestamp again (the standard profile); a vendor that
 * documents `gt` gets `gt`; a lag moves the mark back (Spark: server-side caching).
 */
export function sinceFilter(
  mark: { ts: string; photos?: string },
  photosField: string | null,
  op: 'gt' | 'ge' = 'ge',
  lagMinutes = 0,
): string {
  const back = (t: string) => (lagMinutes ? new Date(Date.parse(t) - lagMinutes * 60_000).toISOString() : t);
  const parts = [`${TS} ${op} ${back(mark.ts)}`];
  if (photosField && mark.photos) parts.push(`${photosField} ${op} ${back(mark.photos)}`);
  return parts.join(' or ');
}

/** Records per page for a vendor that asks it with `$top`: the source's, within the vendor's cap. */
export function pageSize(source: Pick<ResoSource, 'maxPageSize' | 'expandMedia'>, profile: VendorProfile): number {
  const cap = source.expandMedia && profile.maxPageSizeWithExpand ? profile.maxPageSizeWithExpand : profile.maxPageSize;
  return Math.min(source.maxPageSize ?? cap, cap);
}

export interface PullQueryInput {
  /** the pull's own filter terms (since the mark, after the last record) */
  since?: string;
  after?: string;
  full: boolean;
  /** order by key (full) or time (incremental); undefined: send no $orderby (nextLink paging) */
  order?: 'key' | 'time';
  /** records the pull may still read (source.top), undefined: no cap */
  remaining?: number;
  select?: string[];
}

/** One request's query as the vendor wants it. */
export function pullQuery(source: ResoSource, profile: VendorProfile, q: PullQueryInput): QueryParts {
  const required = profile.requiredFilter && source[profile.requiredFilter.sourceKey];
  const vendorTerm = required ? `${profile.requiredFilter!.field} eq ${keyLiteral(required)}` : undefined;
  const top = profile.pageSizeBy === 'top' ? Math.min(pageSize(source, profile), q.remaining ?? Infinity) : q.remaining;
  return {
    filter: and(vendorTerm, source.filter, q.full ? profile.fullFilter : undefined, q.since, q.after),
    orderby: q.order && profile.orderby ? orderBy(q.order, source.keyField) : undefined,
    top,
    select: q.select,
    expandMedia: source.expandMedia,
    expandOpenHouse: source.expandOpenHouse,
  };
}

/**
 * `$filter`s that ask the server for these keys (a confirm-before-delete query), in as many
 * queries as the vendor's `or` limit needs; undefined when the vendor cannot filter on the key field.
 * A text key goes as the field's Edm `type` says (`$metadata`: Edm.Int64 bare); untyped, quoted.
 */
export function keyFilters(
  profile: VendorProfile,
  keyField: string,
  keys: readonly unknown[],
  source?: ResoSource,
  type?: string,
): string[] | undefined {
  if (profile.searchable && !profile.searchable.includes(keyField)) return undefined;
  const per = profile.maxOrTerms ?? 50;
  const required = profile.requiredFilter && source?.[profile.requiredFilter.sourceKey];
  const vendorTerm = required ? `${profile.requiredFilter!.field} eq ${keyLiteral(required)}` : undefined;
  const out: string[] = [];
  for (let i = 0; i < keys.length; i += per) {
    out.push(
      and(
        vendorTerm,
        source?.filter,
        keys
          .slice(i, i + per)
          .map(
            (k) => `${keyField} eq ${typeof k === 'string' ? (typedLiteral(k, type) ?? keyLiteral(k)) : keyLiteral(k)}`,
          )
          .join(' or '),
      )!,
    );
  }
  return out;
}

/** After the last record read, in the pull's order. */
export function afterFilter(order: 'key' | 'time', keyField: string, last: { key: unknown; ts?: string }): string {
  const key = `${keyField} gt ${keyLiteral(last.key)}`;
  if (order === 'key') return key;
  return `${TS} gt ${last.ts} or (${TS} eq ${last.ts} and ${key})`;
}

export function orderBy(order: 'key' | 'time', keyField: string): string {
  return order === 'key' ? keyField : `${TS},${keyField}`;
}

export function isTimestampLiteral(value: unknown): value is string {
  return typeof value === 'string' && ISO_TIMESTAMP.test(value) && !Number.isNaN(Date.parse(value));
}

/**
 * A nextLink is followed on the configured origin only, over http(s): the feed's credentials go with it,
 * and only they: the link's userinfo is the current URL's (the configured one's), never one the server
 * wrote in it. Every pager of a RESO feed follows its links through this (pulls, lookups, events,
 * Media, OpenHouse).
 */
export function nextLinkUrl(
  next: string,
  current: string,
  origin: string,
  where: { file: string; record: string },
): string {
  let url: URL;
  try {
    url = new URL(next, current);
  } catch {
    throw new FeedReadError(
      `the @odata.nextLink ${JSON.stringify(next.slice(0, 200))} is not a URL; the pull is not complete`,
      where,
      false,
    );
  }
  if (url.protocol !== 'http:' && url.protocol !== 'https:') {
    throw new FeedReadError(
      `the @odata.nextLink is a ${url.protocol} URL: only http(s) is followed; the pull is not complete`,
      where,
      false,
    );
  }
  if (url.origin !== origin) {
    throw new FeedReadError(
      `the @odata.nextLink leads to another origin (${url.origin}); the feed's credentials never leave ${origin}, so it is not followed and the pull is not complete`,
      where,
      false,
    );
  }
  const at = new URL(current);
  url.username = at.username;
  url.password = at.password;
  return url.toString();
}

/**
 * Two keys in the order a server's `$orderby` on the key is checked against: numbers by value, the
 * rest as text by code unit, or case-folded (servers that order text case-insensitively).
 */
export function compareKeys(a: unknown, b: unknown, folded: boolean): number {
  if (typeof a === 'number' && typeof b === 'number') return a - b;
  return folded ? byCodeUnit(String(a).toLowerCase(), String(b).toLowerCase()) : byCodeUnit(String(a), String(b));
}
