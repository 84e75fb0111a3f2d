// The feed side of a sync, gathered one mapped item at a time: counts, rejected records, the keys
// seen (to know what the feed no longer has), without holding the listings themselves, which go
// on to be planned and written as they are read. A rejected record goes to `onRejected` (the change
// log) as it is read; the side keeps only the first KEPT_REJECTED for the report, and counts the
// rest (`counts.rejected`): a feed of a million rejected records holds what a feed of a million
// valid ones does (their keys), not a million reasons. A key met twice is reported, and the later
// record wins.
//
// "Read whole" (the condition for any delete) is decided here, whatever reader produced the items.
// The feed is NOT read whole when:
//   - the reader stopped with an error (FeedReadError, 401, truncated document) or was aborted;
//   - a record could not be parsed and its key could not be read (its listing might be any);
//   - a record could not be parsed and the reader does not vouch that it stood alone (a row cut
//     short, rows run together: other records may be hidden in it);
//   - a record was rejected by validation and its key could not be read;
//   - the reader listed one record (its own id, e.g. RESO ListingKey) twice in one pull: the
//     source shifted while it was read, so others may have been skipped.
// A key that could be read from a broken or rejected record keeps its remote listing (protected).
//
// What the feed's display rules did is counted here too (side.display: the records each rule hid,
// addresses withheld, records held back), a hidden record's key goes with its rule's reason
// (`rule:<name>`), and the sold windows of the Closed listings shown are noted to be stored
// (side.soldUntil; settle/sold-window.ts).
import { AbortedError, FeedReadError, formatIssue, formatPlace } from '../../errors.js';
import type { MappedItem } from '../../mapping/types.js';
import { countDisplay } from '../../mapping/display-tally.js';
import {
  ruleReason,
  withheldOf,
  type DesiredListing,
  type DesiredSide,
  type Position,
  type RejectedRecord,
} from '../model/plan-types.js';
import type { CollectorOptions, FeedCollector, FeedSide } from '../model/feed-side.js';

export type { CollectorOptions, FeedCollector, FeedSide } from '../model/feed-side.js';

/** How many reasons for "not read whole" the report names (the count says how many there were). */
const SHOWN_REASONS = 3;
/** Rejected records the side keeps for the report (a stored report keeps 50, a printed one fewer); counts.rejected has them all. */
export const KEPT_REJECTED = 100;

export function createFeedCollector(mode: DesiredSide['mode'], options: CollectorOptions = {}): FeedCollector {
  const side = emptySide(mode);
  const notWhole = notWholeReasons(side);
  const keys = keyBook(side, options, notWhole.add);
  return {
    side,
    addRemembered(entry) {
      keys.record(entry.position, entry.key);
      keys.valid(entry.key);
    },
    add(item) {
      keys.record(item.position, item.key);
      const desired = item.kind === 'listing' ? keys.listing(item) : sideOnly(item, side, keys, notWhole.add);
      side.counts.valid = side.listings.size;
      return desired;
    },
    movedAway(key) {
      if (!side.listings.has(key) && !side.protectedKeys.has(key)) side.goneKeys.set(key, 'moved');
    },
    fail: notWhole.stopped,
  };
}

function emptySide(mode: DesiredSide['mode']): FeedSide {
  return {
    listings: new Set(),
    protectedKeys: new Set(),
    goneKeys: new Map(),
    rejected: [],
    feedDuplicates: [],
    mode,
    complete: true,
    counts: { records: 0, valid: 0, rejected: 0, skipped: 0, removed: 0 },
    display: { hidden: {}, addressWithheld: 0, held: 0 },
    soldUntil: { set: new Map(), clear: new Set() },
  };
}

/** Why the feed is not read whole: the side marked incomplete, the first reasons named, the rest counted. */
function notWholeReasons(side: FeedSide) {
  const reasons: string[] = [];
  let unread = 0;
  return {
    add(reason: string): void {
      side.complete = false;
      unread++;
      if (reasons.length < SHOWN_REASONS) reasons.push(reason);
      side.readError = reasons.join('; ') + (unread > reasons.length ? `; and ${unread - reasons.length} more` : '');
    },
    /** the feed stopped: a FeedReadError or an abort marks it incomplete, anything else is thrown */
    stopped(err: unknown): void {
      if (!(err instanceof FeedReadError) && !(err instanceof AbortedError)) throw err;
      // the reader's own error leads: it is why the read stopped
      reasons.unshift(err.message);
      unread++;
      side.complete = false;
      side.readError =
        reasons.slice(0, SHOWN_REASONS).join('; ') +
        (unread > SHOWN_REASONS ? `; and ${unread - SHOWN_REASONS} more` : '');
      side.readErrorRetryable = err instanceof FeedReadError && err.retryable;
      if (err instanceof FeedReadError && err.status !== undefined) side.readStatus = err.status;
      if (err instanceof FeedReadError && err.refused) side.refused = err.message;
      if (err instanceof FeedReadError && err.retryAt) side.readErrorRetryAt = err.retryAt.toISOString();
    },
  };
}

type KeyBook = ReturnType<typeof keyBook>;

/** The side's keys: each record counted and checked for repeats, a key kept as valid, protected, rejected or given a sold window. */
function keyBook(side: FeedSide, options: CollectorOptions, incomplete: (reason: string) => void) {
  const ids = new Set<string>();
  const forget = (key: string) =>
    side.listings.delete(key) || side.protectedKeys.delete(key) || side.goneKeys.delete(key);
  const valid = (key: string) => {
    side.listings.add(key);
    side.counts.valid = side.listings.size;
  };
  /** a key's sold window as its last record says: `until` for a Closed listing shown, none for anything else mapped */
  const window = (key: string, until: string | undefined) => {
    const { set, clear } = side.soldUntil;
    if (until !== undefined) {
      set.set(key, until);
      clear.delete(key);
    } else if (set.delete(key) || options.soldUntil?.has(key)) clear.add(key);
  };
  return {
    valid,
    window,
    /** every record, whatever became of it: counted, its reader id and its key checked for repeats */
    record(position: Position, key: string | undefined): void {
      side.counts.records++;
      const id = position.id;
      let laterVersion = false;
      if (id !== undefined) {
        if (!ids.has(id)) ids.add(id);
        else if (options.repeatIsShift?.() ?? true)
          incomplete(`${where(position)}: record ${id} came twice in one pull (the source shifted while it was read)`);
        else laterVersion = true;
      }
      if (key !== undefined && forget(key) && !laterVersion) side.feedDuplicates.push({ key, position });
    },
    listing(item: MappedItem & { kind: 'listing' }): DesiredListing {
      valid(item.key);
      countDisplay(side.display, item);
      window(item.key, item.shown?.until);
      return { key: item.key, listing: item.listing, position: item.position, ...withheldOf(item) };
    },
    reject(r: RejectedRecord): void {
      side.counts.rejected++;
      if (side.rejected.length < KEPT_REJECTED) side.rejected.push(r);
      options.onRejected?.(r);
      if (r.key !== undefined) side.protectedKeys.add(r.key);
    },
  };
}

/** An item that is no listing to plan: it counts on the side, and may leave the feed not read whole. */
function sideOnly(
  item: Exclude<MappedItem, { kind: 'listing' }>,
  side: FeedSide,
  keys: KeyBook,
  incomplete: (reason: string) => void,
): undefined {
  const key = item.key;
  countDisplay(side.display, item);
  switch (item.kind) {
    case 'rejected':
      keys.reject({
        position: item.position,
        ...(key !== undefined && { key }),
        reasons: item.issues.map(formatIssue),
      });
      if (key === undefined) incomplete(`${where(item.position)}: a record was rejected and its key could not be read`);
      break;
    case 'error': {
      const reason = withoutPlace(item.error.message, formatPlace(item.error.place));
      keys.reject({ position: item.position, ...(key !== undefined && { key }), reasons: [reason] });
      if (key === undefined)
        incomplete(`${where(item.position)}: a record could not be read and its key is unknown (${reason})`);
      else if (!item.standalone)
        incomplete(`${where(item.position)}: record ${key} could not be read whole (${reason})`);
      break;
    }
    case 'skipped':
      side.counts.skipped++;
      if (key !== undefined) side.goneKeys.set(key, item.rule ? ruleReason(item.rule) : 'off-market');
      if (key !== undefined) keys.window(key, undefined);
      break;
    case 'removed':
      side.counts.removed++;
      if (key !== undefined) side.goneKeys.set(key, 'removed');
      if (key !== undefined) keys.window(key, undefined);
      break;
  }
  return undefined;
}

function where(p: Position): string {
  return p.line !== undefined ? `${p.file}:${p.line}` : `${p.file} record ${p.index}`;
}

/** The report prints the record's place beside its reasons: drop the copy the message starts with. */
function withoutPlace(message: string, place: string): string {
  return message.startsWith(`${place}: `) ? message.slice(place.length + 2) : message;
}
