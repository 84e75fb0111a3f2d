// The fields of a MITS 4.x property, floorplan and unit, read from their scanned elements into the
// documented record paths (docs/configuration.md, "Rentals"). Element names are MITS 4.1's (as
// Fortress's unit-availability feed documents them, and AppFolio's and ResMan's MITS 4.0 marketing
// feeds send them); where vendors differ, each place a value is found in is listed, first wins.
import { amount, attr, child, elements, preferred, text, textOf, type Element } from './elements.js';

export type Fields = Record<string, unknown>;

/** Photos, as the feed lists them: File elements of these types, Active not "false", by Rank, http(s) Src only. */
export function photosOf(owner: unknown, types: RegExp): { urls: string[]; dropped: number } {
  const files = elements(owner, 'File').filter(
    (f) => types.test(text(f, 'FileType') ?? 'Photo') && !/^false$/i.test(attr(f, 'Active') ?? ''),
  );
  const ranked = files.map((f, i) => ({
    src: text(f, 'Src') ?? text(f, 'URL'),
    rank: Number(text(f, 'Rank') ?? Number.NaN),
    i,
  }));
  ranked.sort(
    (a, b) =>
      (Number.isFinite(a.rank) ? a.rank : Infinity) - (Number.isFinite(b.rank) ? b.rank : Infinity) || a.i - b.i,
  );
  const urls: string[] = [];
  let dropped = 0;
  for (const r of ranked) {
    if (r.src !== undefined && /^https?:\/\/\S+$/i.test(r.src)) urls.push(r.src);
    else dropped++;
  }
  return { urls, dropped };
}

/** A security deposit: `Deposit/Amount/ValueRange@Exact` (else `@Min`, else the Amount's text). */
export function depositOf(owner: unknown): string | undefined {
  const deposits = elements(owner, 'Deposit');
  const d = preferred(deposits, 'DepositType', /security/i) ?? child(owner, 'Deposit');
  const a = child(d, 'Amount');
  const range = child(a, 'ValueRange');
  return amount(attr(range, 'Exact') ?? attr(range, 'Min') ?? textOf(a) ?? textOf(d));
}

function addressOf(owner: unknown): Fields | undefined {
  const a = preferred(elements(owner, 'Address'), 'AddressType', /property|unit/i);
  if (!a) return undefined;
  const out: Fields = {};
  const put = (k: string, v: string | undefined) => v !== undefined && (out[k] = v);
  put('Line1', text(a, 'AddressLine1') ?? text(a, 'Address'));
  put('Line2', text(a, 'AddressLine2'));
  put('City', text(a, 'City'));
  put('State', text(a, 'State') ?? text(a, 'Province'));
  put('PostalCode', text(a, 'PostalCode') ?? text(a, 'Zip'));
  put('Country', text(a, 'Country'));
  return Object.keys(out).length ? out : undefined;
}

/** Only the fields the feed gave, so a record reads the same every run (built anew: no deletes, objects stay in V8's fast mode). */
function defined(fields: Fields): Fields {
  const out: Fields = {};
  for (const k in fields) if (fields[k] !== undefined) out[k] = fields[k];
  return out;
}

export interface PropertyParts {
  fields: Fields;
  photosDropped: number;
}

export function readProperty(p: Element): PropertyParts {
  const pid = child(p, 'PropertyID');
  const ids = elements(pid, 'Identification');
  const id =
    attr(p, 'IDValue') ??
    attr(
      ids.find((i) => /property/i.test(attr(i, 'IDType') ?? '')),
      'IDValue',
    ) ??
    attr(ids[0], 'IDValue');
  const phones = elements(pid, 'Phone');
  const ils = child(p, 'ILS_Identification');
  const info = child(p, 'Information');
  const photos = photosOf(p, /^(photo|image)$/i);
  const fields = defined({
    ID: id,
    MarketingName: text(pid, 'MarketingName'),
    Website: text(pid, 'WebSite') ?? text(pid, 'Website') ?? text(info, 'PropertyAvailabilityURL'),
    Phone: text(preferred(phones, 'PhoneType', /office/i), 'PhoneNumber'),
    Email: text(pid, 'Email'),
    Type: attr(ils, 'ILS_IdentificationType') ?? text(info, 'StructureType'),
    YearBuilt: text(info, 'YearBuilt'),
    Description: text(info, 'LongDescription') ?? text(info, 'ShortDescription'),
    Address: addressOf(pid),
    Latitude: text(ils, 'Latitude') ?? text(pid, 'Latitude'),
    Longitude: text(ils, 'Longitude') ?? text(pid, 'Longitude'),
    Deposit: depositOf(p),
    Photos: photos.urls.length ? photos.urls : undefined,
  });
  return { fields, photosDropped: photos.dropped };
}

function rooms(fp: Element, type: RegExp): string | undefined {
  return text(
    elements(fp, 'Room').find((r) => type.test(attr(r, 'RoomType') ?? '')),
    'Count',
  );
}

export function floorplanId(fp: Element): string | undefined {
  return attr(fp, 'IDValue') ?? attr(fp, 'Id') ?? attr(child(fp, 'Identification'), 'IDValue');
}

export function readFloorplan(fp: Element): { fields: Fields; photosDropped: number } {
  const sq = child(fp, 'SquareFeet');
  const market = child(fp, 'MarketRent');
  const effective = child(fp, 'EffectiveRent');
  const photos = photosOf(fp, /^(photo|image|floor ?plan)$/i);
  const fields = defined({
    ID: floorplanId(fp),
    Name: text(fp, 'Name') ?? text(fp, 'MarketingName'),
    Bedrooms: rooms(fp, /^bedroom$/i),
    Bathrooms: rooms(fp, /^bathroom$/i),
    SquareFeetMin: attr(sq, 'Min') ?? textOf(sq),
    SquareFeetMax: attr(sq, 'Max'),
    MarketRentMin: amount(attr(market, 'Min') ?? textOf(market)),
    MarketRentMax: amount(attr(market, 'Max')),
    EffectiveRentMin: amount(attr(effective, 'Min')),
    EffectiveRentMax: amount(attr(effective, 'Max')),
    Deposit: depositOf(fp),
    UnitCount: text(fp, 'UnitCount'),
    Photos: photos.urls.length ? photos.urls : undefined,
  });
  return { fields, photosDropped: photos.dropped };
}
