// The real estate listing of the Chatbot Service API, as the spec's tables give it: field names and
// casing verbatim. Shared by the client, the emulator, the mapper and the tests.
import { z } from 'zod';

export const SALE_TYPES = ['for_sale', 'for_rent'] as const;
export const STATUSES = ['Active', 'PreOnMarket', 'Sold'] as const;
export const KEY_TYPES = ['NewOaks', 'MLSNumber', 'URL'] as const;
export const AREA_UNITS = ['Square Feet', 'Square Meters'] as const;
export const TOURS = ['OpenHouse', '3D'] as const;
export const SPACE_TYPES = ['Entire place', 'Room'] as const;

export const SaleType = z.enum(SALE_TYPES);
export const Status = z.enum(STATUSES);
export const KeyType = z.enum(KEY_TYPES);
export type KeyType = z.infer<typeof KeyType>;

const text = () => z.string().trim().min(1, 'must not be empty');
const count = () => z.number().finite().nonnegative();
const amount = () => z.number().finite().nonnegative();

export const ExtensionEntry = z.strictObject({ Key: z.string(), value: z.string() });
export type ExtensionEntry = z.infer<typeof ExtensionEntry>;

/** Fields shared by create and update (the create column of the spec's listing table). */
export const listingShape = {
  SerialNumber: text(),
  SaleType,
  Status,
  CurrencySymbol: text(),
  PropertyType: text(),
  Bedrooms: count(),
  Bathrooms: count(),
  Url: text(),
  MLSNumber: text(),
  YearBuilt: z.number().int().min(1000).max(3000),
  DaysOnMarket: count(),
  LotArea: amount(),
  BuildingArea: amount(),
  AreaUnit: z.enum(AREA_UNITS),
  Images: z.array(z.string()).optional(),
  Tours: z.enum(TOURS).optional(),
  ParkingSpots: count(),
  Description: z.string().optional(),
  ExtensionColumn: z.array(ExtensionEntry).optional(),
  Location: z.string().optional(),
  Address: z.string().optional(),
  City: z.string().optional(),
  State: z.string().optional(),
  ZIP: z.string().optional(),
  Latitude: z.number().min(-90).max(90).optional(),
  Longitude: z.number().min(-180).max(180).optional(),
  SalePrice: amount().optional(),
  UnitAreaPrice: amount().optional(),
  HOAMonth: amount().optional(),
  ZestimatePrice: amount().optional(),
  RentPrice: amount().optional(),
  SpaceType: z.enum(SPACE_TYPES).optional(),
  DepositFee: amount().optional(),
} as const;

export const ListingCreate = z.strictObject(listingShape);
export type ListingCreate = z.infer<typeof ListingCreate>;

export const ListingUpdate = z.strictObject({
  ...listingShape,
  Key: text(),
  KeyType,
});
export type ListingUpdate = z.infer<typeof ListingUpdate>;

export type ListingField = keyof typeof listingShape;
export const LISTING_FIELDS = Object.keys(listingShape) as ListingField[];

/** One item of `Data.List` from RealEstateList: most numbers as strings, "" for unset. */
export const ListItem = z.object({
  ID: z.number().int(),
  PropertyType: z.string(),
  SaleType: z.string(),
  Status: z.string(),
  Images: z.string(),
  CurrencySymbol: z.string(),
  Price: z.string(),
  State: z.string(),
  City: z.string(),
  Address: z.string(),
  ZIP: z.string(),
  Area: z.string(),
  Bathrooms: z.string(),
  Bedrooms: z.string(),
  Url: z.string(),
  Tours: z.string(),
  YearBuilt: z.string(),
  MLSNumber: z.string(),
  DaysOnMarket: z.string(),
  LotArea: z.string(),
  BuildingArea: z.string(),
  ParkingSpots: z.string(),
  Description: z.string(),
  LATITUDE: z.number(),
  LONGITUDE: z.number(),
  ExtensionColumn: z.string(),
  RentPrice: z.string(),
  SpaceType: z.string(),
  DepositFee: z.string(),
  SalePrice: z.string(),
  UnitAreaPrice: z.string(),
  ZestimatePrice: z.string(),
  HOAMonth: z.string(),
});
export type ListItem = z.infer<typeof ListItem>;
