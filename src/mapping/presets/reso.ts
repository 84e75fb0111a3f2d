// RESO Data Dictionary (Property resource, as served by a RESO Web API / MLS Grid / Trestle) → listing.
//
// Every lookup the preset reads matches both spellings servers send: Data Dictionary display names
// ("Active Under Contract", "Residential Lease", "Square Feet") and OData enum member names
// ("ActiveUnderContract", "ResidentialLease", "SquareFeet"), in any case (value maps match case-,
// space- and underscore-insensitively).
//
// StandardStatus → Status (RESO_STATUS_MAP):
//   Active                 → Active
//   Active Under Contract  → Active       (still marketed; buyers may make backup offers)
//   Pending                → Active       (under contract but not closed: the home is still listed)
//   Coming Soon            → PreOnMarket
//   Closed                 → Sold
//   Expired, Withdrawn, Canceled, Delete, Incomplete, Hold → skipped ("off the market"): the record
//                            is left out of the feed, so a mirror sync removes it from the chatbot.
// Any other value passes through and is rejected by validation, naming the value.
//
// SaleType: PropertyType Residential Lease / Commercial Lease → for_rent (ListPrice is the monthly
// rent: it goes to RentPrice, SecurityDeposit to DepositFee), anything else for_sale (ListPrice →
// SalePrice). PropertyType: PropertySubType (else PropertyType) in display form, so the member name
// SingleFamilyResidence reads "Single Family Residence".
// Areas: AreaUnit follows LivingAreaUnits (Square Feet when absent); LivingArea is in LivingAreaUnits,
// LotSizeArea in LotSizeUnits (Acres included), LotSizeSquareFeet and LotSizeAcres in their own
// units; both areas are brought to the one AreaUnit.
// Images: the photos of Media (MediaCategory Photo; without a category, a MediaType image/* or
// jpeg/png/gif/webp) ordered by Order. A feed overrides it, e.g. to add floor plans:
//   fields: { Images: { from: Media, list: { where: { MediaCategory: [Photo, Floor Plan] }, orderBy: Order, pick: MediaURL } } }
// Url: the Data Dictionary has no listing URL; give one per feed, e.g.
//   fields: { Url: { template: "https://broker.test/l/{ListingId}" } }
// HOAMonth: AssociationFee per its AssociationFeeFrequency, brought to a month (Annually 1200 → 100);
// none given: as it is; One Time or Seasonal: no HOAMonth.
// ParkingSpots defaults to 0 and DaysOnMarket to 0 when the record has none (both are required).
// Real MLS data carries junk there (DaysOnMarket 72,725, GarageSpaces 510864656077.79, LotSizeArea
// 3e15 on the RESO reference server): DaysOnMarket, ParkingSpots and LotArea take `onInvalid:
// default`, so such a value gives way to the rule's next usable source (LotSizeSquareFeet,
// CumulativeDaysOnMarket), else to 0, counted in the report, rather than costing the listing.
// ParkingTotal and GarageSpaces are decimals in RESO (2.5 happens): floored to whole spaces.
// DaysOnMarket grows every day: it is ignored for change detection unless the feed sets `ignore`.
// Agent and office (ExtensionColumn, RESO_AGENT_EXTENSION): the list agent's and co-list agent's
// name (FullName, else First Last), phone (PreferredPhone, else DirectPhone) and email, the list
// and co-list office's name, phone and email; an entry the record has no value for is left out.
// Each is the agent's public contact, none in the restricted list (restricted-fields.ts).
// Open houses (a source with expandOpenHouse, or related: [OpenHouse], whose reader joins them to the
// record under the same name): the upcoming ones of the OpenHouse list give Tours OpenHouse and the
// entry OpenHouses (src/mapping/open-houses.ts).
import type { PresetSpec } from './define.js';
import type { ExtensionSource } from '../extension-source.js';

export const RESO_STATUS_MAP = {
  Active: 'Active',
  'Active Under Contract': 'Active',
  Pending: 'Active',
  'Coming Soon': 'PreOnMarket',
  Closed: 'Sold',
} as const;

const RESO_OFF_MARKET = ['Expired', 'Withdrawn', 'Canceled', 'Cancelled', 'Delete', 'Incomplete', 'Hold'];

const RESO_LEASE_TYPES = { 'Residential Lease': 'for_rent', 'Commercial Lease': 'for_rent', '*': 'for_sale' } as const;

/** LivingAreaUnits → AreaUnit: an area in acres is converted, so it is stated in square feet. */
const RESO_AREA_UNIT_MAP = {
  'Square Feet': 'Square Feet',
  'Square Meters': 'Square Meters',
  Acres: 'Square Feet',
} as const;

const RESO_PHOTO_MEDIA: Record<string, string | string[]>[] = [
  { MediaCategory: 'Photo' },
  { MediaCategory: '', MediaType: ['image/*', 'jpeg', 'jpg', 'png', 'gif', 'webp'] },
];

/** The agent and office entries of a RESO Property record (ListAgent…, CoListAgent…, ListOffice…, CoListOffice…). */
function agentEntries(
  agent: 'ListAgent' | 'CoListAgent',
  office: 'ListOffice' | 'CoListOffice',
): Record<string, ExtensionSource> {
  return {
    [`${agent}Name`]: { first: [`${agent}FullName`, { join: [`${agent}FirstName`, `${agent}LastName`] }] },
    [`${agent}Phone`]: { first: [`${agent}PreferredPhone`, `${agent}DirectPhone`] },
    [`${agent}Email`]: `${agent}Email`,
    [`${office}Name`]: `${office}Name`,
    [`${office}Phone`]: `${office}Phone`,
    [`${office}Email`]: `${office}Email`,
  };
}

export const RESO_AGENT_EXTENSION: Record<string, ExtensionSource> = {
  ...agentEntries('ListAgent', 'ListOffice'),
  ...agentEntries('CoListAgent', 'CoListOffice'),
};

export const resoPreset: PresetSpec = {
  fields: {
    MLSNumber: { from: ['ListingId', 'ListingKey'] },
    Status: { from: 'StandardStatus', map: RESO_STATUS_MAP, skip: RESO_OFF_MARKET },
    SaleType: { from: 'PropertyType', map: RESO_LEASE_TYPES },
    PropertyType: { from: ['PropertySubType', 'PropertyType'], transform: 'words' },
    SalePrice: { from: 'ListPrice', transform: 'money', when: { SaleType: 'for_sale' } },
    RentPrice: { from: 'ListPrice', transform: 'money', when: { SaleType: 'for_rent' } },
    DepositFee: { from: 'SecurityDeposit', transform: 'money', when: { SaleType: 'for_rent' } },
    Bedrooms: 'BedroomsTotal',
    Bathrooms: { from: ['BathroomsTotalDecimal', 'BathroomsTotalInteger'] },
    BuildingArea: { from: 'LivingArea', unit: { from: 'LivingAreaUnits', default: 'sqft', to: 'AreaUnit' } },
    LotArea: {
      from: ['LotSizeArea', 'LotSizeSquareFeet', 'LotSizeAcres'],
      unit: { from: { LotSizeArea: 'LotSizeUnits', LotSizeSquareFeet: 'sqft', LotSizeAcres: 'acres' }, to: 'AreaUnit' },
      default: 0,
      onInvalid: 'default',
    },
    AreaUnit: { from: 'LivingAreaUnits', map: RESO_AREA_UNIT_MAP, default: 'Square Feet' },
    YearBuilt: { from: 'YearBuilt', transform: 'integer' },
    DaysOnMarket: { from: ['DaysOnMarket', 'CumulativeDaysOnMarket'], default: 0, onInvalid: 'default' },
    ParkingSpots: { from: ['ParkingTotal', 'GarageSpaces'], transform: 'floor', default: 0, onInvalid: 'default' },
    Address: { from: 'UnparsedAddress', template: '{StreetNumber} {StreetName} {StreetSuffix}' },
    City: 'City',
    State: 'StateOrProvince',
    ZIP: 'PostalCode',
    Latitude: 'Latitude',
    Longitude: 'Longitude',
    Description: 'PublicRemarks',
    Images: { from: 'Media', list: { where: RESO_PHOTO_MEDIA, orderBy: 'Order', pick: 'MediaURL' } },
    HOAMonth: { from: 'AssociationFee', per: { from: 'AssociationFeeFrequency' } },
  },
  defaults: { CurrencySymbol: '$' },
  extension: RESO_AGENT_EXTENSION,
  openHouses: 'OpenHouse',
  ignore: ['DaysOnMarket'],
};
