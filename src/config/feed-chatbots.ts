// The chatbots a feed writes into: its `chatbot`, or each of its `chatbots` (routing, sync/read/lanes.ts).
import type { FeedConfig } from './schema.js';

export function chatbotsOf(feed: Pick<FeedConfig, 'chatbot' | 'chatbots'>): string[] {
  return feed.chatbots ? feed.chatbots.map((c) => c.serialNumber) : feed.chatbot !== undefined ? [feed.chatbot] : [];
}
