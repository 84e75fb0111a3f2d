// Open houses of a listing (issue 40): the OpenHouse records a RESO server expands into the Property
// (`$expand=OpenHouse`, source.expandOpenHouse), or that the reader joins to it from the OpenHouse
// resource (`source.related: [OpenHouse]`, feeds/reso/reso-open-houses.ts), become `Tours: OpenHouse` and an ExtensionColumn entry
// (Key OpenHouses) with the next ones' dates and times in the MLS's time zone. One that is cancelled
// (OpenHouseStatus Cancelled/Canceled/Ended, or MLS Grid's MlgCanView false) or has ended by the
// run's clock is left out; with none left the listing has no Tours and no entry. What a record
// maps to depends on the clock: the reader hands on only the open houses shown at the run's clock
// (so a record whose open house ended is another record to its stamp, record-stamp.ts), and asks
// again for a listing whose stored open house has ended although its record did not change.
import type { ExtensionEntry } from '../listing/schema.js';

/** the Key of the ExtensionColumn entry */
export const OPEN_HOUSES_KEY = 'OpenHouses';
/** open houses named in the entry, the soonest first */
export const OPEN_HOUSES_SHOWN = 3;

const GONE = new Set(['cancelled', 'canceled', 'ended', 'deleted']);

export interface OpenHouse {
  start: Date;
  end: Date;
}

/** An OpenHouse record's times when it is shown at `now`: not cancelled, not ended, times that parse. The one rule, for the mapping and the reader (reso-open-houses.ts). */
export function shownOpenHouse(o: unknown, now: Date): OpenHouse | undefined {
  if (o === null || typeof o !== 'object') return undefined;
  const r = o as Record<string, unknown>;
  if (r.MlgCanView === false) return undefined;
  if (typeof r.OpenHouseStatus === 'string' && GONE.has(r.OpenHouseStatus.toLowerCase())) return undefined;
  const start = typeof r.OpenHouseStartTime === 'string' ? new Date(r.OpenHouseStartTime) : undefined;
  const end = typeof r.OpenHouseEndTime === 'string' ? new Date(r.OpenHouseEndTime) : start;
  if (!start || !end || Number.isNaN(start.getTime()) || Number.isNaN(end.getTime())) return undefined;
  return end.getTime() <= now.getTime() ? undefined : { start, end };
}

/** The upcoming, not cancelled open houses of a record's `OpenHouse` list, the soonest first. */
export function upcomingOpenHouses(list: unknown, now: Date): OpenHouse[] {
  if (!Array.isArray(list)) return [];
  const out: OpenHouse[] = [];
  for (const o of list) {
    const shown = shownOpenHouse(o, now);
    if (shown) out.push(shown);
  }
  return out.sort((a, b) => a.start.getTime() - b.start.getTime());
}

/** "Sat, Nov 28, 1:00 PM – 3:00 PM; Sun, Nov 29, 11:00 AM – 1:00 PM" in the time zone given. */
export function describeOpenHouses(houses: readonly OpenHouse[], timeZone: string): string {
  const day = new Intl.DateTimeFormat('en-US', { timeZone, weekday: 'short', month: 'short', day: 'numeric' });
  const time = new Intl.DateTimeFormat('en-US', { timeZone, hour: 'numeric', minute: '2-digit' });
  return houses
    .slice(0, OPEN_HOUSES_SHOWN)
    .map((h) => `${day.format(h.start)}, ${time.format(h.start)} – ${time.format(h.end)}`)
    .join('; ');
}

/** Sets Tours and the entry on a mapped listing from its record's open houses (none: neither). */
export function compileOpenHouses(
  path: string,
  timeZone: string,
  now: () => Date,
): (record: Record<string, unknown>, out: Record<string, unknown>) => void {
  // fails at compile time on a time zone Intl does not know, not on the first record
  describeOpenHouses([], timeZone);
  new Intl.DateTimeFormat('en-US', { timeZone });
  return (record, out) => {
    const houses = upcomingOpenHouses(record[path], now());
    if (!houses.length) return;
    out.Tours = 'OpenHouse';
    const entry: ExtensionEntry = { Key: OPEN_HOUSES_KEY, value: describeOpenHouses(houses, timeZone) };
    out.ExtensionColumn = [...((out.ExtensionColumn as unknown[] | undefined) ?? []), entry];
  };
}
