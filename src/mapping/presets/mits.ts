// MITS 4.x ILS feeds (source.kind: mits) → one rental listing per available unit, or per floorplan
// (source.recordPer: floorplan). The record paths are the reader's (src/feeds/mits/, documented in
// docs/configuration.md, "Rentals"): Key, Availability, AvailableDate, Photos, Property.*,
// Floorplan.*, Unit.*.
//
// Status: Availability available or on_notice → Active (an on-notice unit says its date in
// ExtensionColumn AvailableDate); leased → skipped (off the market), so a unit leased since the
// last run leaves the chatbot. In floorplan mode a floorplan with no available unit is leased.
// MLSNumber: Key, `<property id>-<unit id>` (floorplan mode: `<property id>-<floorplan id>`).
// RentPrice: the unit's UnitRent, else its MarketRent, else the floorplan's lowest market rent, else
// its lowest effective rent (0 and 0.00 are "unknown" in these feeds and never a rent).
// DepositFee: the unit's deposit, else its floorplan's, else its property's.
// Bedrooms, Bathrooms, BuildingArea: the unit's, else its floorplan's (Room RoomType Bedroom /
// Bathroom Count, SquareFeet Min). Url: the unit's website, else its property's. Images: the unit's
// photos, its floorplan's images, then its property's photos. PropertyType: ILS_IdentificationType
// (else StructureType), Apartment when absent. YearBuilt is the property's Information/YearBuilt; the
// chatbot service requires it, so a property without one is rejected, naming it (set
// `defaults: { YearBuilt: ... }` to accept a stand-in). LotArea, ParkingSpots and DaysOnMarket
// (required, not in MITS) are 0.
import type { PresetSpec } from './define.js';

export const mitsPreset: PresetSpec = {
  fields: {
    MLSNumber: 'Key',
    Url: { from: ['Unit.Website', 'Property.Website'] },
    Status: { from: 'Availability', map: { available: 'Active', on_notice: 'Active' }, skip: ['leased'] },
    RentPrice: {
      from: ['Unit.UnitRent', 'Unit.MarketRent', 'Floorplan.MarketRentMin', 'Floorplan.EffectiveRentMin'],
      transform: 'money',
    },
    DepositFee: { from: ['Unit.Deposit', 'Floorplan.Deposit', 'Property.Deposit'], transform: 'money' },
    PropertyType: { from: 'Property.Type', default: 'Apartment' },
    Bedrooms: { from: ['Unit.Bedrooms', 'Floorplan.Bedrooms'] },
    Bathrooms: { from: ['Unit.Bathrooms', 'Floorplan.Bathrooms'] },
    BuildingArea: { from: ['Unit.SquareFeet', 'Floorplan.SquareFeetMin'] },
    YearBuilt: { from: 'Property.YearBuilt', transform: 'integer' },
    Address: { from: ['Unit.Address', 'Property.Address.Line1'] },
    City: 'Property.Address.City',
    State: 'Property.Address.State',
    ZIP: 'Property.Address.PostalCode',
    Latitude: 'Property.Latitude',
    Longitude: 'Property.Longitude',
    Description: 'Property.Description',
    Images: 'Photos',
  },
  defaults: {
    SaleType: 'for_rent',
    CurrencySymbol: '$',
    AreaUnit: 'Square Feet',
    SpaceType: 'Entire place',
    LotArea: 0,
    ParkingSpots: 0,
    DaysOnMarket: 0,
  },
  extension: {
    AvailableDate: 'AvailableDate',
    Availability: 'Availability',
    Community: 'Property.MarketingName',
    Floorplan: 'Floorplan.Name',
    Unit: 'Unit.MarketingName',
    Phone: 'Property.Phone',
    UnitsAvailable: 'Floorplan.UnitsAvailable',
    RentRange: 'Floorplan.RentRange',
  },
};
