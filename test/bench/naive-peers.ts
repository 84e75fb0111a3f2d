// What a user would otherwise write, for the sync benchmark to run beside feedsync on the same
// emulator and the same feed: the feed is read and mapped by the same reader and mapping (so only
// the way of syncing differs), calls go through the same API client, with the same concurrency.
//   upsertPeer:   per record, list by MLSNumber, then update (found) or create (not found). It
//                 cannot see what the feed no longer has: removed listings stay on the chatbot.
//   recreatePeer: page the chatbot's listings, delete them all (batches of 100), create every
//                 listing of the feed again.
import pLimit from 'p-limit';
import type { ChatbotApi } from '../../src/api/index.js';
import type { FeedConfig } from '../../src/config/schema.js';
import { openFeed } from '../../src/feeds/index.js';
import type { ListingCreate } from '../../src/listing/schema.js';
import { silentLogger } from '../../src/log.js';
import { compileMapping, mapFeed } from '../../src/mapping/index.js';

export interface PeerCounts {
  created: number;
  updated: number;
  deleted: number;
}

/** The feed's valid listings, `size` at a time (bounded memory: a peer never holds the whole feed). */
export async function* listingBatches(feed: FeedConfig, baseDir: string, size: number): AsyncIterable<ListingCreate[]> {
  const opened = openFeed(feed.name, feed.source, { baseDir, logger: silentLogger });
  let batch: ListingCreate[] = [];
  for await (const item of mapFeed(opened.items, compileMapping(feed.mapping), {
    serialNumber: feed.chatbot!,
    keyBy: 'MLSNumber',
  })) {
    if (item.kind !== 'listing') continue;
    batch.push(item.listing);
    if (batch.length === size) {
      yield batch;
      batch = [];
    }
  }
  if (batch.length) yield batch;
}

export async function upsertPeer(
  api: ChatbotApi,
  feed: FeedConfig,
  baseDir: string,
  concurrency: number,
): Promise<PeerCounts> {
  const limit = pLimit(concurrency);
  const counts: PeerCounts = { created: 0, updated: 0, deleted: 0 };
  for await (const batch of listingBatches(feed, baseDir, 1000)) {
    await Promise.all(
      batch.map((listing) =>
        limit(async () => {
          const found = await api.listListings({
            SerialNumber: listing.SerialNumber,
            MLSNumber: listing.MLSNumber,
            PageSize: 1,
          });
          if (found.List.length > 0) {
            await api.updateListing({ ...listing, Key: listing.MLSNumber, KeyType: 'MLSNumber' });
            counts.updated++;
          } else {
            await api.createListing(listing);
            counts.created++;
          }
        }),
      ),
    );
  }
  return counts;
}

export async function recreatePeer(
  api: ChatbotApi,
  feed: FeedConfig,
  baseDir: string,
  concurrency: number,
  pageSize: number,
): Promise<PeerCounts> {
  const limit = pLimit(concurrency);
  const counts: PeerCounts = { created: 0, updated: 0, deleted: 0 };
  const keys: string[] = [];
  for (let page = 1; ; page++) {
    const { List } = await api.listListings({ SerialNumber: feed.chatbot!, PageNumber: page, PageSize: pageSize });
    for (const item of List) if (item.MLSNumber) keys.push(item.MLSNumber);
    if (List.length < pageSize) break;
  }
  const batches: string[][] = [];
  for (let i = 0; i < keys.length; i += 100) batches.push(keys.slice(i, i + 100));
  await Promise.all(
    batches.map((Keys) =>
      limit(async () => {
        const { SuccessCount } = await api.deleteListings({ SerialNumber: feed.chatbot!, Keys, KeyType: 'MLSNumber' });
        counts.deleted += SuccessCount;
      }),
    ),
  );
  for await (const batch of listingBatches(feed, baseDir, 1000)) {
    await Promise.all(
      batch.map((listing) =>
        limit(async () => {
          await api.createListing(listing);
          counts.created++;
        }),
      ),
    );
  }
  return counts;
}
