import type { VendorProfile } from './profile.js';

/** Spark Platform (FBS / Flexmls) RESO Web API, replication endpoint (sparkplatform.com/docs/reso/replication). */
export const spark: VendorProfile = {
  name: 'spark',
  title: 'Spark RESO Web API (replication)',
  defaults: {
    url: 'https://replication.sparkapi.com/Reso/OData',
    paging: 'nextLink',
    maxPageSize: 1000,
  },
  // replication keys: $top up to 1000; pages by @odata.nextLink ($skiptoken), ListingKey order applied by the server
  pageSizeBy: 'top',
  maxPageSize: 1000,
  orderby: false,
  since: 'gt',
  sinceLagMinutes: 20,
  sources: [
    'https://sparkplatform.com/docs/reso/replication',
    'https://sparkplatform.com/docs/reso/request_parameters',
  ],
};
