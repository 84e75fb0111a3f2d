// Zillow's listing feed (ZIF) XML: Listings > Listing > Location, ListingDetails, BasicDetails,
// Pictures > Picture > PictureUrl. recordPath: Listings.Listing.
//
// ListingDetails.Status → Status: Active, Contingent, Pending, For Rent → Active; Coming Soon →
// PreOnMarket; Sold → Sold; Cancelled, Expired, Withdrawn, Off Market → skipped (off the market).
// SaleType: Status "For Rent" → for_rent, else for_sale.
// BasicDetails.LotSize is in acres in ZIF; it is converted to square feet (AreaUnit Square Feet).
// DaysOnMarket: days since ListingDetails.DateListed, 0 when absent.
// Agent and office (ExtensionColumn, the reso preset's Keys): ListAgentName (Agent.FirstName
// LastName), ListAgentPhone (Agent.MobilePhoneLineNumber, else OfficeLineNumber), ListAgentEmail
// (Agent.EmailAddress), ListOfficeName (Office.BrokerageName), ListOfficePhone (Office.BrokerPhone),
// ListOfficeEmail (Office.BrokerEmail).
import type { PresetSpec } from './define.js';

export const zillowPreset: PresetSpec = {
  fields: {
    MLSNumber: 'ListingDetails.MlsId',
    Url: 'ListingDetails.ListingUrl',
    Status: {
      from: 'ListingDetails.Status',
      map: {
        Active: 'Active',
        Contingent: 'Active',
        Pending: 'Active',
        'For Rent': 'Active',
        'Coming Soon': 'PreOnMarket',
        Sold: 'Sold',
      },
      skip: ['Cancelled', 'Canceled', 'Expired', 'Withdrawn', 'Off Market'],
    },
    SaleType: { from: 'ListingDetails.Status', map: { 'For Rent': 'for_rent', '*': 'for_sale' } },
    SalePrice: { from: 'ListingDetails.Price', transform: 'money' },
    PropertyType: 'BasicDetails.PropertyType',
    Bedrooms: 'BasicDetails.Bedrooms',
    Bathrooms: 'BasicDetails.Bathrooms',
    BuildingArea: 'BasicDetails.LivingArea',
    LotArea: { from: 'BasicDetails.LotSize', transform: 'number', unit: { from: 'acres', to: 'sqft' } },
    YearBuilt: { from: 'BasicDetails.YearBuilt', transform: 'integer' },
    Description: 'BasicDetails.Description',
    DaysOnMarket: { from: 'ListingDetails.DateListed', transform: 'days-since', default: 0 },
    ParkingSpots: { from: 'RichDetails.ParkingSpaces', default: 0 },
    Address: 'Location.StreetAddress',
    City: 'Location.City',
    State: 'Location.State',
    ZIP: 'Location.Zip',
    Latitude: 'Location.Lat',
    Longitude: 'Location.Long',
    Images: 'Pictures.Picture.PictureUrl',
  },
  defaults: { CurrencySymbol: '$', AreaUnit: 'Square Feet' },
  extension: {
    ListAgentName: { join: ['Agent.FirstName', 'Agent.LastName'] },
    ListAgentPhone: { first: ['Agent.MobilePhoneLineNumber', 'Agent.OfficeLineNumber'] },
    ListAgentEmail: 'Agent.EmailAddress',
    ListOfficeName: 'Office.BrokerageName',
    ListOfficePhone: 'Office.BrokerPhone',
    ListOfficeEmail: 'Office.BrokerEmail',
  },
  // DaysOnMarket is derived from the list date: it changes every day, so it alone never updates a listing
  ignore: ['DaysOnMarket'],
};
