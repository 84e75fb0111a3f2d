// A stored listing as RealEstateList returns it (spec, "Real estate list item"): most numbers as
// strings ("2.5"), "" for unset, LATITUDE/LONGITUDE as numbers (0 when unset), Price from SalePrice or
// RentPrice by SaleType, Area = BuildingArea. Location and AreaUnit are not returned.
// Decisions where the spec is silent: Images is a JSON array of URLs as a string ('["a.jpg"]'), and
// ExtensionColumn a JSON array of {Key, value} as a string; both are "" when unset or empty.
import type { ListItem } from '../api/schemas.js';
import type { StoredListing } from './chatbot-listings.js';

const str = (v: string | number | undefined): string => (v === undefined ? '' : String(v));
const list = (v: unknown[] | undefined): string => (v && v.length ? JSON.stringify(v) : '');

export function toListItem(l: StoredListing): ListItem {
  return {
    ID: l.ID,
    PropertyType: l.PropertyType,
    SaleType: l.SaleType,
    Status: l.Status,
    Images: list(l.Images),
    CurrencySymbol: l.CurrencySymbol,
    Price: str(l.SaleType === 'for_rent' ? l.RentPrice : l.SalePrice),
    State: str(l.State),
    City: str(l.City),
    Address: str(l.Address),
    ZIP: str(l.ZIP),
    Area: str(l.BuildingArea),
    Bathrooms: str(l.Bathrooms),
    Bedrooms: str(l.Bedrooms),
    Url: l.Url,
    Tours: str(l.Tours),
    YearBuilt: str(l.YearBuilt),
    MLSNumber: l.MLSNumber,
    DaysOnMarket: str(l.DaysOnMarket),
    LotArea: str(l.LotArea),
    BuildingArea: str(l.BuildingArea),
    ParkingSpots: str(l.ParkingSpots),
    Description: str(l.Description),
    LATITUDE: l.Latitude ?? 0,
    LONGITUDE: l.Longitude ?? 0,
    ExtensionColumn: list(l.ExtensionColumn),
    RentPrice: str(l.RentPrice),
    SpaceType: str(l.SpaceType),
    DepositFee: str(l.DepositFee),
    SalePrice: str(l.SalePrice),
    UnitAreaPrice: str(l.UnitAreaPrice),
    ZestimatePrice: str(l.ZestimatePrice),
    HOAMonth: str(l.HOAMonth),
  };
}

/**
 * toListItem(l) as JSON, kept per stored listing (a stored listing is replaced, never changed in
 * place): a sync pages every listing on every run, and the emulator's CPU should not be what a
 * benchmark of it measures.
 */
const itemJson = new WeakMap<StoredListing, string>();
export function listItemJson(l: StoredListing): string {
  let json = itemJson.get(l);
  if (json === undefined) itemJson.set(l, (json = JSON.stringify(toListItem(l))));
  return json;
}
