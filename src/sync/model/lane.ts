// A lane is one feed writing into one chatbot (read/lanes.ts makes them from the config): the unit
// every step of a run works on, so its shape is the kernel's.
import type { FeedConfig } from '../../config/schema.js';
import type { RecordRoute } from '../../mapping/where.js';

export interface Lane {
  /** the name the lane's state goes under (fingerprints, stamps, missing marks, feed mark) */
  id: string;
  feed: FeedConfig;
  chatbot: string;
  /** whether a source record goes this way; undefined: every record */
  route?: RecordRoute;
}

/** A routed feed's lane into `chatbot` (a feed with one chatbot has one lane, named after the feed). */
export const laneId = (feed: string, chatbot: string) => `${feed}>${chatbot}`;

/** The feed a lane id belongs to: laneId's inverse for a routed lane, the id itself for a feed's one lane (feed names hold no `>`: config/schema.ts). */
export const feedOfLane = (id: string): string => id.split('>', 1)[0]!;
