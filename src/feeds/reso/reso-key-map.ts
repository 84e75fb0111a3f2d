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
// A listing key the source holds under several records (two records sharing the ListingId the reso
// preset keys by, issue 54 point 4): a full pull reads them all and the last in key order
// (position.id, the pull's $orderby) decides, the sync keeping the last record read of a key. So a
// read notes its pairs in that order and the copy's listing side names the deciding record. An
// incremental, event or push read that hands on a record of a listing key a lane's copy gives to
// another record asks the source for the key's records (one by-key query a batch, on the listing
// key's source fields but the record's own id: withKeyMap) and hands on, right after the record read,
// the key's last record in key order when that is another: the full pull's rule decides, and the
// sync's pending window keeps the later of the two, so the listing is written once, as a full pull
// would leave it. A key whose copy names the record read (the usual case) asks nothing.
// Memory and requests: no copy is loaded whole (Redis would send a million-entry hash every run):
// the pairs read are looked up in each lane's copy BATCH at a time (SourceState.lookup: view reads of
// the state file, a pipelined HGET each in Redis), and only what differs is kept until the commit.
import { byLane, withInnerState } from '../source-state.js';
import type { FeedContext, FeedItem, KeyLookup, ListingKeys, OpenedFeed, SourceState } from '../types.js';
import { overlayFeed } from '../feed-overlay.js';
import { inBatches } from '../item-batches.js';

const RECORD_KEYS = 'keys:record';
const LISTING_KEYS = 'keys:listing';
/** pairs looked up at a time */
const BATCH = 1000;

/** What a read changes in one lane's copies. */
interface LaneChanges {
  setRecord: Map<string, string>;
  setListing: Map<string, string>;
  dropRecord: Set<string>;
  dropListing: Set<string>;
}

/** The key map of one read: pairs noted as records are read, checked against each lane's copy a batch at a time, its changes handed back. */
export class KeyMap {
  readonly #lanes: LaneChanges[];
  #pending: Array<readonly [string, string]> = [];
  /** listing keys noted with a record other than the one a lane's copy (or this read) gives them: the source holds them under several records */
  #shared = new Set<string>();

  constructor(
    private readonly state: SourceState,
    private readonly ask: Pick<ListingKeys, 'keyOf'> & Partial<Pick<ListingKeys, 'keyFields'>>,
    readonly keyField: string,
  ) {
    this.#lanes = state.lanes.map(() => ({
      setRecord: new Map(),
      setListing: new Map(),
      dropRecord: new Set(),
      dropListing: new Set(),
    }));
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
  async noteRow(row: Record<string, unknown>, listing: string): Promise<void> {
    const record = this.#keyFieldOf(row);
    if (record !== undefined) await this.note(record, listing);
  }

  /** A record read with both keys: each lane's copy made to hold the pair (looked up a batch at a time; only what differs kept). */
  async note(record: string, listing: string): Promise<void> {
    this.#pending.push([record, listing]);
    if (this.#pending.length >= BATCH) await this.flush();
  }

  /** The pairs noted so far checked against each lane's copy. */
  async flush(): Promise<void> {
    const pairs = this.#pending;
    if (!pairs.length) return;
    this.#pending = [];
    const [records, listings] = await Promise.all([
      this.state.lookup(
        RECORD_KEYS,
        pairs.map(([r]) => r),
      ),
      this.state.lookup(
        LISTING_KEYS,
        pairs.map(([, l]) => l),
      ),
    ]);
    for (const [i, lane] of this.#lanes.entries()) {
      for (const [j, [record, listing]] of pairs.entries()) {
        const held = lane.setListing.get(listing) ?? (lane.dropListing.has(listing) ? undefined : listings[i]![j]);
        if (held !== undefined && held !== record) this.#shared.add(listing);
        lane.dropRecord.delete(record);
        lane.dropListing.delete(listing);
        if (records[i]![j] !== listing) lane.setRecord.set(record, listing);
        else lane.setRecord.delete(record);
        if (listings[i]![j] !== record) lane.setListing.set(listing, record);
        else lane.setListing.delete(listing);
      }
    }
  }

  /** The listing keys noted since the last call that a lane's copy (or this read) gives another record: flushed first. */
  async takeShared(): Promise<Set<string>> {
    await this.flush();
    const shared = this.#shared;
    this.#shared = new Set();
    return shared;
  }

  /** The source fields a listing key is read from other than the record's own id (idField): what a key's other records are asked by. */
  otherKeyFields(idField: string | undefined): string[] {
    return (this.ask.keyFields ?? []).filter((f) => f !== idField);
  }

  /** A record the source says is gone, its listing key resolved: the pair leaves each lane's copy (the listing's side only while it is that record's). */
  async forget(record: string, listing: string): Promise<void> {
    await this.flush();
    const back = await this.state.lookup(LISTING_KEYS, [listing]);
    for (const [i, lane] of this.#lanes.entries()) {
      lane.setRecord.delete(record);
      lane.dropRecord.add(record);
      if ((lane.setListing.get(listing) ?? back[i]![0]) === record) {
        lane.setListing.delete(listing);
        lane.dropListing.add(listing);
      }
    }
  }

  /** The listing key a lane's copy (with this read's changes) holds for a record key, both ways (undefined: no lane knows it). */
  async resolve(record: string): Promise<string | undefined> {
    await this.flush();
    const held = await this.state.lookup(RECORD_KEYS, [record]);
    for (const [i, lane] of this.#lanes.entries()) {
      const listing = lane.dropRecord.has(record) ? undefined : (lane.setRecord.get(record) ?? held[i]![0]);
      if (listing === undefined) continue;
      const back = lane.setListing.get(listing) ?? (await this.state.lookup(LISTING_KEYS, [listing]))[i]![0];
      if (back === record && !lane.dropListing.has(listing)) return listing;
    }
    return undefined;
  }

  /** Each lane's changes (OpenedFeed.state), by lane id: after the last flush. */
  changes(): NonNullable<OpenedFeed['state']> {
    return byLane(this.state.lanes, (i) => {
      const l = this.#lanes[i]!;
      return [
        { ns: RECORD_KEYS, set: [...l.setRecord], delete: [...l.dropRecord] },
        { ns: LISTING_KEYS, set: [...l.setListing], delete: [...l.dropListing] },
      ].filter((c) => c.set.length || c.delete.length);
    });
  }

  #keyFieldOf(data: Record<string, unknown>): string | undefined {
    const value = data[this.keyField];
    return typeof value === 'string' || typeof value === 'number' ? String(value) : undefined;
  }
}

/** The read's key map: none where the source keeps no state (a preview) or the sync gave no listing key (no ask). */
export function keyMapOf(ctx: FeedContext, keyField: string): KeyMap | undefined {
  const ask = ctx.keys;
  return ctx.state && ask ? new KeyMap(ctx.state, ask, keyField) : undefined;
}

/**
 * The feed with every record it hands on noted in `keys`, and each removal forgotten; its changes with
 * the inner feed's state. An incremental read's record of a listing key the source holds under
 * several records is followed by the key's deciding record, when that is another (see the header).
 */
export function withKeyMap(inner: OpenedFeed, keys: KeyMap | undefined): OpenedFeed {
  if (!keys) return inner;
  let done = false;
  async function* items(): AsyncIterable<FeedItem> {
    for await (const batch of inBatches(inner.items)) {
      for (const item of batch) await noteItem(keys!, item);
      const shared = inner.mode === 'incremental' && inner.lookup ? await keys!.takeShared() : undefined;
      if (!shared?.size) {
        yield* batch;
        continue;
      }
      const deciding = await decidingRecords(keys!, inner.lookup!, shared);
      for (const item of batch) {
        yield item;
        const last = item.kind === 'record' ? laterOf(keys!, item, deciding) : undefined;
        if (last === undefined) continue;
        await noteItem(keys!, last);
        yield last;
      }
      await keys!.takeShared(); // (the records handed on above share their keys: nothing more to ask)
    }
    await keys!.flush();
    done = true;
  }
  return overlayFeed(inner, {
    items: items(),
    get state() {
      return withInnerState(inner, done ? keys.changes() : undefined);
    },
  });
}

/** Each shared listing key's last record in key order (position.id), as the source holds them now: one by-key query on the key's other fields. */
async function decidingRecords(
  keys: KeyMap,
  lookup: KeyLookup,
  shared: ReadonlySet<string>,
): Promise<Map<string, FeedItem>> {
  const last = new Map<string, FeedItem>();
  const values = [...shared];
  const asks = keys.otherKeyFields(lookup.idField).map((field) => ({ field, values }));
  if (!asks.length) return last;
  for await (const found of lookup.find(asks)) {
    for (const item of found) {
      const listing = item.kind === 'record' ? keys.listingKeyOf(item.data) : undefined;
      const id = item.position.id;
      if (listing === undefined || id === undefined || !shared.has(listing)) continue;
      const had = last.get(listing)?.position.id;
      if (had === undefined || id > had) last.set(listing, item);
    }
  }
  return last;
}

/** The deciding record of the item's listing key, when it is another record later in key order than the item. */
function laterOf(
  keys: KeyMap,
  item: FeedItem & { kind: 'record' },
  deciding: ReadonlyMap<string, FeedItem>,
): FeedItem | undefined {
  const listing = keys.listingKeyOf(item.data);
  const last = listing === undefined ? undefined : deciding.get(listing);
  const id = item.position.id;
  return last?.position.id !== undefined && id !== undefined && last.position.id > id ? last : undefined;
}

async function noteItem(keys: KeyMap, item: FeedItem): Promise<void> {
  if (item.kind === 'error') return;
  const record = keys.recordKeyOf(item);
  const listing = item.kind === 'removed' ? (item.key ?? keys.listingKeyOf(item.data)) : keys.listingKeyOf(item.data);
  if (record === undefined || listing === undefined) return;
  if (item.kind === 'removed') await keys.forget(record, listing);
  else await keys.note(record, listing);
}
