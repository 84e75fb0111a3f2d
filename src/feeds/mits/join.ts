// One MITS <Property> → its records: one per ILS_Unit (each carrying its property's and its
// floorplan's fields), or one per Floorplan (recordPer: floorplan). Units are joined to floorplans
// inside their property only, by the floorplan id the unit names (else its FloorplanName, else the
// property's only floorplan); every record says how it was joined (`join`, shown by feed preview).
import { text, elements, type Element } from './elements.js';
import { floorplanId, readFloorplan, readProperty, type Fields } from './parts.js';
import { readUnit, type Availability, type UnitParts } from './unit.js';

export type RecordPer = 'unit' | 'floorplan';

export interface JoinedRecord {
  data: Fields;
  ids: Record<string, string>;
  /** how the record was put together, in words */
  join: string;
}

/** Most photos a record carries (the chatbot service takes at most 200 a listing). */
export const MAX_PHOTOS = 200;

interface Plan {
  fields: Fields;
  photosDropped: number;
}

export function joinProperty(p: Element, per: RecordPer): JoinedRecord[] {
  const property = readProperty(p);
  const pid = property.fields.ID as string | undefined;
  const plans = elements(p, 'Floorplan').map((fp) => ({ el: fp, ...readFloorplan(fp) }));
  const byId = new Map<string, Plan>();
  const byName = new Map<string, Plan>();
  for (const plan of plans) {
    const id = floorplanId(plan.el);
    if (id !== undefined && !byId.has(id)) byId.set(id, plan);
    const name = plan.fields.Name as string | undefined;
    if (name !== undefined && !byName.has(name.toLowerCase())) byName.set(name.toLowerCase(), plan);
  }
  const units = elements(p, 'ILS_Unit').map((u) => {
    const parts = readUnit(u);
    return { parts, ...findPlan(parts, plans.length === 1 ? plans[0] : undefined, byId, byName, plans.length) };
  });
  const where = `property ${pid ?? '(no ID)'}${property.fields.MarketingName ? ` "${String(property.fields.MarketingName)}"` : ''}`;
  if (per === 'floorplan') return plans.map((plan) => floorplanRecord(pid, where, property, plan, units));
  return units.map(({ parts, plan, how }) => unitRecord(pid, where, property, parts, plan, how));
}

function findPlan(
  unit: UnitParts,
  only: Plan | undefined,
  byId: Map<string, Plan>,
  byName: Map<string, Plan>,
  count: number,
): { plan: Plan | undefined; how: string } {
  const ref = unit.floorplan;
  if (ref?.id !== undefined) {
    const plan = byId.get(ref.id);
    return plan
      ? { plan, how: `floorplan ${ref.id} by ${ref.via}` }
      : {
          plan,
          how: `floorplan ${ref.id} (${ref.via}) is not among the property's ${count} floorplan(s): no floorplan fields`,
        };
  }
  if (ref?.name !== undefined) {
    const plan = byName.get(ref.name.toLowerCase());
    return plan
      ? { plan, how: `floorplan "${ref.name}" by ${ref.via}` }
      : { plan, how: `no floorplan of the property is named "${ref.name}" (${ref.via}): no floorplan fields` };
  }
  if (only)
    return {
      plan: only,
      how: `the property's only floorplan (${String(only.fields.ID ?? only.fields.Name ?? '?')}; the unit names none)`,
    };
  return { plan: undefined, how: `names no floorplan and the property has ${count}: no floorplan fields` };
}

function unitRecord(
  pid: string | undefined,
  where: string,
  property: ReturnType<typeof readProperty>,
  unit: UnitParts,
  plan: Plan | undefined,
  how: string,
): JoinedRecord {
  const uid = unit.fields.ID as string | undefined;
  const date =
    unit.availability === 'on_notice'
      ? (unit.fields.VacateDate ?? unit.fields.MadeReadyDate)
      : (unit.fields.MadeReadyDate ?? unit.fields.VacateDate);
  const photos = joinPhotos([unit.fields.Photos, plan?.fields.Photos, property.fields.Photos]);
  const dropped = unit.photosDropped + (plan?.photosDropped ?? 0) + property.photosDropped;
  const data: Fields = {};
  if (pid !== undefined && uid !== undefined) data.Key = `${pid}-${uid}`;
  data.Availability = unit.availability;
  if (date !== undefined) data.AvailableDate = date;
  if (photos.length) data.Photos = photos;
  data.Property = property.fields;
  if (plan) data.Floorplan = plan.fields;
  data.Unit = unit.fields;
  const ids: Record<string, string> = {};
  if (pid !== undefined) ids.PropertyID = pid;
  if (uid !== undefined) ids.UnitID = uid;
  const parts = [
    `${where}, unit ${uid ?? '(no ID)'}`,
    how,
    `${unit.availability} (${unit.decidedBy})`,
    ...(dropped ? [`${dropped} photo(s) without an http(s) Src left out`] : []),
    ...(pid === undefined || uid === undefined ? ['no Key: the property or the unit has no ID'] : []),
  ];
  return { data, ids, join: parts.join('; ') };
}

interface JoinedUnit {
  parts: UnitParts;
  plan: Plan | undefined;
}

/** A floorplan's availability: by its units when the property lists any, else by its own UnitsAvailable (set into `fields`). */
function planAvailability(
  plan: Plan & { el: Element },
  fields: Fields,
  hasUnits: boolean,
  mine: number,
  open: number,
): { availability: Availability; how: string } {
  if (hasUnits) {
    fields.UnitsAvailable = String(open);
    return { availability: open ? 'available' : 'leased', how: `${open} of its ${mine} unit(s) available` };
  }
  const stated = text(plan.el, 'UnitsAvailable');
  if (stated === undefined)
    return { availability: 'available', how: 'the property lists no units: listed by the feed' };
  fields.UnitsAvailable = stated;
  return {
    availability: Number(stated) === 0 ? 'leased' : 'available',
    how: `the property lists no units; Floorplan/UnitsAvailable ${stated}`,
  };
}

/** MarketRentMin/Max from the open units' rents where the floorplan states none, and RentRange from them. */
function rentRange(fields: Fields, open: JoinedUnit[]): void {
  const rents = open
    .map((u) => Number(u.parts.fields.UnitRent ?? u.parts.fields.MarketRent))
    .filter((n) => Number.isFinite(n) && n > 0);
  if (fields.MarketRentMin === undefined && rents.length) fields.MarketRentMin = String(Math.min(...rents));
  if (fields.MarketRentMax === undefined && rents.length) fields.MarketRentMax = String(Math.max(...rents));
  if (fields.MarketRentMin !== undefined)
    fields.RentRange =
      fields.MarketRentMax !== undefined && fields.MarketRentMax !== fields.MarketRentMin
        ? `${String(fields.MarketRentMin)}-${String(fields.MarketRentMax)}`
        : String(fields.MarketRentMin);
}

function floorplanRecord(
  pid: string | undefined,
  where: string,
  property: ReturnType<typeof readProperty>,
  plan: Plan & { el: Element },
  units: JoinedUnit[],
): JoinedRecord {
  const fid = plan.fields.ID as string | undefined;
  const mine = units.filter((u) => u.plan === plan);
  const open = mine.filter((u) => u.parts.availability !== 'leased');
  const fields: Fields = { ...plan.fields };
  const { availability, how } = planAvailability(plan, fields, units.length > 0, mine.length, open.length);
  rentRange(fields, open);
  const dates = open
    .map(
      (u) =>
        (u.parts.availability === 'on_notice'
          ? u.parts.fields.VacateDate
          : (u.parts.fields.MadeReadyDate ?? u.parts.fields.VacateDate)) as string | undefined,
    )
    .filter((d): d is string => d !== undefined);
  const photos = joinPhotos([plan.fields.Photos, property.fields.Photos]);
  const data: Fields = {
    ...(pid !== undefined && fid !== undefined && { Key: `${pid}-${fid}` }),
    Availability: availability,
    ...(dates.length && { AvailableDate: dates.sort()[0] }),
    ...(photos.length && { Photos: photos }),
    Property: property.fields,
    Floorplan: fields,
  };
  const ids: Record<string, string> = {};
  if (pid !== undefined) ids.PropertyID = pid;
  if (fid !== undefined) ids.FloorplanID = fid;
  const join = [
    `${where}, floorplan ${fid ?? '(no ID)'}`,
    `${availability} (${how})`,
    ...(pid === undefined || fid === undefined ? ['no Key: the property or the floorplan has no ID'] : []),
  ];
  return { data, ids, join: join.join('; ') };
}

/** The unit's photos, then its floorplan's, then its property's: each once, at most MAX_PHOTOS. */
function joinPhotos(lists: unknown[]): string[] {
  const seen = new Set<string>();
  for (const list of lists) {
    if (!Array.isArray(list)) continue;
    for (const url of list) {
      if (seen.size >= MAX_PHOTOS) break;
      if (typeof url === 'string') seen.add(url);
    }
  }
  return [...seen];
}
