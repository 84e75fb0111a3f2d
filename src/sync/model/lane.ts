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
