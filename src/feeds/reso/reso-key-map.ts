// Keys known both ways (issue 53): the source's record key (source.keyField, ListingKey: the RESO
// primary key, what an EntityEvent or a push names) beside the listing key (what the mapping reads,
// under the reso preset ListingId else ListingKey) of every record a read returns, kept as the
// source's own state (FeedContext.state), a copy per lane, in two namespaces:
//   keys:record   record key → listing key   (what a gone key is resolved by)
//   keys:listing  listing key → record key   (the check: the listing is still that record's)
// A record no longer returned cannot say its ListingId; the copy can. A pair is taken only when both
// directions agree, so a listing key another record took since (a ListingId reused) is never
// resolved to the old record's delete. Filled by every read that hands records on (full, incremental,
// event, push: each record; a keys-only reconcile: each key row) and emptied of a key the source says
// is gone. A store written before this (no key map) is filled by its next full pull or reconcile.
// Memory: nothing is loaded into the heap by the map itself: the copies are the store's views (the
// state file's are read in place, a lookup per record), and only what differs is kept until the commit.
import { byLane, withInnerState } from '../source-state.js';
import type { FeedContext, FeedItem, OpenedFeed, ReconcileAsk, SourceState } from '../types.js';
import { overlayFeed } from '../feed-overlay.js';

const RECORD_KEYS = 'keys:record';
const LISTING_KEYS = 'keys:listing';

/** One lane's copies and what this read changes in them. */
interface LaneKeys {
  record: ReadonlyMap<string, string>;
  listing: ReadonlyMap<string, string>;
  setRecord: Map<string, string>;
  setListing: Map<string, string>;
  dropRecord: Set<string>;
  dropListing: Set<string>;
}

/** The key map of one read: loaded from each lane's copy, noted as records are read, its changes handed back. */
export class KeyMap {
  #lanes: LaneKeys[] | undefined;
  #loading: Promise<void> | undefined;

  constructor(
    private readonly state: SourceState,
    private readonly ask: Pick<ReconcileAsk, 'keyOf'>,
    readonly keyField: string,
  ) {}

  /** Each lane's copies, read once (views of the store: nothing copied). */
  load(): Promise<void> {
    this.#loading ??= Promise.all([this.state.copies(RECORD_KEYS), this.state.copies(LISTING_KEYS)]).then(
      ([record, listing]) => {
        this.#lanes = this.state.lanes.map((_, i) => ({
          record: record[i]!,
          listing: listing[i]!,
          setRecord: new Map(),
          setListing: new Map(),
          dropRecord: new Set(),
          dropListing: new Set(),
        }));
      },
    );
    return this.#loading;
  }

  /** The listing key of a record's fields (the mapping's), undefined when it names none. */
  listingKeyOf(data: Record<string, unknown>): string | undefined {
    return this.ask.keyOf(data);
  }

  /** The record key of an item: the reader's id, else its key field. */
  recordKeyOf(item: FeedItem): string | undefined {
    return item.position.id ?? (item.data && this.#keyFieldOf(item.data));
  }

  /** A reconcile's key row (the key field among its fields), its listing key read: noted. */
  noteRow(row: Record<string, unknown>, listing: string): void {
    const record = this.#keyFieldOf(row);
    if (record !== undefined) this.note(record, listing);
  }

  #keyFieldOf(data: Record<string, unknown>): string | undefined {
    const value = data[this.keyField];
    return typeof value === 'string' || typeof value === 'number' ? String(value) : undefined;
  }

  /** A record read with both keys: each lane's copy made to hold the pair (only what differs is kept). */
  note(record: string, listing: string): void {
    for (const lane of this.#loaded()) {
      lane.dropRecord.delete(record);
      lane.dropListing.delete(listing);
      if (lane.record.get(record) !== listing) lane.setRecord.set(record, listing);
      else lane.setRecord.delete(record);
      if (lane.listing.get(listing) !== record) lane.setListing.set(listing, record);
      else lane.setListing.delete(listing);
    }
  }

  /** A record the source says is gone, its listing key resolved: the pair leaves each lane's copy. */
  forget(record: string, listing: string): void {
    for (const lane of this.#loaded()) {
      lane.setRecord.delete(record);
      lane.setListing.delete(listing);
      if (lane.record.has(record)) lane.dropRecord.add(record);
      if (lane.listing.get(listing) === record) lane.dropListing.add(listing);
    }
  }

  /** The listing key a lane's copy holds for a record key, both ways (undefined: no lane knows it). */
  async resolve(record: string): Promise<string | undefined> {
    await this.load();
    for (const lane of this.#loaded()) {
      const listing = lane.setRecord.get(record) ?? lane.record.get(record);
      if (listing === undefined) continue;
      const back = lane.setListing.get(listing) ?? lane.listing.get(listing);
      if (back === record) return listing;
    }
    return undefined;
  }

  /** Each lane's changes (OpenedFeed.state), by lane id. */
  changes(): NonNullable<OpenedFeed['state']> {
    const lanes = this.#lanes ?? [];
    return byLane(this.state.lanes, (i) => {
      const l = lanes[i];
      if (!l) return [];
      return [
        { ns: RECORD_KEYS, set: [...l.setRecord], delete: [...l.dropRecord] },
        { ns: LISTING_KEYS, set: [...l.setListing], delete: [...l.dropListing] },
      ].filter((c) => c.set.length || c.delete.length);
    });
  }

  #loaded(): LaneKeys[] {
    if (!this.#lanes) throw new Error('KeyMap used before load(): a reader noted a key before its items began');
    return this.#lanes;
  }
}

/** The read's key map: none where the source keeps no state (a preview) or the sync gave no listing key (no ask). */
export function keyMapOf(ctx: FeedContext, keyField: string): KeyMap | undefined {
  const ask = ctx.reconcile ?? ctx.reconcileFallback;
  return ctx.state && ask ? new KeyMap(ctx.state, ask, keyField) : undefined;
}

/** The feed with every record it hands on noted in `keys`, and each removal forgotten; its changes with the inner feed's state. */
export function withKeyMap(inner: OpenedFeed, keys: KeyMap | undefined): OpenedFeed {
  if (!keys) return inner;
  let done = false;
  async function* items(): AsyncIterable<FeedItem> {
    await keys!.load();
    for await (const item of inner.items) {
      noteItem(keys!, item);
      yield item;
    }
    done = true;
  }
  return overlayFeed(inner, {
    items: items(),
    get state() {
      return withInnerState(inner, done ? keys.changes() : undefined);
    },
  });
}

function noteItem(keys: KeyMap, item: FeedItem): void {
  if (item.kind === 'error') return;
  const record = keys.recordKeyOf(item);
  const listing = item.kind === 'removed' ? (item.key ?? keys.listingKeyOf(item.data)) : keys.listingKeyOf(item.data);
  if (record === undefined || listing === undefined) return;
  if (item.kind === 'removed') keys.forget(record, listing);
  else keys.note(record, listing);
}
