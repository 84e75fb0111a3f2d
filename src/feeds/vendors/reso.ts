import type { VendorProfile } from './profile.js';

/** The RESO Web API standard as written: keyset paging, `Prefer: odata.maxpagesize`, any field in `$filter`. */
export const reso: VendorProfile = {
  name: 'reso',
  title: 'RESO Web API standard',
  defaults: {},
  pageSizeBy: 'prefer',
  maxPageSize: 10_000,
  orderby: true,
  since: 'ge',
  sources: [
    'https://transport.reso.org/ (Web API Core 2.0.0)',
    'OData 4.01 Part 1, 8.2.8.5 Preference odata.maxpagesize',
  ],
};
