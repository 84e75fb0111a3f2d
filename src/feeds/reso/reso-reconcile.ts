// A keys-only reconcile of a live RESO feed (issue 38): what a full pull learns about deletions, for
// a tenth of its bytes or less. The server is asked for every record the feed's filter selects with
// the key fields and ModificationTimestamp only (reso-reader.ts keysOnlyPages: `$select`, no
// `$expand`, the vendor's rules and its largest page). Then:
// - a key newer than the mark the sync hands in (FeedContext.mark: changed since the last sync), or,
//   with no mark, a key the chatbot does not hold, is fetched by key (the confirmation's lookup,
//   reso-confirm.ts: batched within the URL and `or` limits, typed by $metadata, bounded by
//   source.maxPages) and yielded like any record read, so its record decides (one now off the market
//   deletes its listing, as a pull's would: it is not `present`); one the server no longer returns is absent;
// - every other key is `present` (OpenedFeed.unread): the source holds it unchanged, so its listing stays as it is and
//   no record body is read for it;
// - a key the chatbot holds that is neither read nor present is absent: the sync confirms it with the
//   source (the existing confirmation) and deletes it under the guards, as after a full pull.
// Requests: ceil(keys / page size) for the keys, plus the fetches. With a stored mark, every change
// up to the keys read has then been applied, so the mark moves to their latest ModificationTimestamp
// (never past the server's clock when the read began, less a second, as a pull's); without one, none.
import { FeedReadError } from '../../errors.js';
import type { ResoSource } from '../config-schema.js';
import { displayUrl } from '../source/http.js';
import type { FeedContext, FeedItem, ListingKeys, OpenedFeed, SourceReadStats } from '../types.js';
import { vendorProfile } from '../vendors/registry.js';
import type { PageClient } from './reso-pages.js';
import { laterOf, TS, usableTimestamp } from './reso-query.js';
import { keysOnlyPages, openReso, readMark, type ResoOpenOptions } from './reso-reader.js';
import type { RequestTally } from './reso-requests.js';
import { reconcileSection, type ReconcileStats } from './reso-sections.js';

/** what a reconcile does without a usable mark (readMark's warning says it) */
const RECONCILE_WITHOUT_MARK =
  'the reconcile fetches only the keys the chatbot lacks (what changed in the others waits for an incremental or full pull)';

export function openResoReconcile(
  feedName: string,
  source: ResoSource,
  ctx: FeedContext,
  ask: ListingKeys,
  options: ResoOpenOptions = {},
): OpenedFeed {
  const label = displayUrl(source.url!);
  // (its items are never read: its lookup, on its client, fetches records by key)
  const base = openReso(feedName, source, ctx, options);
  const present = new Set<string>();
  let keysClient: PageClient | undefined;
  let reached: string | undefined;
  // (read when reported: the confirmation's requests and answers, after the read, are in the read's tally too)
  const tally = base.client!.tally;
  /** the keys-only pages read: the reconcile's pages (its fetches by key and the confirmation are requests, not pages) */
  let pages = 0;
  const counted: ReconcileStats = { keys: 0, fetched: 0 };
  const stats = reconcileStats(tally, counted, () => pages);

  async function* items(): AsyncIterable<FeedItem> {
    if (ask.keyFields.length === 0) {
      throw new FeedReadError(
        'a reconcile reads keys only, and the listing key is not mapped from plain source fields (or a one-field template), so a key row cannot name its listing',
        { file: label },
        false,
      );
    }
    const by = fetchField(source, label);
    const mark = readMark(ctx, feedName, stats.warnings, RECONCILE_WITHOUT_MARK);
    const since = mark === undefined ? undefined : Date.parse(mark.ts);
    /** value of `by` → listing key, of the keys to fetch */
    const wanted = new Map<string, string>();
    const now = Date.now();
    let latest: string | undefined;
    {
      const fields = [...new Set([source.keyField, by, ...ask.keyFields, TS])];
      for await (const rows of keysOnlyPages(source, ctx, fields, {
        ...options,
        scope: feedName,
        warnings: stats.warnings,
        tally,
        onClient: (c) => (keysClient = c),
      })) {
        pages++;
        for (const row of rows) {
          counted.keys++;
          const key = ask.keyOf(row);
          if (key === undefined) continue;
          present.add(key);
          await options.keys?.noteRow(row, key);
          const t = Date.parse(String(row[TS]));
          latest = laterOf(latest, usableTimestamp(row[TS], now));
          const changed = since === undefined ? !ask.holds(key) : !(t <= since);
          const value = row[by];
          // (a record without a value to be asked by stays as it is: present, never deleted)
          if (changed && (typeof value === 'string' || typeof value === 'number')) wanted.set(String(value), key);
        }
      }
      if (wanted.size) {
        for await (const batch of base.lookup!.find([{ field: by, values: [...wanted.keys()] }])) {
          for (const item of batch) {
            counted.fetched++;
            yield item;
          }
        }
      }
      // a key fetched is not `present`: its record decides, as a pull's would (one now off the market
      // deletes its listing); one not returned by key is gone since, absent like any key the server lacks
      for (const key of wanted.values()) present.delete(key);
    }
    if (mark && latest) reached = markReached(ctx.mark!, mark, latest, keysClient?.serverTime ?? now);
  }

  return {
    items: items(),
    mode: 'full',
    /** read whole, from a stored mark: the latest change applied */
    get mark() {
      return reached;
    },
    unread: present,
    ...(base.lookup && { lookup: base.lookup }),
    stats,
  };
}

/**
 * The stored mark moved to the latest change read, never past the server's clock when it answered,
 * less a second. Its other fields kept as stored (`stored`, the text readMark parsed): an EntityEvent
 * feed's sequence, so its next poll goes on from it rather than restarting the log at its newest
 * event (which would skip the hard deletes in between).
 */
function markReached(
  stored: string,
  mark: NonNullable<ReturnType<typeof readMark>>,
  latest: string,
  serverTime: number,
): string {
  const bound = new Date(serverTime - 1000).toISOString();
  const ts = laterOf(mark.ts, Date.parse(latest) > Date.parse(bound) ? bound : latest);
  return JSON.stringify({ ...(JSON.parse(stored) as object), ...mark, ts });
}

/**
 * A reconcile's stats, read when reported: its keys-only pages (its fetches by key and the
 * confirmation are requests, not pages), the read's tally (the confirmation's requests and answers,
 * after the read, among them), its section.
 */
function reconcileStats(tally: RequestTally, counted: ReconcileStats, pages: () => number): SourceReadStats {
  return {
    mode: 'reconcile',
    get pages() {
      return pages();
    },
    get requests() {
      return tally.total;
    },
    tally,
    get bytes() {
      return tally.bytes;
    },
    warnings: [],
    get sections() {
      return [reconcileSection(counted)];
    },
  };
}

/** The field records are fetched by: the key field where the vendor can filter on it, else the profile's confirmBy. */
function fetchField(source: ResoSource, label: string): string {
  const profile = vendorProfile(source.vendor);
  const searchable = (f: string) => !profile.searchable || profile.searchable.includes(f);
  if (searchable(source.keyField)) return source.keyField;
  if (profile.confirmBy && searchable(profile.confirmBy)) return profile.confirmBy;
  throw new FeedReadError(
    `a reconcile fetches changed records by key, and the ${profile.name} profile lets no filter name ${source.keyField}`,
    { file: label },
    false,
  );
}
