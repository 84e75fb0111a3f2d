// Open houses of a RESO feed (issue 40), on every kind of run: full, incremental, EntityEvent.
//
// Where they come from: expanded into each Property (`source.expandOpenHouse`, Trestle), or, for
// servers without that `$expand` (MLS Grid, Bridge, Spark), the OpenHouse resource replicated apart
// (`source.related: [OpenHouse]`): pulled incrementally by ModificationTimestamp from its own mark
// (`oh` in the feed's mark), with the vendor's rules (MLS Grid: the OriginatingSystemName term on
// every request, `MlgCanView eq true` on the first pull, `gt` from the mark), through the feed's
// page client, so in the source's one budget and tally (requestsBy `OpenHouse`). A no-change pull
// is one request.
//
// What is kept (open-house-book.ts): per listing, by its source key (ListingKey), its open houses
// shown at the run's clock (not cancelled by status or MlgCanView, not ended), in the source's state
// (namespace openhouse, a copy per lane of the feed). The reader asks the sync for the copies
// (FeedContext.state) and hands back each lane's copy made what the run ends with (OpenedFeed.state),
// which the sync commits with that lane's mark, after its writes; a lane whose run failed
// keeps its copy, so its listings that differ from it are fetched again next run.
//
// Each record read carries, as `OpenHouse`, the open houses shown at the run's clock: the joined
// ones, or its expanded list without the cancelled and ended. So a record whose open house ended is
// another record to its stamp, and is mapped again. A listing whose open houses changed with no
// Property change — one added, changed or cancelled in the OpenHouse resource, or a stored one that
// ended by the clock (the window: the end of each stored open house) — and whose record this run did
// not read (incremental and EntityEvent runs) is fetched by key (the confirmation's lookup,
// reso-confirm.ts: batched, in the budget; by ListingId where the vendor cannot filter ListingKey)
// and handed on like any record read. A full pull reads every record, so it fetches none.
import { FeedReadError } from '../../errors.js';
import { joinedLookup, overlayFeed } from '../feed-overlay.js';
import type { ResoSource } from '../config-schema.js';
import { displayUrl } from '../source/http.js';
import { byLane, changesTo, withInnerState } from '../source-state.js';
import type { FeedContext, FeedItem, KeyAsk, OpenedFeed } from '../types.js';
import { vendorProfile } from '../vendors/registry.js';
import { openHouseBook, type OpenHouseBook } from './open-house-book.js';
import { resoPageClient, type PageClient } from './reso-pages.js';
import type { RequestTally } from './reso-requests.js';
import { warnUnusableMark } from './stored-mark.js';
import {
  keyFilters,
  laterOf,
  nextLinkUrl,
  pullQuery,
  queryUrl,
  sinceFilter,
  TS,
  usableTimestamp,
} from './reso-query.js';
import { openHouseSource } from './reso-related.js';

export const OPEN_HOUSE_RESOURCE = 'OpenHouse';
/** The source state namespace of a lane's copy of the open houses shown (FeedContext.state): listing key → its entry. */
const OPEN_HOUSE_STATE = 'openhouse';

/** The feed with its open houses joined, kept and refreshed; `inner` as it was when the source has none. */
export function withOpenHouses(
  feedName: string,
  source: ResoSource,
  ctx: FeedContext,
  inner: OpenedFeed,
  tally: RequestTally,
): OpenedFeed {
  const from = openHouseSource(source);
  if (!from) return inner;
  // (a reconcile pulls no open houses: the records it fetches by key get the lanes' copies' open houses)
  if (ctx.ask?.name === 'reconcile') return withStoredOpenHouses(feedName, inner, ctx, from);
  // (its own page client: the feed's budget, the read's tally; a replay has no OpenHouse resource to ask)
  // (a pushed-events job pulls nothing but the records pushed: it keeps no mark to pull from)
  const client =
    from === 'related' && source.url && ctx.ask?.name !== 'pushed'
      ? resoPageClient(source, ctx, { tally, scope: feedName, kind: 'OpenHouse' })
      : undefined;
  const related = client !== undefined;
  let book: OpenHouseBook | undefined;
  let copies: ReadonlyArray<ReadonlyMap<string, string>> = [];
  const read = new Set<string>();
  let learned: OpenedFeed['state'];
  let reached: string | undefined;
  let done = false;

  async function* items(): AsyncIterable<FeedItem> {
    const now = ctx.now?.() ?? new Date();
    copies = ctx.state ? await ctx.state.copies(OPEN_HOUSE_STATE) : [];
    book = openHouseBook(copies, now);
    const since = related && !ctx.full ? sinceUsable(feedName, ctx, book, inner.stats?.warnings) : undefined;
    if (!related && !ctx.full) warnUnreadableKept(feedName, ctx, book, { inner, from: from!, stored: false });
    if (related) {
      const pulled = await pullOpenHouses(client!, source, since);
      book.apply(pulled.records, since === undefined, source.keyField);
      reached = pulled.mark;
    }
    for await (const item of inner.items) {
      yield join(item, book, from!, read);
    }
    if (inner.mode === 'incremental' && inner.lookup) {
      const asks = asksFor(
        source,
        book.changed().filter((k) => !read.has(k)),
        book,
      );
      if (asks.length) {
        ctx.logger.debug(
          { feed: feedName, keys: asks.reduce((n, a) => n + a.values.length, 0) },
          'listings whose open houses changed, fetched by key',
        );
        for await (const batch of inner.lookup.find(asks)) {
          for (const item of batch) yield join(item, book, from!, read);
        }
      }
    }
    done = true;
  }

  return overlayFeed(inner, {
    items: items(),
    // a record fetched by key over this layer (the sync's confirmation) gets its open houses too
    lookup: joinedLookup(inner.lookup, async (item) => join(item, book ?? (await storedBook(ctx)), from, read)),
    get mark() {
      const m = inner.mark;
      if (m === undefined || !related || reached === undefined) return m;
      return JSON.stringify({ ...(JSON.parse(m) as object), oh: reached });
    },
    get state() {
      // each lane's copy made what the read ended with (worked out once: the sync asks lane by lane)
      if (done && book && ctx.state && !learned) {
        const final = book.final();
        learned = byLane(ctx.state.lanes, (i) => changesTo(OPEN_HOUSE_STATE, copies[i], final));
      }
      return withInnerState(inner, learned);
    },
  });
}

/** The lanes' copies of the open houses shown, as a book at the run's clock (none: an empty one). */
async function storedBook(ctx: FeedContext): Promise<OpenHouseBook> {
  const copies = ctx.state ? await ctx.state.copies(OPEN_HOUSE_STATE) : [];
  return openHouseBook(copies, ctx.now?.() ?? new Date());
}

/**
 * A reconcile's feed: no open houses pulled, its records (those fetched by key) joined to the lanes'
 * copies; nothing handed back. Joined, a listing whose kept entry does not parse is written without
 * open houses, said (stored-mark.ts); expanded, its record's own are read.
 */
function withStoredOpenHouses(
  feedName: string,
  inner: OpenedFeed,
  ctx: FeedContext,
  from: 'expand' | 'related',
): OpenedFeed {
  let book: Promise<OpenHouseBook> | undefined;
  const read = new Set<string>();
  const stored = async () => {
    const kept = await storedBook(ctx);
    warnUnreadableKept(feedName, ctx, kept, { inner, from, stored: true });
    return kept;
  };
  const joined = async (item: FeedItem) => join(item, await (book ??= stored()), from, read);
  async function* items(): AsyncIterable<FeedItem> {
    for await (const item of inner.items) yield await joined(item);
  }
  return overlayFeed(inner, { items: items(), lookup: joinedLookup(inner.lookup, joined) });
}

/** A record with its open houses as the run's clock shows them (joined, or its expanded list cleaned), learned by the book. */
function join(item: FeedItem, book: OpenHouseBook, from: 'expand' | 'related', read: Set<string>): FeedItem {
  const key = item.position.id;
  if (key === undefined) return item;
  read.add(key);
  if (item.kind === 'removed') book.forget(key);
  if (item.kind !== 'record') return item;
  const id = item.data.ListingId;
  const listingId = typeof id === 'string' || typeof id === 'number' ? String(id) : undefined;
  const shown = from === 'related' ? book.shown(key, listingId) : book.learn(key, item.data.OpenHouse, listingId);
  return { ...item, data: { ...item.data, OpenHouse: shown } };
}

/** The fetch of listings by key: by ListingId where the vendor cannot filter the key field and the book knows it. */
function asksFor(source: ResoSource, keys: readonly string[], book: OpenHouseBook): KeyAsk[] {
  const profile = vendorProfile(source.vendor);
  const by = profile.confirmBy;
  if (!keys.length) return [];
  if (!by || keyFilters(profile, source.keyField, [], source) !== undefined)
    return [{ field: source.keyField, values: [...keys] }];
  const ids = keys.map((k) => book.listingId(k));
  const asks: KeyAsk[] = [{ field: by, values: ids.filter((v): v is string => v !== undefined) }];
  const rest = keys.filter((_, i) => ids[i] === undefined);
  if (rest.length) asks.push({ field: source.keyField, values: rest });
  return asks.filter((a) => a.values.length);
}

/** Where the OpenHouse pull starts: the stored mark, unless it or a listing's kept open houses cannot be used (said: stored-mark.ts). */
function sinceUsable(
  feedName: string,
  ctx: FeedContext,
  kept: OpenHouseBook,
  warnings: string[] | undefined,
): string | undefined {
  const stored = storedSince(ctx.mark);
  const why = stored.why ?? unreadableKept(kept);
  if (why === undefined) return stored.since;
  warnUnusableMark(ctx, feedName, warnings, {
    which: stored.why ? 'open houses mark (oh)' : KEPT,
    why,
    instead: 'every OpenHouse record is pulled (a full pull of the open houses)',
  });
  return undefined;
}

const KEPT = 'open houses (kept by listing)';

/**
 * A listing's kept entry that does not parse, on a read that pulls no OpenHouse record (open houses
 * expanded into each Property; a reconcile's or a pushed job's, joined): said (stored-mark.ts), with
 * what follows. Joined, the listings the read writes get no open houses (their entries are not
 * known) until a run pulls the OpenHouse records. Expanded, each listing's own are read from its
 * record: a pull's read again — by the pull, or fetched by key after it (a listing whose entry
 * differs from what the run ends with is) — or, on a read that fetches nothing by key, its open
 * houses dropped from the store until its record is read; a reconcile hands no store back, so it
 * drops none (nothing to say).
 */
function warnUnreadableKept(
  feedName: string,
  ctx: FeedContext,
  kept: OpenHouseBook,
  read: { inner: OpenedFeed; from: 'expand' | 'related'; stored: boolean },
): void {
  const why = unreadableKept(kept);
  if (why === undefined || (read.from === 'expand' && read.stored)) return;
  warnUnusableMark(ctx, feedName, read.inner.stats?.warnings, {
    which: KEPT,
    why,
    instead:
      read.from === 'related'
        ? 'the listings this read writes get no open houses, until a run pulls every OpenHouse record'
        : read.inner.lookup
          ? 'their open houses are read again from their records: those the pull does not read are fetched by key after it'
          : 'their open houses are dropped from the store: they are read again when their records are',
  });
}

/** Why the lanes' kept open houses cannot all be used: the listings whose entry does not parse (the first three named). */
function unreadableKept(kept: OpenHouseBook): string | undefined {
  const unreadable = kept.unreadable();
  if (!unreadable.length) return undefined;
  const listed = `${unreadable.slice(0, 3).join(', ')}${unreadable.length > 3 ? ', …' : ''}`;
  return `the kept open houses of ${unreadable.length} listing(s) do not parse, ${listed}`;
}

/** The open houses' mark stored in the feed's mark (`oh`); `why` one stored cannot be used (none stored yet is not a fault). */
function storedSince(mark: string | undefined): { since?: string; why?: string } {
  if (mark === undefined) return {};
  let oh: unknown;
  try {
    oh = (JSON.parse(mark) as { oh?: unknown } | null)?.oh;
  } catch {
    // (said once, as the feed's mark: by the roster's layer, or reso-reader.ts readMark; the open houses are pulled whole)
    return {};
  }
  if (oh === undefined) return {};
  const since = usableTimestamp(oh, Date.now());
  return since === undefined ? { why: `\`oh\` is ${JSON.stringify(oh)}, not a timestamp before now` } : { since };
}

/**
 * The OpenHouse records changed since `since` (all of them, when undefined), paged by the server's
 * nextLink on the feed's origin, at most source.maxPages pages; and the mark they reach: their latest
 * ModificationTimestamp, never after the server's clock when the read began, less a second.
 */
async function pullOpenHouses(client: PageClient, source: ResoSource, since: string | undefined) {
  const profile = vendorProfile(source.vendor);
  const oh: ResoSource = {
    ...source,
    resource: OPEN_HOUSE_RESOURCE,
    filter: undefined,
    select: undefined,
    expandMedia: false,
    expandOpenHouse: false,
    keyField: 'OpenHouseKey',
  };
  const sinceTerm =
    since === undefined ? undefined : sinceFilter({ ts: since }, null, profile.since, profile.sinceLagMinutes);
  let url: string | undefined = queryUrl(
    source.url!,
    OPEN_HOUSE_RESOURCE,
    pullQuery(oh, profile, { full: since === undefined, since: sinceTerm }),
  );
  const origin = new URL(source.url!).origin;
  const bound = Math.min(client.serverTime ?? Date.now(), Date.now()) - 1000;
  const records: Array<Record<string, unknown>> = [];
  let mark = since;
  for (let n = 1; url; n++) {
    const where: { file: string; record: string } = { file: displayUrl(url), record: `OpenHouse page ${n}` };
    if (n > source.maxPages)
      throw new FeedReadError(
        `the OpenHouse resource has more than source.maxPages (${source.maxPages}) pages to read`,
        where,
        false,
      );
    const page = await client.get(url, where.record, 'OpenHouse');
    for (const v of page.value) {
      if (v === null || typeof v !== 'object' || Array.isArray(v)) continue;
      const r = v as Record<string, unknown>;
      records.push(r);
      mark = laterOf(mark, usableTimestamp(r[TS], bound));
    }
    const next = page['@odata.nextLink'];
    url = next ? nextLinkUrl(next, url, origin, where) : undefined;
  }
  // an empty first pull: anything added after it was modified after the server's clock at its start
  mark ??= new Date(bound).toISOString();
  return { records, mark };
}
