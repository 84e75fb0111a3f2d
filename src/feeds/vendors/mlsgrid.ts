import type { VendorProfile } from './profile.js';

/** MLS Grid API 2.0 (docs.mlsgrid.com/api-documentation/api-version-2.0). */
export const mlsgrid: VendorProfile = {
  name: 'mlsgrid',
  title: 'MLS Grid API 2.0',
  defaults: {
    url: 'https://api.mlsgrid.com/v2',
    paging: 'nextLink',
    maxPageSize: 1000,
    expandMedia: true,
    // not among the fields the docs' replication examples filter on: incremental pulls ask ModificationTimestamp only
    photosTimestampField: null,
    limits: { perSecond: 2, perHour: 7200, perDay: 40_000, bytesPerHour: 4 * 1024 ** 3 },
  },
  pageSizeBy: 'top',
  maxPageSize: 5000,
  maxPageSizeWithExpand: 1000,
  orderby: false,
  searchable: [
    'ModificationTimestamp',
    'OriginatingSystemName',
    'StandardStatus',
    'ListingId',
    'MlgCanView',
    'PhotosChangeTimestamp',
  ],
  requiredFilter: { field: 'OriginatingSystemName', sourceKey: 'originatingSystem' },
  fullFilter: 'MlgCanView eq true',
  since: 'gt',
  maxOrTerms: 5,
  // ListingKey is not among the searchable fields: a feed keyed by it is confirmed through ListingId
  confirmBy: 'ListingId',
  // "requests to download the expanded media using the provided Media URL MUST include a HTTP User-Agent
  // header [whose] value MUST be the Oauth 2 access token" (from 1 June 2026: Changes to MLS Grid Media Access)
  mediaUserAgent: 'accessToken',
  // the host of the MediaURLs MLS Grid's records carry (https://media.mlsgrid.com/token=…/…); the token goes nowhere else
  mediaHosts: ['media.mlsgrid.com'],
  // MLS Grid asks that its Lookup resource not be pulled more than once a day (more often "may result in
  // interruption of service for inefficient usage practices"): https://docs.mlsgrid.com/ (master.md),
  // as the rate-limit summary of the MLS Grid docs in github.com/api-evangelist/mls-grid
  // (rate-limits/mls-grid-rate-limits.yml, "Lookup Resource Polling") quotes it
  lookupEveryMs: 24 * 3_600_000,
  sources: [
    'https://docs.mlsgrid.com/api-documentation/api-version-2.0',
    'https://docs.mlsgrid.com/',
    'https://docs.mlsgrid.com/releases/changes-to-mls-grid-media-access',
  ],
};
