// Records named by change events, fetched from the source by key: the EntityEvent poll's
// (reso-events.ts, RCP-027) and the webhook push's (reso-push.ts, RCP-028). An event is only a hint:
// each key is asked of the source (the confirmation's lookup, reso-confirm.ts: batched, typed by
// $metadata, within the budget and the feed's own filter; a key $metadata cannot type asked anyway,
// quoted, and a lookup the server refuses fails the read: every key is asked before any is taken for
// gone) and what the source answers is yielded like any record read. A key the source no longer returns (an empty answer to the by-key query, as the
// RCP allows) is gone: yielded `removed`, so the sync deletes it under the guards, where the
// listing key is read from the key field alone (keyNamesListing), or (the reso preset's
// ListingId-else-ListingKey) where the key map resolves it (reso-key-map.ts: the listing key the record
// was last read with, both ways agreeing). A key the map never saw names no listing: the by-key query
// above was its one chance (a soft delete, MlgCanView false, comes back with its ListingId), and a
// record hard-deleted has nothing left to say it: counted `unnamed`, warned, and left to the next
// reconcile, which deletes it as absent, confirmed.
import type { ResoSource } from '../config-schema.js';
import type { FeedContext, FeedItem, KeyLookup } from '../types.js';
import type { KeyMap } from './reso-key-map.js';
import type { EventStats } from './reso-sections.js';

export type { EventStats } from './reso-sections.js';

export interface FetchKeysAt {
  feedName: string;
  source: ResoSource;
  ctx: FeedContext;
  lookup: KeyLookup;
  /** the feed's URL as shown (the position of a gone key) */
  label: string;
  stats: EventStats;
  /** the read's own warnings */
  warnings: string[];
  /** what says the keys are gone, in the warning: "the EntityEvent log says are gone" */
  goneBy: string;
  /** the read's key map: a gone record key resolved to the listing key it was last read with (reso-key-map.ts) */
  keys?: KeyMap;
}

/** Each key's record as the source holds it now, then each key it no longer returns as `removed` (or counted `unnamed`). */
export async function* fetchKeys(keys: ReadonlySet<string>, at: FetchKeysAt): AsyncIterable<FeedItem> {
  const { source, stats } = at;
  const fetched = new Set<string>();
  let index = 0;
  if (keys.size) {
    for await (const batch of at.lookup.find([{ field: source.keyField, values: [...keys] }])) {
      for (const item of batch) {
        const key = item.data?.[source.keyField];
        if (key !== undefined && key !== null) fetched.add(String(key));
        stats.fetched++;
        index++;
        yield item;
      }
    }
  }
  const named = keyNamesListing(source, at.ctx);
  for (const key of keys) {
    if (fetched.has(key)) continue;
    stats.gone++;
    const listing = named ? undefined : await at.keys?.resolve(key);
    if (named || listing !== undefined)
      yield {
        kind: 'removed',
        position: { file: at.label, index: index++, id: key },
        data: { [source.keyField]: key },
        ...(listing !== undefined && { key: listing }),
      };
    else stats.unnamed = (stats.unnamed ?? 0) + 1;
  }
  if (stats.unnamed) warnUnnamed(stats.unnamed, at);
}

/**
 * Whether a key of the source (source.keyField) is the listing key: the listing key is read from that
 * field alone. Under the reso preset (MLSNumber from ListingId, else ListingKey) it is not: a record no
 * longer returned cannot say its ListingId, and a listing whose ListingId equals the ListingKey is
 * another record's. Without the sync's word (no FeedContext.keys: a preview), the key field is taken.
 */
function keyNamesListing(source: ResoSource, ctx: FeedContext): boolean {
  const fields = ctx.keys?.keyFields;
  return fields === undefined || (fields.length === 1 && fields[0] === source.keyField);
}

/** Keys the source says are gone that name no listing (the listing key is read from other fields, and the key map never saw them): left to the next reconcile, said once. */
function warnUnnamed(unnamed: number, at: FetchKeysAt): void {
  const fields = at.ctx.keys!.keyFields.join(', ');
  const warning = `${unnamed} key(s) ${at.goneBy} name no listing: the listing key is read from ${fields}, and only ${at.source.keyField} is known of a record no longer returned, which no read of this feed kept (a state from before the key map, filled by the next full pull or reconcile): left to the next reconcile (schedule.reconcileCron, sync --reconcile), which deletes them under the guards`;
  at.warnings.push(warning);
  at.ctx.logger.warn({ feed: at.feedName }, warning);
}
