// A lane is one feed writing into one chatbot (docs/design.md, "Lanes"): the unit that is planned,
// written, guarded, committed and reported. A feed with `chatbot:` has one lane, named after the
// feed (its state keeps the names it always had); a routed feed (`chatbots:`) has one lane per
// chatbot, named `feed>serialNumber`, which takes the records its `where` selects.
import type { FeedConfig } from '../../config/schema.js';
import { compileWhere } from '../../mapping/where.js';
import type { ChatbotFeed } from '../model/state-names.js';
import { laneId, type Lane } from '../model/lane.js';

export { laneId, type Lane } from '../model/lane.js';

/** The feed's lanes, in config order. */
export function lanesOf(feed: FeedConfig): Lane[] {
  if (feed.chatbots === undefined) return [{ id: feed.name, feed, chatbot: feed.chatbot! }];
  return feed.chatbots.map((c) => {
    const route = compileWhere(c.where);
    return { id: laneId(feed.name, c.serialNumber), feed, chatbot: c.serialNumber, ...(route && { route }) };
  });
}

export { chatbotsOf } from '../../config/feed-chatbots.js';

/** Every lane of the config into `chatbot`: the writers whose listings a lane's deletes leave alone. */
export function writersOf(
  feeds: ReadonlyArray<Pick<FeedConfig, 'name' | 'keyBy' | 'chatbot' | 'chatbots'>>,
  chatbot: string,
): ChatbotFeed[] {
  return feeds.flatMap((f) => {
    if (f.chatbots === undefined) return f.chatbot === chatbot ? [{ name: f.name, keyBy: f.keyBy }] : [];
    return f.chatbots.some((c) => c.serialNumber === chatbot)
      ? [{ name: laneId(f.name, chatbot), keyBy: f.keyBy }]
      : [];
  });
}
