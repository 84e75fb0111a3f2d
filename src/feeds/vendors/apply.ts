// A vendor profile applied to a `source` of config: its defaults under the user's keys (before the
// schema fills its own defaults), then its rules checked on the parsed source. Pure.
import { filterFields } from './filter-fields.js';
import { VENDOR_NAMES, type VendorName } from './profile.js';
import { VENDORS } from './registry.js';

const isObject = (v: unknown): v is Record<string, unknown> => v !== null && typeof v === 'object' && !Array.isArray(v);
const isVendor = (v: unknown): v is VendorName =>
  typeof v === 'string' && (VENDOR_NAMES as readonly string[]).includes(v);

/** A raw `source` with its vendor's defaults filled in where the user set nothing; anything else as it was. */
export function applyVendorDefaults(raw: unknown): unknown {
  if (!isObject(raw) || raw.kind !== 'reso' || !isVendor(raw.vendor)) return raw;
  const { url, auth, limits, ...rest } = VENDORS[raw.vendor].defaults;
  const out: Record<string, unknown> = { ...rest, ...raw };
  // a file replay (path) takes no url; a token takes no OAuth2 client
  if (url !== undefined && raw.url === undefined && raw.path === undefined) out.url = url;
  if (limits) out.limits = { ...limits, ...(isObject(raw.limits) ? raw.limits : {}) };
  if (auth && isObject(raw.auth)) out.auth = { kind: 'oauth2', ...auth, ...raw.auth };
  return out;
}

export interface VendorIssue {
  path: string[];
  message: string;
}

/** What checkVendorRules reads of a parsed RESO source (config-schema.ts's ResoSource, which composes these rules). */
export interface VendorRuleInput {
  vendor: VendorName;
  url?: string | undefined;
  path?: string | undefined;
  originatingSystem?: string | undefined;
  filter?: string | undefined;
  paging?: 'keyset' | 'nextLink' | undefined;
  expandMedia: boolean;
  maxPageSize?: number | undefined;
}

/** What the source asks that its vendor refuses (or that no server can be asked), as config errors. */
export function checkVendorRules(s: VendorRuleInput): VendorIssue[] {
  const issues: VendorIssue[] = [];
  const p = VENDORS[s.vendor];
  if (s.url) {
    const u = new URL(s.url);
    if (u.search) {
      const keys = [...u.searchParams.keys()].join(', ');
      issues.push({
        path: ['url'],
        message:
          `the url carries a query string (${keys}); feedsync builds the query itself: put the filter in source.filter, ` +
          'the fields in source.select, the page size in source.maxPageSize, Media in source.expandMedia, and a token in source.bearerToken; ' +
          'the url is the service root (https://api.mlsgrid.com/v2) or the resource (…/v2/Property)',
      });
    }
  }
  if (p.requiredFilter && !s[p.requiredFilter.sourceKey] && !s.path) {
    issues.push({
      path: [p.requiredFilter.sourceKey],
      message: `vendor ${p.name} needs source.${p.requiredFilter.sourceKey}: every request filters on ${p.requiredFilter.field} eq '<name>' (e.g. actris, mred, nwmls)`,
    });
  }
  if (p.searchable && s.filter) {
    const bad = filterFields(s.filter).filter((f) => !p.searchable!.includes(f));
    if (bad.length) {
      issues.push({
        path: ['filter'],
        message: `vendor ${p.name} cannot filter on ${bad.join(', ')}: its searchable fields are ${p.searchable.join(', ')}`,
      });
    }
  }
  if (!p.orderby && s.paging === 'keyset') {
    issues.push({
      path: ['paging'],
      message: `vendor ${p.name} refuses $orderby, which keyset paging needs: use paging: nextLink (the profile's default)`,
    });
  }
  const cap = s.expandMedia && p.maxPageSizeWithExpand ? p.maxPageSizeWithExpand : p.maxPageSize;
  if (s.maxPageSize !== undefined && s.maxPageSize > cap && p.name !== 'reso') {
    issues.push({
      path: ['maxPageSize'],
      message: `vendor ${p.name} sends at most ${cap} records a page${s.expandMedia && p.maxPageSizeWithExpand ? ' with $expand' : ''}: set maxPageSize to ${cap} or less`,
    });
  }
  return issues;
}
