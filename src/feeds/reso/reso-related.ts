// What a RESO source's related resources add to its records' mapping: with `expandOpenHouse` the
// Property records carry their OpenHouse list, mapped in the source's time zone
// (src/mapping/open-houses.ts).
import type { FeedSource } from '../config-schema.js';

/** The mapping's open-house option for a source: set when it expands OpenHouse. */
export function openHouseMapping(source: FeedSource): { timeZone: string } | undefined {
  return source.kind === 'reso' && source.expandOpenHouse ? { timeZone: source.timeZone } : undefined;
}
