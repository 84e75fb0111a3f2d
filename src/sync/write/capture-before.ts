// The listing as it was, kept for undo: just before a run updates or deletes a listing, the listing
// is read back from the service (RealEstateList filtered by its MLSNumber: one call, every field the
// list returns, whole) and completed with the fields the list does not return as the last write sent
// them (the sync state keeps them beside the fingerprint). Packed (deflated) into the change log.
// Bounded: at most `maxBytes` packed a run; past it nothing more is read back (no extra calls) and
// each later change says its listing was not kept, so `feedsync undo` can say what it cannot restore.
import type { ChatbotApi } from '../../api/types.js';
import { causeMessage } from '../../errors.js';
import { fingerprintListing } from '../../listing/fingerprint.js';
import type { ListingCreate } from '../../listing/schema.js';
import { listingFromListItem, packListing, type UnlistedValues } from '../../listing/whole.js';
import type { KvStore } from '../../state/kv-store.js';
import type { KeyBy } from '../plan/plan-types.js';
import { remoteKey } from '../remote/remote-rows.js';
import { fingerprintNamespace, unlistedNamespace } from '../settle/state.js';

/** What a change carries of the listing before it: packed whole, or why it was not kept. */
export type Captured = { before: string } | { beforeMissing: string };

export interface BeforeCapture {
  /**
   * The listing `key` (the copy `remoteId`, when known) as the service holds it now. `mlsNumber`
   * finds it when the feed is keyed by URL; `now` is the listing about to be written, whose unlisted
   * fields stand in when none were remembered and the stored fingerprint confirms them.
   */
  take(key: string, remoteId: number | undefined, mlsNumber: string | undefined, now?: ListingCreate): Promise<Captured>;
  /** bytes packed so far */
  readonly bytes: number;
}

export interface CaptureOptions {
  api: ChatbotApi;
  store: KvStore;
  feed: string;
  serialNumber: string;
  keyBy: KeyBy;
  /** the feed's `ignore`: the stored fingerprint leaves those fields out */
  ignore: ReadonlySet<string>;
  maxBytes: number;
  signal?: AbortSignal;
}

const spent = (max: number) => `not kept: the run's whole listings passed changeLog.maxWholeBytesPerRun (${max} bytes)`;

const AREA_UNITS: ReadonlyArray<ListingCreate['AreaUnit'] | undefined> = [undefined, 'Square Feet', 'Square Meters'];

export function createBeforeCapture(opts: CaptureOptions): BeforeCapture {
  let bytes = 0;
  const take = async (key: string, remoteId: number | undefined, mlsNumber: string | undefined, now?: ListingCreate): Promise<Captured> => {
    if (bytes >= opts.maxBytes) return { beforeMissing: spent(opts.maxBytes) };
    const mls = opts.keyBy === 'MLSNumber' ? key : mlsNumber;
    if (!mls) return { beforeMissing: 'not kept: no MLSNumber to read the listing back by' };
    let items;
    try {
      items = (await opts.api.listListings({ SerialNumber: opts.serialNumber, MLSNumber: mls, PageSize: 100 }, { ...(opts.signal && { signal: opts.signal }) })).List;
    } catch (err) {
      return { beforeMissing: `not kept: reading it back failed: ${causeMessage(err)}` };
    }
    const item = items.find((i) => (remoteId ? i.ID === remoteId : remoteKey(i, opts.keyBy) === key)) ?? items.find((i) => remoteKey(i, opts.keyBy) === key);
    if (!item) return { beforeMissing: 'not kept: the service did not list it when read back' };
    const unlisted = await unlistedFor(key, item, now);
    if (!unlisted) return { beforeMissing: 'not kept: its Location/AreaUnit as last written are not known (written before this version kept them)' };
    const packed = packListing(listingFromListItem(item, opts.serialNumber, unlisted));
    // (several reads are in flight at once: the budget is taken when a listing is packed, never past it)
    if (bytes + packed.length > opts.maxBytes) {
      bytes = opts.maxBytes;
      return { beforeMissing: spent(opts.maxBytes) };
    }
    bytes += packed.length;
    return { before: packed };
  };

  /** the remembered unlisted fields, else the ones the stored fingerprint confirms */
  const unlistedFor = async (key: string, item: Parameters<typeof listingFromListItem>[0], now?: ListingCreate): Promise<UnlistedValues | undefined> => {
    const kept = await opts.store.get(unlistedNamespace(opts.feed), key);
    if (kept !== undefined) return JSON.parse(kept) as UnlistedValues;
    const stored = await opts.store.get(fingerprintNamespace(opts.feed), key);
    if (stored === undefined) return undefined;
    for (const Location of new Set([now?.Location, undefined])) {
      for (const AreaUnit of AREA_UNITS) {
        const guess: UnlistedValues = { ...(Location !== undefined && { Location }), ...(AreaUnit !== undefined && { AreaUnit }) };
        if (fingerprintListing(listingFromListItem(item, opts.serialNumber, guess), opts.ignore) === stored) return guess;
      }
    }
    return undefined;
  };

  return {
    take,
    get bytes() {
      return bytes;
    },
  };
}
