// Vendor profiles by name (source.vendor).
import { bridge } from './bridge.js';
import { mlsgrid } from './mlsgrid.js';
import type { VendorName, VendorProfile } from './profile.js';
import { reso } from './reso.js';
import { spark } from './spark.js';
import { trestle } from './trestle.js';

export const VENDORS: Readonly<Record<VendorName, VendorProfile>> = { reso, mlsgrid, trestle, bridge, spark };

export function vendorProfile(name: VendorName | undefined): VendorProfile {
  return VENDORS[name ?? 'reso'];
}
