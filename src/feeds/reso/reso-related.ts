// What a RESO source's related resources add to its records' mapping: its open houses, expanded
// into the Property (`expandOpenHouse`) or replicated from the OpenHouse resource and joined to it
// (`related: [OpenHouse]`, reso-open-houses.ts), mapped in the source's time zone
// (src/mapping/open-houses.ts).
import type { FeedSource } from '../config-schema.js';

/** Where a source's open houses come from, if it has them. */
export function openHouseSource(source: FeedSource): 'expand' | 'related' | undefined {
  if (source.kind !== 'reso') return undefined;
  return source.expandOpenHouse ? 'expand' : source.related.includes('OpenHouse') ? 'related' : undefined;
}

/** The mapping's open-house option for a source: set when it has open houses. */
export function openHouseMapping(source: FeedSource): { timeZone: string } | undefined {
  return source.kind === 'reso' && openHouseSource(source) ? { timeZone: source.timeZone } : undefined;
}

/** What a source adds to its records' mapping (compileMapping's options; part of a record stamp's identity): its open houses' time zone. */
export function sourceMapping(source: FeedSource): { openHouses?: { timeZone: string } } {
  const openHouses = openHouseMapping(source);
  return openHouses ? { openHouses } : {};
}
