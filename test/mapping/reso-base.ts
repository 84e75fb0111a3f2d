// A RESO Property record the reso preset makes a listing of, for tests that add to it.
/** a RESO Property record the reso preset makes a listing of */
export const RESO_BASE = {
  ListingKey: 'K1',
  ListingId: 'M1',
  StandardStatus: 'Active',
  PropertyType: 'Residential',
  ListPrice: 450000,
  BedroomsTotal: 3,
  BathroomsTotalInteger: 2,
  LivingArea: 1850,
  YearBuilt: 1999,
};
