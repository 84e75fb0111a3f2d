// The listing as it was, kept for undo: when a run updates or deletes a listing, the listing as the
// same run's paging read it (the RealEstateList item, every field the list returns, whole: read again
// from its page's answer, which paging keeps with the change log on — remote.ts; no call is made)
// completed with the fields the list does not return as the last write sent them (the sync state
// keeps them beside the fingerprint). Packed (deflated) into the change log.
// Bounded: at most `maxBytes` packed a run; past it each later change says its listing was not
// kept, so `feedsync undo` can say what it cannot restore.
import { causeMessage } from '../../errors.js';
import { fingerprintListing } from '../../listing/fingerprint.js';
import type { ListingCreate, ListItem } from '../../listing/schema.js';
import type { WithheldField } from '../../mapping/display-rules.js';
import { listingFromListItem, packListing, type UnlistedValues } from '../../listing/whole.js';
import type { KvStore } from '../../state/kv-store.js';
import type { KeyBy } from '../model/plan-types.js';
import { fingerprintNamespace, unlistedNamespace } from '../model/state-names.js';

/** What a change carries of the listing before it: packed whole, or why it was not kept. */
export type Captured = { before: string } | { beforeMissing: string };

export interface BeforeCapture {
  /**
   * The listing `key` (the copy `remoteId`, when known) as this run's paging read it. `now` is the
   * listing about to be written, whose unlisted fields stand in when none were remembered and the
   * stored fingerprint confirms them. `withheld`: fields the display rules withhold from it now (its
   * address), left out of what is kept.
   */
  take(
    key: string,
    remoteId: number | undefined,
    now?: ListingCreate,
    withheld?: readonly WithheldField[],
  ): Promise<Captured>;
  /** bytes packed so far */
  readonly bytes: number;
}

/** The chatbot's listings as the run paged them (RemoteIndex.item). */
export interface PagedItems {
  /** the copy of `key` with ID `id` (else its first copy), every field the list returned; undefined when not paged */
  item(key: string, id?: number): ListItem | undefined;
}

export interface CaptureOptions {
  /** the run's paging of the chatbot (kept whole: fetchRemote with keepCompared) */
  paged: PagedItems;
  store: KvStore;
  feed: string;
  serialNumber: string;
  keyBy: KeyBy;
  /** the feed's `ignore`: the stored fingerprint leaves those fields out */
  ignore: ReadonlySet<string>;
  maxBytes: number;
}

const spent = (max: number) => `not kept: the run's whole listings passed changeLog.maxWholeBytesPerRun (${max} bytes)`;

const AREA_UNITS: ReadonlyArray<ListingCreate['AreaUnit'] | undefined> = [undefined, 'Square Feet', 'Square Meters'];

export function createBeforeCapture(opts: CaptureOptions): BeforeCapture {
  let bytes = 0;
  const take = async (
    key: string,
    remoteId: number | undefined,
    now?: ListingCreate,
    withheld?: readonly WithheldField[],
  ): Promise<Captured> => {
    if (bytes >= opts.maxBytes) return { beforeMissing: spent(opts.maxBytes) };
    let item;
    try {
      item = opts.paged.item(key, remoteId);
    } catch (err) {
      return { beforeMissing: `not kept: reading it from its page failed: ${causeMessage(err)}` };
    }
    if (!item) return { beforeMissing: "not kept: not among the listings this run's paging read" };
    const unlisted = await unlistedFor(key, item, now);
    if (!unlisted)
      return {
        beforeMissing:
          'not kept: its Location/AreaUnit as last written are not known (written before this version kept them)',
      };
    const packed = packListing(withoutFields(listingFromListItem(item, opts.serialNumber, unlisted), withheld));
    // (several takes are in flight at once: the budget is taken when a listing is packed, never past it)
    if (bytes + packed.length > opts.maxBytes) {
      bytes = opts.maxBytes;
      return { beforeMissing: spent(opts.maxBytes) };
    }
    bytes += packed.length;
    return { before: packed };
  };

  /** the remembered unlisted fields, else the ones the stored fingerprint confirms */
  const unlistedFor = async (
    key: string,
    item: Parameters<typeof listingFromListItem>[0],
    now?: ListingCreate,
  ): Promise<UnlistedValues | undefined> => {
    const kept = await opts.store.get(unlistedNamespace(opts.feed), key);
    if (kept !== undefined) return JSON.parse(kept) as UnlistedValues;
    const stored = await opts.store.get(fingerprintNamespace(opts.feed), key);
    if (stored === undefined) return undefined;
    for (const Location of new Set([now?.Location, undefined])) {
      for (const AreaUnit of AREA_UNITS) {
        const guess: UnlistedValues = {
          ...(Location !== undefined && { Location }),
          ...(AreaUnit !== undefined && { AreaUnit }),
        };
        if (fingerprintListing(listingFromListItem(item, opts.serialNumber, guess), opts.ignore) === stored)
          return guess;
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

/** The listing without the fields the display rules withhold from it now. */
export function withoutFields(listing: ListingCreate, fields: readonly WithheldField[] | undefined): ListingCreate {
  if (!fields?.length) return listing;
  const out = { ...listing };
  for (const f of fields) delete out[f];
  return out;
}
