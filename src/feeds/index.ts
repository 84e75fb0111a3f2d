export type { FeedContext, FeedItem, OpenedFeed, RecordPosition } from './types.js';
export { FeedSource } from './config-schema.js';
export { openFeed } from './open-feed.js';
