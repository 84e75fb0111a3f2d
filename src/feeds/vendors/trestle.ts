import type { VendorProfile } from './profile.js';

/** Trestle (CoreLogic / Cotality) WebAPI (trestle-documentation.corelogic.com/webapi.html). */
export const trestle: VendorProfile = {
  name: 'trestle',
  title: 'Trestle WebAPI',
  defaults: {
    url: 'https://api-trestle.corelogic.com/trestle/odata',
    // (paging unset: keyset, the source's default; set here it would read as the user's word, which wins over what a pull learns)
    maxPageSize: 1000,
    auth: { tokenUrl: 'https://api-trestle.corelogic.com/trestle/oidc/connect/token', scope: 'api' },
    limits: { perMinute: 180, perHour: 7200 },
  },
  // "$top=1000 ... the maximum Trestle will return in one request"; keyset paging never asks past row 1,000,000
  pageSizeBy: 'top',
  maxPageSize: 1000,
  orderby: true,
  since: 'ge',
  sources: [
    'https://trestle-documentation.corelogic.com/webapi.html',
    'https://trestle-documentation.corelogic.com/webapi-at-scale.html',
    'https://docs-trestle.corelogic.com/Subtopic/ReplicationEndpoint',
  ],
};
