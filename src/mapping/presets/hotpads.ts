// HotPads rental listings feed (the format Zillow's rental network takes: "Rental Listings Feed
// Guide", HotPads/Zillow, hotPadsItems version 2.1): hotPadsItems > Listing, one listing per
// single-family home, condo or apartment unit. recordPath: hotPadsItems.Listing. (Apartment
// communities with Model elements are not mapped by this preset; send them as MITS.)
//
// MLSNumber: Listing@id. Status: Active (a listing in the feed is for rent; one that leaves it is
// removed). SaleType: for_rent. SpaceType: Listing@type ROOM → Room, else Entire place.
// PropertyType: Listing@propertyType (HOUSE, CONDO, TOWNHOUSE, ...) in display form.
// RentPrice: price (the guide's pricingFrequency is in ExtensionColumn; the chatbot's RentPrice is
// monthly). DepositFee: deposit. Bathrooms: numFullBaths (numHalfBaths in ExtensionColumn HalfBaths:
// the mapping does no sums). BuildingArea: squareFeet. Images: ListingPhoto@source in feed order.
// Tours: 3D when the listing has a virtualTourUrl. YearBuilt is not in the guide's listing
// elements and the chatbot service requires it: set `defaults: { YearBuilt: ... }` per feed.
import type { PresetSpec } from './define.js';

export const hotpadsPreset: PresetSpec = {
  fields: {
    MLSNumber: '@_id',
    Url: 'website',
    SpaceType: { from: '@_type', map: { ROOM: 'Room', '*': 'Entire place' }, default: 'Entire place' },
    PropertyType: {
      from: '@_propertyType',
      map: { HOUSE: 'House', CONDO: 'Condo', TOWNHOUSE: 'Townhouse', APARTMENT: 'Apartment' },
      default: 'Apartment',
    },
    RentPrice: { from: 'price', transform: 'money' },
    DepositFee: { from: 'deposit', transform: 'money' },
    Bedrooms: 'numBedrooms',
    Bathrooms: 'numFullBaths',
    BuildingArea: 'squareFeet',
    YearBuilt: { from: 'yearBuilt', transform: 'integer' },
    Address: 'street',
    City: 'city',
    State: 'state',
    ZIP: 'zip',
    Latitude: 'latitude',
    Longitude: 'longitude',
    Description: 'description',
    Images: 'ListingPhoto.@_source',
    Tours: { from: 'virtualTourUrl', map: { '*': '3D' } },
  },
  defaults: {
    Status: 'Active',
    SaleType: 'for_rent',
    CurrencySymbol: '$',
    AreaUnit: 'Square Feet',
    LotArea: 0,
    ParkingSpots: 0,
    DaysOnMarket: 0,
  },
  extension: {
    Unit: 'unit',
    AvailableDate: 'dateAvailable',
    HalfBaths: 'numHalfBaths',
    LeaseTerm: 'leaseTerm',
    PricingFrequency: 'pricingFrequency',
  },
};
