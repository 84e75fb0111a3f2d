// How a feed's read finds a record's lanes (src/sync/read/read-feed.ts routesOf): by an index of the
// lanes' `where` values (mapping/where.ts routeIndex) and of their chatbots' keys, not by asking
// every lane about every record. Held to the plain rule by a property test: a lane takes a record
// when its route (if any) takes it, anything else always; the lanes a record concerns are every
// lane that takes it or whose chatbot holds its key (a copy moved away), in lane order.
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import type { FeedItem } from '../../src/feeds/types.js';
import type { KeyedItem } from '../../src/mapping/types.js';
import { compileWhere, type Where } from '../../src/mapping/where.js';
import { routesOf, type ReadingLane } from '../../src/sync/read/read-feed.js';

const office = fc.constantFrom('Main', 'main', 'North', 'north-side', 'South', 7, '7');
const key = fc.constantFrom('A', 'B', 'C', 'D', 'E');
const where: fc.Arbitrary<Where | undefined> = fc.option(
  fc.dictionary(fc.constantFrom('Office', 'Agent'), fc.array(office, { maxLength: 3 }), { maxKeys: 2 }),
  { nil: undefined },
);
const lane = fc.record({ where, holds: fc.uniqueArray(key, { maxLength: 4 }) });
const item: fc.Arbitrary<KeyedItem> = fc.oneof(
  fc
    .record({ Office: office, Agent: office, key: fc.option(key, { nil: undefined }) })
    .map(({ key, ...data }) => ({ kind: 'record', position: { file: 'feed.csv', index: 0 }, data, key }) as KeyedItem),
  key.map((k) => ({ kind: 'removed', position: { file: 'feed.csv', index: 0 }, data: {}, key: k }) as KeyedItem),
);

/** A lane as the read sees it: its route, and its chatbot's keys (nothing else is asked of it here). */
function readingLane(w: Where | undefined, holds: readonly string[], i: number): ReadingLane {
  const route = compileWhere(w);
  const keys = new Set(holds);
  return {
    lane: { id: `feed>SN-${i}`, feed: {} as never, chatbot: `SN-${i}`, ...(route && { route }) },
    planner: {} as never,
    executor: {} as never,
    remote: { has: (k) => keys.has(k), keys: () => keys.keys() },
  };
}

const plainTakes = (l: ReadingLane, it: FeedItem) => it.kind !== 'record' || !l.lane.route || l.lane.route(it.data);

describe('routesOf', () => {
  it('takes and finds the lanes the plain rule does: the route of each lane, and its chatbot holding the key', () => {
    fc.assert(
      fc.property(fc.array(lane, { minLength: 1, maxLength: 7 }), fc.array(item, { maxLength: 12 }), (ls, items) => {
        const lanes = ls.map((l, i) => readingLane(l.where, l.holds, i));
        const routes = routesOf(lanes);
        for (const it of items) {
          for (const l of lanes) expect(routes.takes(l, it)).toBe(plainTakes(l, it));
          const concerned = lanes.filter(
            (l) => plainTakes(l, it) || (it.kind === 'record' && it.key !== undefined && l.remote.has(it.key)),
          );
          const found = routes.lanesFor(it);
          expect(found.filter((l) => concerned.includes(l))).toEqual(concerned);
          // (more only as every lane, for a feed of one lane, an item other than a record, or no routes)
          if (found.some((x) => !concerned.includes(x))) {
            expect(found).toEqual(lanes);
            expect(lanes.length === 1 || it.kind !== 'record' || !lanes.some((x) => x.lane.route)).toBe(true);
          }
        }
      }),
      { numRuns: 300 },
    );
  });
});
