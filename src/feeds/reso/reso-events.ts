// RESO EntityEvent (RCP-027, ratified December 2023; docs/reso-paging.md "Change feeds"), with
// `source.changes: entityEvent`, or `auto` (the default) where the server's `$metadata` offers the
// EntityEvent entity set: the server's log of which records changed, read instead of a pull.
// An event is `EntityEventSequence` (int64, only increases; gaps are legal), `ResourceName`,
// `ResourceRecordKey` (and an optional `ResourceRecordUrl`): no event type, no payload. So:
// - the log is polled from the mark: `EntityEvent?$filter=EntityEventSequence ge <mark>&$orderby=
//   EntityEventSequence`, following nextLinks on the feed's origin, at most source.maxPages pages;
//   a no-change poll is one request. `ge`: the mark's own event (applied already) must come first,
//   which shows the log still holds everything after it (producers purge the oldest events);
// - events are coalesced per (ResourceName, ResourceRecordKey); each changed record of the feed's
//   resource is fetched by key (the confirmation's lookup, reso-confirm.ts: batched, typed by
//   $metadata, within the budget) and yielded like any record read: an event is only a hint;
// - a Media event names a Media record: the Media resource is asked which record it belongs to
//   (`MediaKey`, its `ResourceName` and `ResourceRecordKey`), and that listing is fetched (with its
//   Media) like a changed one. A Media record no longer returned names no listing: counted, left to
//   the next reconcile or full pull;
// - a key the server no longer returns (404, 400 or an empty answer, as the RCP allows: here an
//   empty answer to a by-key query) is gone: yielded `removed`, so the sync deletes it under the
//   guards (counted toward deletes.maxCount/maxFraction), where the listing key is read from the key
//   field alone, or — the reso preset's ListingId-else-ListingKey — the key map (reso-key-map.ts)
//   knows the listing the record was last read with. A key it never saw (its ListingId went with the
//   record) is counted `unnamed`, warned, and left to the next reconcile (reso-fetch-keys.ts);
// - the mark's own event gone is compaction or a purge. RCP-027 lets a producer hide an event "as long
//   as at least one later record contains a final record for that resource name and key"
//   (compaction: the newest event of each record kept), and producers purge the oldest events (a
//   prefix of the log). So the log is asked once for its newest event before the mark
//   (`EntityEventSequence lt <mark>`, `$top=1`, descending): one held shows no purge reached the mark,
//   so every event after it that is gone was hidden by a later one of its record, which the poll
//   reads: the poll goes on, and the report says compacted. None held (or the question refused):
//   events may be lost, and it is a purge;
// - the log read from the mark refused (400, 404, 410) or purged past it: the log's newest sequence
//   is read, then a keys-only reconcile runs (reso-reconcile.ts; it needs
//   FeedContext.keys), and the log goes on from that sequence;
// - the mark is `{ ts, seq }`: the highest sequence read, handed back to the sync, which stores it
//   with the lane's commit after the writes, so a crash replays events rather than skipping them.
// The first pull (no sequence stored) is a pull (reso-reader.ts) that reads the log's newest
// sequence before it begins, and starts the log there. With `auto`, that pull first reads
// `$metadata` (shared with the confirmation: read once a run); where it offers no EntityEvent the
// mark says so (`events: 'none'`) and incremental pulls go by timestamps until the next full pull.
import { causeMessage, FeedReadError } from '../../errors.js';
import type { ResoSource } from '../config-schema.js';
import { displayUrl } from '../source/http.js';
import type { FeedContext, FeedItem, OpenedFeed, SourceReadStats } from '../types.js';
import { readMetadata, type ResoMetadata } from './reso-metadata.js';
import type { Page, PageClient } from './reso-pages.js';
import { nextLinkUrl, queryUrl, resourceUrl } from './reso-query.js';
import { openReso, type ResoOpenOptions } from './reso-reader.js';
import { openResoReconcile } from './reso-reconcile.js';
import { requestTally } from './reso-requests.js';
import { addMediaParents } from './reso-media-events.js';
import { fetchKeys, type EventStats } from './reso-fetch-keys.js';
import { eventsSection } from './reso-sections.js';
import { EntityEventRecord, SEQ } from './entity-event.js';
import { warnUnusableMark } from './stored-mark.js';

export const EVENT_RESOURCE = 'EntityEvent';
const Event = EntityEventRecord;

const SEQUENCE = /^\d{1,19}$/;

/**
 * What the stored mark says of the log: the sequence read up to (`seq`), or that the server keeps no
 * log (`events: 'none'`), or why what it holds of them cannot be used (`why`, said by the caller:
 * stored-mark.ts). Holding neither is no fault (a first run, a mark a timestamps pull wrote); a mark
 * that is no JSON object is the feed's mark's fault, said once as such by the pull (reso-reader.ts
 * readMark).
 */
function storedEvents(mark: string | undefined): {
  seq?: string;
  none?: boolean;
  why?: { field: 'seq' | 'events'; what: string };
} {
  let held: unknown;
  try {
    held = mark === undefined ? undefined : JSON.parse(mark);
  } catch {
    return {}; // (not JSON: the feed's mark's fault, said by readMark as the doc says)
  }
  if (!held || typeof held !== 'object') return {};
  const { seq, events } = held as { seq?: unknown; events?: unknown };
  if (typeof seq === 'string' && SEQUENCE.test(seq)) return { seq };
  if (seq !== undefined)
    return {
      why: {
        field: 'seq',
        what: `\`seq\` is ${JSON.stringify(seq)}, not an EntityEventSequence (a whole number of 1 to 19 digits, as text)`,
      },
    };
  if (events === 'none') return { none: true };
  if (events !== undefined)
    return { why: { field: 'events', what: `\`events\` is ${JSON.stringify(events)}, not "none"` } };
  return {};
}

/** Which way changes are found, and why: the source's word, or (auto) what the server's $metadata offers. */
export interface ChangesChoice {
  used: 'entityEvent' | 'timestamps';
  why: string;
}

export async function chooseChanges(source: ResoSource, metadata: () => Promise<ResoMetadata>): Promise<ChangesChoice> {
  if (source.changes !== 'auto') return { used: source.changes, why: `source.changes: ${source.changes}` };
  if (!source.incremental)
    return { used: 'timestamps', why: 'source.incremental is false: every pull is full, no change log is read' };
  try {
    const sets = (await metadata()).sets;
    return sets.has(EVENT_RESOURCE)
      ? {
          used: 'entityEvent',
          why: "source.changes: auto, and the server's $metadata offers the EntityEvent entity set (RESO RCP-027)",
        }
      : { used: 'timestamps', why: "source.changes: auto, and the server's $metadata has no EntityEvent entity set" };
  } catch (err) {
    return {
      used: 'timestamps',
      why: `source.changes: auto, and the server's $metadata could not be read (${causeMessage(err)})`,
    };
  }
}

const later = (a: string, b: string) => (BigInt(b) > BigInt(a) ? b : a);

export function openResoChanges(
  feedName: string,
  source: ResoSource,
  ctx: FeedContext,
  options: ResoOpenOptions = {},
): OpenedFeed {
  const tally = options.tally ?? requestTally();
  let meta: Promise<ResoMetadata> | undefined;
  const metadata = () => (meta ??= readMetadata(client, source.url!, source.resource));
  const opts = { ...options, tally, metadata };
  const pull = openReso(feedName, source, ctx, opts);
  const client = pull.client!;
  const stored = source.incremental && !ctx.full ? storedEvents(ctx.mark) : {};
  if (stored.seq !== undefined) return eventFeed(feedName, source, ctx, { pull, seq: stored.seq, opts });
  // a pull, with the log's newest sequence read before it begins: the log starts there
  let start: string | undefined;
  let none = false;
  async function* items(): AsyncIterable<FeedItem> {
    const known = source.changes === 'auto' && stored.none === true;
    const choice = known
      ? { used: 'timestamps' as const, why: 'the last full pull found no EntityEvent in $metadata' }
      : await chooseChanges(source, metadata);
    ctx.logger.info({ feed: feedName, changes: choice.used }, `changes found by ${choice.used}: ${choice.why}`);
    if (stored.why !== undefined)
      warnUnusableMark(ctx, feedName, pull.stats?.warnings, {
        which: `EntityEvent mark (${stored.why.field})`,
        why: stored.why.what,
        instead: `this run finds changes by ModificationTimestamp, not in the log (a record deleted since is removed by the next reconcile or full pull)${choice.used === 'entityEvent' ? ', and the EntityEvent log is read from its newest event on' : ''}`,
      });
    if (choice.used === 'entityEvent') start = await newestSequence(client, source);
    else none = source.changes === 'auto';
    yield* pull.items;
  }
  return {
    items: items(),
    get mode() {
      return pull.mode;
    },
    get mark() {
      const m = pull.mark;
      if (m === undefined) return m;
      const extra = start !== undefined ? { seq: start } : none ? { events: 'none' } : {};
      return JSON.stringify({ ...(JSON.parse(m) as object), ...extra });
    },
    get since() {
      return pull.since;
    },
    ...(pull.lookup && { lookup: pull.lookup }),
    stats: pull.stats,
  };
}

/** The log's newest sequence ("0" for an empty log): one request. */
async function newestSequence(client: PageClient, source: ResoSource): Promise<string> {
  const url = queryUrl(source.url!, EVENT_RESOURCE, { orderby: `${SEQ} desc`, top: 1, select: [SEQ] });
  const page = await client.get(url, 'the EntityEvent log', 'events');
  const first = page.value[0];
  if (first === undefined) return '0';
  const r = Event.pick({ [SEQ]: true }).safeParse(first);
  if (!r.success)
    throw new FeedReadError(
      `the EntityEvent log's newest event has no ${SEQ} that is a whole number`,
      { file: displayUrl(url) },
      false,
    );
  return String(r.data[SEQ]);
}

/** Answers to a poll from the mark that say the log cannot be read from there (the RCP leaves the status to the server). */
const REFUSED = new Set([400, 404, 410]);

interface EventRun {
  pull: ReturnType<typeof openReso>;
  seq: string;
  opts: ResoOpenOptions & { tally: NonNullable<ResoOpenOptions['tally']> };
}

function eventFeed(feedName: string, source: ResoSource, ctx: FeedContext, run: EventRun): OpenedFeed {
  const { pull, seq } = run;
  const client = pull.client!;
  const label = displayUrl(resourceUrl(source.url!, EVENT_RESOURCE));
  let instead: OpenedFeed | undefined;
  const own: string[] = [];
  const events: EventStats = { read: 0, keys: 0, fetched: 0, gone: 0 };
  const pages = { log: 0 };
  const stats = eventStats(client, pull, own, { events, pages }, () => instead);
  let reached: string | undefined;
  const stored = JSON.parse(ctx.mark!) as Record<string, unknown>;

  async function* items(): AsyncIterable<FeedItem> {
    const polled = await pollLog(client, source, seq, { events, pages }, label).catch((err: unknown) => {
      if (err instanceof FeedReadError && err.status !== undefined && REFUSED.has(err.status))
        return `the server refused the EntityEvent log from sequence ${seq} (${causeMessage(err)})`;
      throw err;
    });
    if (typeof polled === 'string' || !polled.whole) {
      const why =
        typeof polled === 'string'
          ? polled
          : `the EntityEvent log no longer holds sequence ${seq} nor any event before it (purged past it)`;
      yield* reconcileInstead(why);
      return;
    }
    const { keys, media, last } = polled;
    if (polled.compacted) {
      events.compacted = polled.compacted;
      ctx.logger.info({ feed: feedName, seq }, `${polled.compacted}: the poll goes on from the log`);
    }
    await addMediaParents(keys, [...media], { client, source, label, events });
    events.keys = keys.size;
    yield* fetchKeys(keys, {
      feedName,
      source,
      ctx,
      lookup: pull.lookup!,
      label,
      stats: events,
      warnings: own,
      goneBy: 'the EntityEvent log says are gone',
      ...(run.opts.keys && { keys: run.opts.keys }),
    });
    reached = JSON.stringify({ ...stored, seq: last });
    ctx.logger.debug({ feed: feedName, seq: last, keys: keys.size }, 'EntityEvent log read');
  }

  async function* reconcileInstead(why: string): AsyncIterable<FeedItem> {
    events.purged = why;
    ctx.logger.warn({ feed: feedName, seq }, `${why}: a keys-only reconcile runs instead`);
    if (!ctx.keys)
      throw new FeedReadError(
        `${why}, and no reconcile can run here: run feedsync sync --reconcile, or --full`,
        { file: label },
        false,
      );
    // (the newest sequence before the reconcile begins: what changes during it is read from the log next time)
    const newest = await newestSequence(client, source);
    instead = openResoReconcile(feedName, source, ctx, ctx.keys, run.opts);
    yield* instead.items;
    const after = instead.mark === undefined ? stored : (JSON.parse(instead.mark) as Record<string, unknown>);
    reached = JSON.stringify({ ...after, seq: newest });
  }

  return {
    items: items(),
    get mode() {
      return instead?.mode ?? 'incremental';
    },
    get mark() {
      return reached;
    },
    get unread() {
      return instead?.unread;
    },
    ...(pull.lookup && { lookup: pull.lookup }),
    stats,
  };
}

/** An event poll's stats: its client's, and a reconcile's when one ran instead. */
function eventStats(
  client: PageClient,
  pull: EventRun['pull'],
  own: string[],
  counted: PollCounts,
  instead: () => OpenedFeed | undefined,
): SourceReadStats {
  const { events, pages } = counted;
  return {
    get mode() {
      return instead()?.stats?.mode;
    },
    /** the log's pages, and a reconcile's when one ran instead (its fetches by key are requests, not pages) */
    get pages() {
      return pages.log + (instead()?.stats?.pages ?? 0);
    },
    get requests() {
      return client.tally.total;
    },
    tally: client.tally,
    // (the read's one tally: the reconcile's clients count there too)
    get bytes() {
      return client.tally.bytes;
    },
    get warnings() {
      return [...pull.stats.warnings, ...own, ...(instead()?.stats?.warnings ?? [])];
    },
    get sections() {
      return [eventsSection(events), ...(instead()?.stats?.sections ?? [])];
    },
  };
}

/** What a poll counts as it reads: the events (the report's section), the log's pages. */
interface PollCounts {
  events: EventStats;
  pages: { log: number };
}

interface Polled {
  /** the log holds the mark's own event (or the mark is "0"), or an event before it: nothing after it was purged */
  whole: boolean;
  /** the mark's own event was hidden by a later one of its record (RCP-027 compaction), in words */
  compacted?: string;
  keys: Set<string>;
  /** MediaKeys of Media events */
  media: Set<string>;
  last: string;
}

/** The log from `seq` on: the keys of the feed's resource it names (coalesced), Media keys, and the highest sequence read. */
async function pollLog(
  client: PageClient,
  source: ResoSource,
  seq: string,
  counted: PollCounts,
  label: string,
): Promise<Polled> {
  const { events, pages } = counted;
  const out: Polled = { whole: seq === '0', keys: new Set(), media: new Set(), last: seq };
  const origin = new URL(source.url!).origin;
  let url: string | undefined = queryUrl(source.url!, EVENT_RESOURCE, {
    filter: `${SEQ} ${seq === '0' ? 'gt' : 'ge'} ${seq}`,
    orderby: SEQ,
  });
  for (let n = 1; url; n++) {
    const where = { file: label, record: `event page ${n}` };
    if (n > source.maxPages)
      throw new FeedReadError(
        `the EntityEvent log has more than source.maxPages (${source.maxPages}) pages from sequence ${seq}`,
        where,
        false,
      );
    const page: Page = await client.get(url, where.record, 'events');
    pages.log++;
    for (const raw of page.value) {
      const r = Event.safeParse(raw);
      if (!r.success)
        throw new FeedReadError(
          `an EntityEvent lacks ${SEQ}, ResourceName or ResourceRecordKey: ${JSON.stringify(raw).slice(0, 200)}`,
          where,
          false,
        );
      const at = String(r.data[SEQ]);
      if (BigInt(at) <= BigInt(seq)) {
        // the mark's own event, applied already: proof the log was not purged past the mark
        if (at === seq) out.whole = true;
        continue;
      }
      if (!out.whole) {
        out.compacted = await compaction(client, source, seq);
        if (out.compacted === undefined) return out;
        out.whole = true;
      }
      events.read++;
      out.last = later(out.last, at);
      if (r.data.ResourceName === source.resource) out.keys.add(String(r.data.ResourceRecordKey));
      else if (r.data.ResourceName === 'Media') out.media.add(String(r.data.ResourceRecordKey));
    }
    const next = page['@odata.nextLink'];
    url = next ? nextLinkUrl(next, url, origin, where) : undefined;
  }
  return out;
}

/**
 * The mark's own event is gone: the log's newest event before the mark, asked once. One held shows no
 * purge (a prefix of the log) reached the mark, so the events gone after it were hidden by later
 * events of their records (RCP-027: "EntityEventSequence numbers MAY be hidden from feeds as long as
 * at least one later record contains a final record for that resource name and key"), which the poll
 * reads: compaction, in words. None held, or the question refused: undefined, a purge.
 */
async function compaction(client: PageClient, source: ResoSource, seq: string): Promise<string | undefined> {
  const url = queryUrl(source.url!, EVENT_RESOURCE, {
    filter: `${SEQ} lt ${seq}`,
    orderby: `${SEQ} desc`,
    top: 1,
    select: [SEQ],
  });
  let page: Page;
  try {
    page = await client.get(url, 'the newest event before the mark', 'events');
  } catch (err) {
    // (a server that will not answer the question proves nothing: taken for a purge, the reconcile runs)
    if (err instanceof FeedReadError && !err.retryable && err.credentialKey === undefined) return undefined;
    throw err;
  }
  const r = Event.pick({ [SEQ]: true }).safeParse(page.value[0]);
  if (!r.success || BigInt(r.data[SEQ]) >= BigInt(seq)) return undefined;
  return `the EntityEvent log no longer holds sequence ${seq}, but holds ${String(r.data[SEQ])} before it: compacted (RCP-027 lets a server hide an event that a later event of its record supersedes), not purged`;
}
