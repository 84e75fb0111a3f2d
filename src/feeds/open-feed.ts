// Opens a feed from its config: the reader for its kind over its source.
import type { FeedSource } from './config-schema.js';
import type { FeedContext, OpenedFeed } from './types.js';

export function openFeed(feedName: string, source: FeedSource, ctx: FeedContext): OpenedFeed {
  void feedName; void source; void ctx;
  throw new Error('not implemented yet');
}
