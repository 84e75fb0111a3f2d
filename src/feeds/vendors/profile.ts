// What a RESO vendor requires of a client, as plain data (docs/vendors.md cites the vendor's own
// documentation for every value). The reader and the query builder consult it; config applies its
// `defaults` under the user's own keys (any key can still be overridden), and checks its rules.
import type { SourceLimits } from '../source-limits.js';

export const VENDOR_NAMES = ['reso', 'mlsgrid', 'trestle', 'bridge', 'spark'] as const;
export type VendorName = (typeof VENDOR_NAMES)[number];

export interface VendorProfile {
  name: VendorName;
  /** one line for `feed preview` and `config check` */
  title: string;
  /** source keys the profile sets (the user's keys win); `auth` and `limits` merge key by key */
  defaults: {
    url?: string;
    paging?: 'keyset' | 'nextLink';
    maxPageSize?: number;
    expandMedia?: boolean;
    photosTimestampField?: string | null;
    limits?: SourceLimits;
    auth?: { tokenUrl: string; scope?: string };
  };
  /**
   * How the page size is asked: `prefer` sends `Prefer: odata.maxpagesize=N` (the standard: `$top`
   * is a total); `top` sends `$top=N` on every request (vendors for which `$top` is the page size).
   */
  pageSizeBy: 'prefer' | 'top';
  /** most records one page may hold, and with `$expand` where the vendor caps that lower */
  maxPageSize: number;
  maxPageSizeWithExpand?: number;
  /** `$orderby` may be sent (false: never, whatever the paging) */
  orderby: boolean;
  /** the only fields `$filter` may name; undefined: any */
  searchable?: readonly string[];
  /** a `$filter` term every request carries: `<field> eq '<value of source[sourceKey]>'` */
  requiredFilter?: { field: string; sourceKey: 'originatingSystem' };
  /** a `$filter` term of full pulls only (MLS Grid's initial import: MlgCanView eq true) */
  fullFilter?: string;
  /** the comparison of an incremental pull's `ModificationTimestamp <op> <mark>` */
  since: 'gt' | 'ge';
  /** minutes the mark is moved back before an incremental pull asks from it (server-side caching) */
  sinceLagMinutes?: number;
  /**
   * The searchable field a record is asked for by when the listing key's own field is not searchable
   * (MLS Grid: ListingKey is not, ListingId is): the confirmation then finds the keys in a keys-only
   * read (`$select` of the key field and this one) and asks for the records still there by this field.
   */
  confirmBy?: string;
  /** most `or` terms one `$filter` may hold (a confirm query that asks for keys); undefined: no documented limit */
  maxOrTerms?: number;
  /**
   * Photo downloads (media mirror) must carry the source's access token (source.bearerToken) as their
   * User-Agent; a configured source.mediaHeaders User-Agent still wins.
   */
  mediaUserAgent?: 'accessToken';
  /** the vendor's media hosts: the only hosts (over https) its photo credentials are sent to */
  mediaHosts?: readonly string[];
  /**
   * The vendor's documentation asks that its Lookup resource be read at most once in this long (ms):
   * `feed drift` reads `$metadata` whenever it is run, and the Lookup resource only once this has
   * passed since its last read (the values of that read are compared meanwhile). Undefined: no limit.
   */
  lookupEveryMs?: number;
  /** documentation the rules come from */
  sources: readonly string[];
}
