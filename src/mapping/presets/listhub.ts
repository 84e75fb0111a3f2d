// ListHub's RETS Syndication XML (Listings > Listing, with the RETS commons: namespace for address
// parts). recordPath: Listings.Listing. Paths match namespace prefixes by local name too, so a feed
// that writes <City> instead of <commons:City> maps the same.
//
// ListingStatus → Status: Active, Pending → Active; Closed, Sold → Sold; Coming Soon → PreOnMarket;
// Cancelled, Expired, Withdrawn → skipped (off the market).
// SaleType: ListingCategory Lease or Rent → for_rent, else for_sale.
// LivingArea and LotSize are square feet.
// Agent and office (ExtensionColumn, the reso preset's Keys): the first ListingParticipants
// Participant is the listing agent — ListAgentName (FirstName LastName), ListAgentPhone
// (PrimaryContactPhone, else OfficePhone), ListAgentEmail (Email); ListOfficeName (Offices.Office.Name,
// else Brokerage.Name), ListOfficePhone (Offices.Office.PhoneNumber, else Brokerage.Phone),
// ListOfficeEmail (Brokerage.Email).
import type { PresetSpec } from './define.js';

export const listhubPreset: PresetSpec = {
  fields: {
    MLSNumber: { from: ['MlsNumber', 'ListingKey'] },
    Url: 'ListingURL',
    Status: {
      from: 'ListingStatus',
      map: { Active: 'Active', Pending: 'Active', Closed: 'Sold', Sold: 'Sold', 'Coming Soon': 'PreOnMarket' },
      skip: ['Cancelled', 'Canceled', 'Expired', 'Withdrawn'],
    },
    SaleType: {
      from: 'ListingCategory',
      map: { Lease: 'for_rent', Rent: 'for_rent', '*': 'for_sale' },
      default: 'for_sale',
    },
    SalePrice: { from: 'ListPrice', transform: 'money' },
    PropertyType: { from: ['PropertySubType', 'PropertyType'] },
    Bedrooms: 'Bedrooms',
    Bathrooms: 'Bathrooms',
    BuildingArea: 'LivingArea',
    LotArea: 'LotSize',
    YearBuilt: { from: 'YearBuilt', transform: 'integer' },
    Description: 'ListingDescription',
    DaysOnMarket: { from: 'ListingDate', transform: 'days-since', default: 0 },
    ParkingSpots: { from: 'DetailedCharacteristics.NumParkingSpaces', default: 0 },
    Address: 'Address.commons:FullStreetAddress',
    City: 'Address.commons:City',
    State: 'Address.commons:StateOrProvince',
    ZIP: 'Address.commons:PostalCode',
    Latitude: 'Location.Latitude',
    Longitude: 'Location.Longitude',
    Images: 'Photos.Photo.MediaURL',
  },
  defaults: { CurrencySymbol: '$', AreaUnit: 'Square Feet' },
  extension: {
    ListingKey: 'ListingKey',
    ListAgentName: { join: ['ListingParticipants.Participant.FirstName', 'ListingParticipants.Participant.LastName'] },
    ListAgentPhone: {
      first: ['ListingParticipants.Participant.PrimaryContactPhone', 'ListingParticipants.Participant.OfficePhone'],
    },
    ListAgentEmail: 'ListingParticipants.Participant.Email',
    ListOfficeName: { first: ['Offices.Office.Name', 'Brokerage.Name'] },
    ListOfficePhone: { first: ['Offices.Office.PhoneNumber', 'Brokerage.Phone'] },
    ListOfficeEmail: 'Brokerage.Email',
  },
  // DaysOnMarket is derived from the list date: it changes every day, so it alone never updates a listing
  ignore: ['DaysOnMarket'],
};
