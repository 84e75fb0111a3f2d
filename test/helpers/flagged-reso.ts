// RESO Property records that carry the display flags an MLS sends, for tests of the display rules
// (docs/display-rules.md) against test/helpers/reso-server.ts, which serves them over HTTP as a
// RESO Web API does. What the flags mean, from the documents that define them:
// - InternetEntireListingDisplayYN, InternetAddressDisplayYN, IDXParticipationYN: Boolean fields of
//   the RESO Data Dictionary's Property resource (DD 2.0 reference sheet,
//   https://docs.google.com/spreadsheets/d/1eOB4Nv3wrAayB1av7n2AWPBRWDeB-UkiDa8h8cdsIEI ; DD 2.1,
//   https://dd.reso.org/DD2.1/Property/). As an MLS states them to its data licensees
//   (UtahRealEstate.com, https://vendor.utahrealestate.com/webapi/internet_visibility): "If
//   InternetEntireListingDisplayYN = False, the listing CANNOT be displayed on IDX, VOW, or any
//   Syndication websites"; "if InternetAddressDisplayYN = False, the property address CANNOT be
//   displayed on IDX, VOW, or any Syndication websites". A flag may come as a boolean or as Y/N,
//   1/0 text (MLS Grid's Actris records carry IDX opt-in as ACT_IDXOptInYN: "1"; FIELD-NOTES).
// - MlgCanView: MLS Grid's own field (https://docs.mlsgrid.com/api-documentation/api-version-2.0):
//   a record replicated with MlgCanView false may no longer be shown and must be removed.
// - The restricted fields (PrivateRemarks, ShowingInstructions, LockBoxSerialNumber, OwnerName,
//   BuyerAgencyCompensation, ...) are Data Dictionary Property fields meant for agents, not the
//   public (e.g. AccessCode, "the code to gain access through the secured gate": Trestle's Property
//   metadata, https://api-trestle.corelogic.com/trestle/Documentation/MetaData/Resource/Property).
//   Each record here carries them with a value that starts with SECRET_MARK, so a test can look for
//   it in every request body the chatbot's emulator received.
// - ListOfficeName: the listing firm, which IDX rules require on every listing shown (CVRMLS IDX
//   rules 11.3.3); CloseDate: the day a Closed listing sold (the sold window counts from it).

import { FeedConfig } from '../../src/config/schema.js';

/** The feed of flagged records a RESO test server at `url` serves: no `display`, so idx (the RESO default); `patch` overrides. */
export function flaggedFeed(url: string, chatbot: string, patch: Record<string, unknown> = {}): FeedConfig {
  return FeedConfig.parse({
    name: 'mls',
    chatbot,
    source: { kind: 'reso', url, incremental: true, maxPageSize: 50, retries: 0 },
    mapping: { preset: 'reso', fields: { Url: { template: 'https://broker.test/l/{ListingId}' } } },
    deletes: { maxFraction: 0.25 },
    ...patch,
  });
}

/** Every restricted value of a flagged record starts with this. */
export const SECRET_MARK = 'SECRET-';

export interface Flags {
  InternetEntireListingDisplayYN?: unknown;
  InternetAddressDisplayYN?: unknown;
  IDXParticipationYN?: unknown;
  MlgCanView?: unknown;
  StandardStatus?: string;
  CloseDate?: string;
  ListOfficeName?: string | null;
  [field: string]: unknown;
}

/**
 * Record `i` (ListingKey F-0i, ListingId FL-0i), Active and allowed everywhere unless `flags` says
 * otherwise (a flag given as undefined is left out), with a street address, coordinates, the
 * listing firm, and every restricted field holding a SECRET_MARK value.
 */
export function flaggedRecord(i: number, flags: Flags = {}): Record<string, unknown> {
  const n = String(i).padStart(2, '0');
  const record: Record<string, unknown> = {
    ListingKey: `F-${n}`,
    ListingId: `FL-${n}`,
    ModificationTimestamp: new Date(Date.UTC(2025, 0, 1, 0, i)).toISOString(),
    StandardStatus: 'Active',
    InternetEntireListingDisplayYN: true,
    InternetAddressDisplayYN: true,
    IDXParticipationYN: true,
    MlgCanView: true,
    ListOfficeName: 'Hill Country Realty',
    PropertyType: 'Residential',
    PropertySubType: 'Single Family Residence',
    ListPrice: 400_000 + i * 1000,
    BedroomsTotal: 3,
    BathroomsTotalDecimal: 2,
    LivingArea: 1600 + i,
    LotSizeSquareFeet: 6000,
    YearBuilt: 2001,
    DaysOnMarket: 5,
    ParkingTotal: 2,
    UnparsedAddress: `${100 + i} Oak Street`,
    City: 'Austin',
    StateOrProvince: 'TX',
    PostalCode: '78701',
    Latitude: 30.26 + i / 1000,
    Longitude: -97.74,
    PublicRemarks: `Bright home number ${i}.`,
    PrivateRemarks: `${SECRET_MARK}private-remarks-${n}`,
    ShowingInstructions: `${SECRET_MARK}call-first-${n}`,
    ShowingContactPhone: `${SECRET_MARK}512-555-01${n}`,
    LockBoxSerialNumber: `${SECRET_MARK}lockbox-${n}`,
    AccessCode: `${SECRET_MARK}gate-${n}`,
    OwnerName: `${SECRET_MARK}owner-${n}`,
    BuyerAgencyCompensation: `${SECRET_MARK}2.5%`,
  };
  for (const [k, v] of Object.entries(flags)) {
    if (v === undefined || v === null) delete record[k];
    else record[k] = v;
  }
  return record;
}
