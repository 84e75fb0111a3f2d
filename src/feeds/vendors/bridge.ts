import type { VendorProfile } from './profile.js';

/** Bridge Interactive (Zillow Group) RESO Web API, v2 and v3 OData endpoints. */
export const bridge: VendorProfile = {
  name: 'bridge',
  title: 'Bridge RESO Web API',
  // (paging unset: keyset, the source's default; a default set here would read as the user's word, which wins over what a pull learns)
  defaults: {
    maxPageSize: 200,
  },
  // v2 reads $top as the page size, v3 the maxpagesize preference: both are sent (max 200); keyset
  // paging never sends $skip, so the 10,000-record $skip ceiling is never reached
  pageSizeBy: 'top',
  maxPageSize: 200,
  orderby: true,
  since: 'ge',
  sources: [
    'https://www.bridgeinteractive.com/upcoming-change-to-top-and-page-size-behavior-on-bridge-api-v3-endpoint',
    'https://bridgedataoutput.com/docs/platform/',
  ],
};
