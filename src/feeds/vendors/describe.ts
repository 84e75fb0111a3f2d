// One line saying what a RESO source will send, by its vendor profile and its own keys:
// "vendor mlsgrid (MLS Grid API 2.0): paging nextLink, no $orderby, $top 1000 a page, …". Pure.
import type { ResoSource } from '../config-schema.js';
import { pageSize } from '../reso/reso-query.js';
import { VENDORS } from './registry.js';

export function describeVendor(s: ResoSource): string {
  const p = VENDORS[s.vendor];
  const parts: string[] = [`paging ${s.paging ?? 'keyset'}`];
  if (!p.orderby) parts.push('no $orderby');
  parts.push(
    p.pageSizeBy === 'top'
      ? `$top ${pageSize(s, p)} a page`
      : s.maxPageSize
        ? `Prefer: odata.maxpagesize=${s.maxPageSize}`
        : "page size the server's",
  );
  if (p.requiredFilter && s[p.requiredFilter.sourceKey])
    parts.push(`every $filter: ${p.requiredFilter.field} eq '${s[p.requiredFilter.sourceKey]}'`);
  if (p.fullFilter) parts.push(`full pulls: ${p.fullFilter}`);
  if (s.incremental)
    parts.push(
      `incremental: ModificationTimestamp ${p.since} <mark>${p.sinceLagMinutes ? ` less ${p.sinceLagMinutes} min` : ''}`,
    );
  if (p.searchable) parts.push(`searchable: ${p.searchable.join(', ')}`);
  const l = s.limits ?? {};
  const limits = [
    l.perSecond !== undefined && `${l.perSecond} req/s`,
    l.perMinute !== undefined && `${l.perMinute}/minute`,
    l.perHour !== undefined && `${l.perHour}/hour`,
    l.perDay !== undefined && `${l.perDay}/day`,
    l.bytesPerHour !== undefined && `${formatBytes(l.bytesPerHour)}/hour`,
  ].filter((x): x is string => Boolean(x));
  parts.push(limits.length ? limits.join(', ') : 'no request budget set');
  if (s.auth) parts.push(`OAuth2 token from ${s.auth.tokenUrl}`);
  else if (s.bearerToken) parts.push('bearer token');
  parts.push('Accept-Encoding: gzip');
  return `vendor ${p.name} (${p.title}): ${parts.join(', ')}`;
}

function formatBytes(n: number): string {
  if (n >= 1024 ** 3 && n % 1024 ** 3 === 0) return `${n / 1024 ** 3} GB`;
  if (n >= 1024 ** 2) return `${Math.round(n / 1024 ** 2)} MB`;
  return `${n} bytes`;
}
