// Open houses (issue 40, point 2) as the reso preset maps them, against a fixed clock: the upcoming
// ones give Tours OpenHouse and the entry OpenHouses in the MLS's time zone; a cancelled one
// (OpenHouseStatus, MLS Grid's MlgCanView false) or one that has ended is left out.
import { describe, expect, it } from 'vitest';
import { compileMapping, MappingConfig } from '../../src/mapping/index.js';
import { mapItem } from '../../src/mapping/map-feed.js';
import { upcomingOpenHouses } from '../../src/mapping/open-houses.js';
import { RESO_BASE } from './reso-base.js';

const mapping = MappingConfig.parse({
  preset: 'reso',
  fields: { Url: { template: 'https://broker.test/l/{ListingId}' } },
});
const record = (OpenHouse: unknown[]) => ({
  ...RESO_BASE,
  OpenHouse,
});
// Saturday 2026-11-28 1–3 PM and Sunday 11 AM–1 PM in Chicago (UTC-6)
const sat = {
  OpenHouseKey: 'o1',
  OpenHouseStartTime: '2026-11-28T19:00:00Z',
  OpenHouseEndTime: '2026-11-28T21:00:00Z',
  OpenHouseStatus: 'Active',
};
const sun = {
  OpenHouseKey: 'o2',
  OpenHouseStartTime: '2026-11-29T17:00:00Z',
  OpenHouseEndTime: '2026-11-29T19:00:00Z',
};

function mapAt(
  iso: string,
  houses: unknown[],
  openHouses: { timeZone: string } | null = { timeZone: 'America/Chicago' },
) {
  const compiled = compileMapping(mapping, { now: () => new Date(iso), ...(openHouses && { openHouses }) });
  const item = mapItem({ kind: 'record', position: { file: 'f', index: 0 }, data: record(houses) }, compiled, {
    serialNumber: 'SN-1',
    keyBy: 'MLSNumber',
  });
  if (item.kind !== 'listing') throw new Error(`expected a listing, got ${JSON.stringify(item)}`);
  return { Tours: item.listing.Tours, entry: item.listing.ExtensionColumn?.find((e) => e.Key === 'OpenHouses')?.value };
}

describe('open houses', () => {
  it('the upcoming ones, soonest first, in the MLS time zone', () => {
    expect(mapAt('2026-11-27T12:00:00Z', [sun, sat])).toEqual({
      Tours: 'OpenHouse',
      entry: 'Sat, Nov 28, 1:00 PM – 3:00 PM; Sun, Nov 29, 11:00 AM – 1:00 PM',
    });
  });

  it('one that has ended is left out; when the last has ended there is no Tours and no entry', () => {
    expect(mapAt('2026-11-28T22:00:00Z', [sat, sun])).toEqual({
      Tours: 'OpenHouse',
      entry: 'Sun, Nov 29, 11:00 AM – 1:00 PM',
    });
    // one in progress is still shown
    expect(mapAt('2026-11-29T18:00:00Z', [sat, sun]).Tours).toBe('OpenHouse');
    expect(mapAt('2026-11-29T19:00:00Z', [sat, sun])).toEqual({ Tours: undefined, entry: undefined });
  });

  it('a cancelled one (OpenHouseStatus in either spelling, or MlgCanView false) goes', () => {
    expect(
      mapAt('2026-11-27T12:00:00Z', [
        { ...sat, OpenHouseStatus: 'Cancelled' },
        { ...sun, MlgCanView: false },
      ]),
    ).toEqual({ Tours: undefined, entry: undefined });
    expect(
      upcomingOpenHouses([{ ...sat, OpenHouseStatus: 'Canceled' }, sun], new Date('2026-11-27T12:00:00Z')).length,
    ).toBe(1);
    // junk times are no open house
    expect(upcomingOpenHouses([{ OpenHouseStartTime: 'soon' }, null, 'x'], new Date('2026-11-27T12:00:00Z'))).toEqual(
      [],
    );
  });

  it('without the option (a source that does not expand OpenHouse) nothing is read', () => {
    expect(mapAt('2026-11-27T12:00:00Z', [sat], null)).toEqual({ Tours: undefined, entry: undefined });
  });

  it('an unknown time zone fails when the mapping is compiled', () => {
    expect(() => compileMapping(mapping, { openHouses: { timeZone: 'Mars/Olympus' } })).toThrow(/time zone/i);
  });
});
