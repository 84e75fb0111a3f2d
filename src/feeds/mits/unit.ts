// One MITS <ILS_Unit>: its fields, the floorplan it names, and whether it can be rented.
//
// Availability (the record's `Availability`, what the mits preset shows or leaves out):
//   UnitLeasedStatus (MITS UnitLeaseStatusInfo: leased, available, approved, reserved, not_ready,
//   on_notice, leased_on_notice, leased_reserved, other) decides when it is given:
//     available, not_ready                          → available (not_ready: from its MadeReadyDate)
//     on_notice                                     → on_notice (the resident leaves on VacateDate)
//     leased, leased_on_notice, leased_reserved,
//     approved, reserved                            → leased
//   otherwise (absent, `other`, a vendor's own words) Availability/VacancyClass and
//   UnitOccupancyStatus decide: Unoccupied / vacant → available; Occupied / occupied with a
//   VacateDate → on_notice, without one → leased. A unit with none of these is listed by the feed
//   as marketed: available. (Yardi and ResMan put the statuses in Unit/Information or with a
//   `MITS:` prefix; both are read.)
// AvailableDate: an available unit's MadeReadyDate (else VacateDate), an on-notice unit's
// VacateDate (else MadeReadyDate), as YYYY-MM-DD.
import { amount, attr, child, elements, mitsDate, text, type Element } from './elements.js';
import { depositOf, photosOf, type Fields } from './parts.js';

export type Availability = 'available' | 'on_notice' | 'leased';

/** How the unit names its floorplan: the id (and where it was found), else the floorplan's name. */
export interface FloorplanRef {
  id?: string;
  name?: string;
  /** where the reference was read, for feed preview */
  via: string;
}

export interface UnitParts {
  fields: Fields;
  floorplan: FloorplanRef | undefined;
  availability: Availability;
  /** what decided availability, for feed preview */
  decidedBy: string;
  photosDropped: number;
}

const LEASED = new Set(['leased', 'leased_on_notice', 'leased_reserved', 'approved', 'reserved']);

/** A unit field, from Unit, Unit/Information (Yardi) or the ILS_Unit itself. */
function unitText(ils: Element, unit: unknown, name: string): string | undefined {
  return text(unit, name) ?? text(child(unit, 'Information'), name) ?? text(ils, name);
}

export function readUnit(ils: Element): UnitParts {
  const unit = child(child(ils, 'Units'), 'Unit') ?? child(ils, 'Unit');
  const avail = child(ils, 'Availability');
  const vacate = mitsDate(child(avail, 'VacateDate'));
  const ready = mitsDate(child(avail, 'MadeReadyDate')) ?? mitsDate(child(avail, 'AvailableDate'));
  const leased = unitText(ils, unit, 'UnitLeasedStatus');
  const vacancy = text(avail, 'VacancyClass');
  const occupancy = unitText(ils, unit, 'UnitOccupancyStatus');
  const { availability, decidedBy } = decide(leased, vacancy, occupancy, vacate);
  const photos = photosOf(ils, /^(photo|image)$/i);
  const unitAddress = elements(unit, 'Address')[0];
  // only what the feed gave, set in one order (no deletes: objects stay in V8's fast mode)
  const fields: Fields = {};
  const put = (k: string, v: unknown) => v !== undefined && (fields[k] = v);
  put('ID', attr(ils, 'IDValue') ?? attr(child(unit, 'Identification'), 'IDValue') ?? text(unit, 'MarketingName'));
  put('MarketingName', text(unit, 'MarketingName'));
  put('Bedrooms', unitText(ils, unit, 'UnitBedrooms'));
  put('Bathrooms', unitText(ils, unit, 'UnitBathrooms'));
  put('SquareFeet', unitText(ils, unit, 'MinSquareFeet') ?? unitText(ils, unit, 'MaxSquareFeet'));
  put('UnitRent', amount(unitText(ils, unit, 'UnitRent')));
  put('MarketRent', amount(unitText(ils, unit, 'MarketRent')) ?? amount(attr(child(ils, 'EffectiveRent'), 'Min')));
  put('Deposit', depositOf(ils));
  put('LeasedStatus', leased);
  put('OccupancyStatus', occupancy);
  put('VacancyClass', vacancy);
  put('VacateDate', vacate);
  put('MadeReadyDate', ready);
  put('Website', text(ils, 'WebSite') ?? text(ils, 'Website') ?? text(unit, 'WebSite'));
  put('Address', unitAddress && text(unitAddress, 'AddressLine1'));
  if (photos.urls.length) fields.Photos = photos.urls;
  return { fields, floorplan: floorplanRef(ils, unit), availability, decidedBy, photosDropped: photos.dropped };
}

/** The unit's availability from its statuses (see the header). */
export function decide(
  leased: string | undefined,
  vacancy: string | undefined,
  occupancy: string | undefined,
  vacate: string | undefined,
): { availability: Availability; decidedBy: string } {
  const status = leased
    ?.trim()
    .toLowerCase()
    .replace(/[\s-]+/g, '_');
  if (status === 'available' || status === 'not_ready')
    return { availability: 'available', decidedBy: `UnitLeasedStatus ${leased}` };
  if (status === 'on_notice') return { availability: 'on_notice', decidedBy: `UnitLeasedStatus ${leased}` };
  if (status !== undefined && LEASED.has(status))
    return { availability: 'leased', decidedBy: `UnitLeasedStatus ${leased}` };
  const occupied =
    vacancy !== undefined
      ? /^occupied$/i.test(vacancy.trim())
      : occupancy !== undefined
        ? /^occupied$/i.test(occupancy.trim())
        : undefined;
  const by =
    vacancy !== undefined
      ? `VacancyClass ${vacancy}`
      : occupancy !== undefined
        ? `UnitOccupancyStatus ${occupancy}`
        : undefined;
  const prefix = status !== undefined ? `UnitLeasedStatus ${leased} (not a MITS value), ` : '';
  if (occupied === undefined || by === undefined)
    return { availability: 'available', decidedBy: `${prefix}no status: listed by the feed` };
  if (!occupied) return { availability: 'available', decidedBy: prefix + by };
  return vacate !== undefined
    ? { availability: 'on_notice', decidedBy: `${prefix}${by} with VacateDate ${vacate}` }
    : { availability: 'leased', decidedBy: prefix + by };
}

function floorplanRef(ils: Element, unit: unknown): FloorplanRef | undefined {
  const attrId = attr(ils, 'FloorplanID') ?? attr(ils, 'FloorPlanID') ?? attr(ils, 'FloorplanId');
  if (attrId !== undefined) return { id: attrId, via: 'ILS_Unit@FloorplanID' };
  for (const [owner, where] of [
    [ils, 'ILS_Unit'],
    [unit, 'Unit'],
  ] as const) {
    const el = child(owner, 'FloorplanID') ?? child(owner, 'FloorPlanID');
    const id = attr(el, 'IDValue') ?? text(owner, 'FloorplanID') ?? text(owner, 'FloorPlanID');
    if (id !== undefined) return { id, via: `${where}/FloorplanID` };
    const ident = elements(owner, 'Identification').find((i) => /floor ?plan/i.test(attr(i, 'IDType') ?? ''));
    const identId = attr(ident, 'IDValue');
    if (identId !== undefined) return { id: identId, via: `${where}/Identification[@IDType=${attr(ident, 'IDType')}]` };
  }
  const name = text(unit, 'FloorplanName') ?? text(ils, 'FloorplanName');
  return name !== undefined ? { name, via: 'Unit/FloorplanName' } : undefined;
}
