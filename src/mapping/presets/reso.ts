// RESO Data Dictionary (Property resource, as served by a RESO Web API / MLS Grid) → listing.
//
// StandardStatus → Status, the default table:
//   Active                 → Active
//   Active Under Contract  → Active       (still marketed; buyers may make backup offers)
//   Pending                → Active       (under contract but not closed: the home is still listed)
//   Coming Soon            → PreOnMarket
//   Closed                 → Sold
//   Expired, Withdrawn, Canceled, Delete, Incomplete, Hold → skipped ("off the market"): the record
//                            is left out of the feed, so a mirror sync removes it from the chatbot.
// Any other value passes through and is rejected by validation, naming the value.
//
// SaleType: PropertyType "Residential Lease" or "Commercial Lease" → for_rent, anything else for_sale.
// Url: the Data Dictionary has no listing URL; give one per feed, e.g.
//   fields: { Url: { template: "https://broker.test/l/{ListingId}" } }
// Images: the reader turns the expanded Media into MediaURLs ordered by Order.
// ParkingSpots defaults to 0 and DaysOnMarket to 0 when the record has none (both are required).
import { definePreset } from './define.js';

export const RESO_STATUS_MAP = {
  Active: 'Active',
  'Active Under Contract': 'Active',
  Pending: 'Active',
  'Coming Soon': 'PreOnMarket',
  Closed: 'Sold',
} as const;

export const RESO_OFF_MARKET = ['Expired', 'Withdrawn', 'Canceled', 'Cancelled', 'Delete', 'Incomplete', 'Hold'];

export const resoPreset = definePreset({
  fields: {
    MLSNumber: { from: ['ListingId', 'ListingKey'] },
    Status: { from: 'StandardStatus', map: RESO_STATUS_MAP, skip: RESO_OFF_MARKET },
    SaleType: { from: 'PropertyType', map: { 'Residential Lease': 'for_rent', 'Commercial Lease': 'for_rent', '*': 'for_sale' } },
    PropertyType: { from: ['PropertySubType', 'PropertyType'] },
    SalePrice: { from: 'ListPrice', transform: 'money' },
    Bedrooms: 'BedroomsTotal',
    Bathrooms: { from: ['BathroomsTotalDecimal', 'BathroomsTotalInteger'] },
    BuildingArea: 'LivingArea',
    LotArea: { from: ['LotSizeSquareFeet', 'LotSizeArea'] },
    YearBuilt: { from: 'YearBuilt', transform: 'integer' },
    DaysOnMarket: { from: ['DaysOnMarket', 'CumulativeDaysOnMarket'], default: 0 },
    ParkingSpots: { from: ['ParkingTotal', 'GarageSpaces'], default: 0 },
    Address: { from: 'UnparsedAddress', template: '{StreetNumber} {StreetName} {StreetSuffix}' },
    City: 'City',
    State: 'StateOrProvince',
    ZIP: 'PostalCode',
    Latitude: 'Latitude',
    Longitude: 'Longitude',
    Description: 'PublicRemarks',
    Images: 'Media.MediaURL',
    HOAMonth: 'AssociationFee',
  },
  defaults: { CurrencySymbol: '$', AreaUnit: 'Square Feet' },
});
