// RESO Web API (OData JSON) feed. The pull pages by keyset (reso-query.ts): by key for a full pull,
// by (ModificationTimestamp, key) from the mark for an incremental one, so records changed during the
// pull cannot tear it; or, with `paging: nextLink`, by the server's own @odata.nextLink, followed on
// the configured origin only, never twice to one URL. Every pull is bounded: source.maxPages pages,
// source.maxPageRecords records and source.maxPageBytes bytes a page, source.top records in all.
//
// The vendor profile (source.vendor, vendors/) says how the server wants to be asked: `$orderby` or
// not, `$top` as the page size, a filter term on every request, `gt` or `ge` from the mark. A generic
// server that refuses the keyset query on the first page is paged by nextLink instead, once, with a
// warning (stats.warnings).
//
// The mark (what the next incremental pull starts from) comes from the records received, with no
// request of its own: their latest ModificationTimestamp (and the photos' own timestamp where the
// records carry one), but never after the server's clock when the pull began (the Date of its first
// answer, less a second) nor after ours. A record changed during the pull is thus read again by the
// next one rather than lost, and a record stamped in the future, or a timestamp that does not parse,
// never becomes the mark. A no-change incremental pull is one request; a full pull its data pages
// and, with keyset paging, the one empty page that ends it. The reader never writes state: the sync
// hands in the stored mark (FeedContext.mark) and stores OpenedFeed.mark after a successful run.
//
// What the pages say is checked (issue 22): in a keyset pull every record must come in the pull's
// order, after the last one read (a server that ignores $orderby is noticed on the page where it
// shows, and the pull stops there, not read whole). An incremental pull paged by $skip nextLinks asks
// each next page one record early and expects the last record read again: when it is not, records
// before it left the result and the page shifted, so the mark moves no further than that record. A
// full pull's absences are confirmed by the sync through `lookup` (reso-confirm.ts) before deletes.
//
// `path` replays saved pages instead (reso-replay.ts); the mark then is the latest usable timestamp
// replayed, and an incremental replay drops records older than the stored mark.
import type { KeyMap } from './reso-key-map.js';
import { z } from 'zod';
import { causeMessage, FeedReadError, RecordParseError } from '../../errors.js';
import type { ResoSource } from '../config-schema.js';
import { displayUrl } from '../source/http.js';
import { resoPageClient, type Page, type PageClient } from './reso-pages.js';
import { warnUnusableMark } from './stored-mark.js';
import {
  afterFilter,
  compareKeys,
  isTimestampLiteral,
  laterOf,
  orderBy,
  pageSize,
  pullQuery,
  nextLinkUrl,
  queryUrl,
  sinceFilter,
  TS,
  usableTimestamp,
} from './reso-query.js';
import { resoLookup } from './reso-confirm.js';
import { oldestRecords, proveTimeOrder, proveWindow } from './reso-proof.js';
import type { RequestKind, RequestTally } from './reso-requests.js';
import { readMetadata, type ResoMetadata } from './reso-metadata.js';
import type { VendorProfile } from '../vendors/profile.js';
import { vendorProfile } from '../vendors/registry.js';
import { replayPages } from './reso-replay.js';
import type { FeedContext, FeedItem, KeyLookup, OpenedFeed, SourceReadStats } from '../types.js';

/**
 * The mark: where the next incremental pull starts, and `paging: 'nextLink'` once a keyset pull
 * could not prove it read its window (the server ignores $orderby, or does not answer $count):
 * learned once, the next incremental pulls page by nextLink from the fixed mark.
 */
const Mark = z.object({
  ts: z.string().refine(isTimestampLiteral, 'not an ISO timestamp'),
  photos: z.string().refine(isTimestampLiteral).optional(),
  paging: z.literal('nextLink').optional(),
  /** the OriginatingSystemName the pull's last record carried (`feed drift` compares it; MLS Grid's records carry one) */
  osn: z.string().optional(),
});
type Mark = z.infer<typeof Mark>;

/** How many keys seen twice a read lists by name (the count is exact). */
const SEEN_TWICE_LISTED = 100;

/** What one RESO pull saw, for `feed preview` and the report. */
export interface ResoReadStats extends SourceReadStats {
  /** keys (source.keyField) that came twice in this pull, the first 100 */
  keysSeenTwice: string[];
  keysSeenTwiceCount: number;
  /** the pull stopped at source.top */
  capped: boolean;
}

export interface OpenedResoFeed extends OpenedFeed {
  readonly stats: ResoReadStats;
  /** the live pull's page client (its requests and bytes), none for a replay */
  readonly client?: PageClient;
}

interface PullState {
  mark?: Mark;
  capped: boolean;
  pages: number;
  /** the last record read, in the pull's order (an incremental pull cut short by top resumes after it) */
  lastTs?: string;
  /** an incremental $skip page shifted: everything before this record's timestamp was read */
  shiftedAt?: string;
  /** how the pull paged in the end (a refused keyset query turns into nextLink paging) */
  paging?: Paging;
  /** an incremental keyset pull that could not prove it read its window: the mark stays, and learns nextLink paging */
  unproven?: boolean;
  /** a full pull proved the server orders by time as asked: the nextLink paging learned before is dropped */
  reproved?: boolean;
}

/** How a pull is opened beside others: a tally shared with them, and the service's `$metadata` read once for all. */
export interface ResoOpenOptions {
  backoffMs?: number;
  tally?: RequestTally;
  metadata?: () => Promise<ResoMetadata>;
  /** what the pull's pages are counted as (a related resource's: its name); 'pages' by default */
  kind?: RequestKind;
  /** the read's key map (reso-key-map.ts): what resolves a gone record key to its listing, and learns key rows */
  keys?: KeyMap;
}

export function openReso(
  feedName: string,
  source: ResoSource,
  ctx: FeedContext,
  options: ResoOpenOptions = {},
): OpenedResoFeed {
  const label = source.path ?? displayUrl(source.url!);
  const wantIncremental = source.incremental && !ctx.full;
  let mode: OpenedFeed['mode'] = wantIncremental ? 'incremental' : 'full';
  let complete = false;
  let since: string | undefined;
  const state: PullState = { capped: false, pages: 0 };
  const client = source.path ? undefined : resoPageClient(source, ctx, { ...options, scope: feedName });
  const stats = readStats(client);

  async function* items(): AsyncIterable<FeedItem> {
    const stored = wantIncremental ? readMark(ctx, feedName, stats.warnings) : undefined;
    if (!stored) mode = 'full';
    since = stored?.ts;
    const now = Date.now();
    const oldest = stored ? undefined : learnedToReprove(source, ctx);
    const along: ReadAlong = {
      ...(oldest && { oldest }),
      label,
      keyField: source.keyField,
      stats,
      seen: new Set(),
      index: 0,
      ...(!client && { replay: { stored, now, state } }),
    };
    const pages = client
      ? livePages(source, client, stored, state, now, stats, ctx)
      : replayPages(source.path!, ctx, label, source.maxPageRecords);
    if (!client) state.mark = stored;
    try {
      for await (const value of pages) yield* pageItems(value, along);
    } finally {
      stats.pages = state.pages;
      stats.capped = state.capped;
    }
    if (oldest && client && !state.capped) state.reproved = await reprove(source, client, oldest.list, stats, ctx);
    settleMark({ feedName, source, ctx, label, state, stored, now, full: mode === 'full' });
    const osn = along.system ?? stored?.osn;
    if (state.mark && osn !== undefined) state.mark = { ...state.mark, osn };
    complete = true;
  }

  return {
    items: items(),
    ...(client && {
      lookup: liveLookup(feedName, source, client, { label, state, stats, ctx, options }),
    }),
    /** 'incremental' only once a stored mark was found; the first pull of an incremental feed is full */
    get mode() {
      return mode;
    },
    get mark() {
      return complete && state.mark ? JSON.stringify(state.mark) : undefined;
    },
    get since() {
      return mode === 'incremental' ? since : undefined;
    },
    stats,
    ...(client && { client }),
  };
}

/**
 * The pull's mark once its records are read: a full pull cut short by top fails (nothing deleted);
 * an incremental one cut short, or one whose $skip page shifted, resumes from what it knows it read;
 * what the pull learned of the server's paging outlives a full pull.
 */
function settleMark(pull: {
  feedName: string;
  source: ResoSource;
  ctx: FeedContext;
  label: string;
  state: PullState;
  stored: Mark | undefined;
  now: number;
  full: boolean;
}): void {
  const { feedName, source, ctx, label, state, stored, now, full } = pull;
  if (state.capped && full) {
    throw new FeedReadError(
      `stopped after source.top = ${source.top} records: top is a total, not a page size (that is maxPageSize), so this full pull is not complete and nothing is deleted`,
      { file: label },
      false,
    );
  }
  if (state.capped) {
    // incremental, cut short: everything before the last record read was read; resume from it
    state.mark = stored && { ...stored, ts: laterOf(stored.ts, usableTimestamp(state.lastTs, now))! };
  }
  if (stored && state.shiftedAt !== undefined) {
    // a page shifted: the next pull starts from the last record known to have everything before it read
    const ts = laterOf(stored.ts, usableTimestamp(state.shiftedAt, now))!;
    state.mark = { ...stored, ts: state.mark && Date.parse(state.mark.ts) < Date.parse(ts) ? state.mark.ts : ts };
    ctx.logger.warn(
      { feed: feedName, file: label, mark: state.mark.ts },
      `a $skip page shifted during the incremental pull (records before it left the result): the next pull asks again from ${state.mark.ts}`,
    );
  }
  // what a pull learned of the server's paging outlives a full pull, unless the full pull proved it wrong
  if (state.mark && !stored && source.incremental && !state.reproved && storedMark(ctx).mark?.paging === 'nextLink')
    state.mark = { ...state.mark, paging: 'nextLink' };
}

/** The most records a full pull's re-proof of `$orderby` asks for (its one request: key and timestamp only). */
const REPROOF_RECORDS = 200;

/**
 * A full pull of a feed whose mark learned nextLink paging, where nothing else decides it (source.paging
 * unset, a vendor that takes `$orderby`): it keeps its oldest records by time, to re-prove (reprove).
 */
function learnedToReprove(source: ResoSource, ctx: FeedContext): ReturnType<typeof oldestRecords> | undefined {
  const profile = vendorProfile(source.vendor);
  if (source.path || !source.incremental || source.paging !== undefined || !profile.orderby) return undefined;
  if (storedMark(ctx).mark?.paging !== 'nextLink') return undefined;
  return oldestRecords(Math.min(pageSize(source, profile), REPROOF_RECORDS));
}

/** One request: does the server now order by time as asked (reso-proof.ts proveTimeOrder)? Said either way. */
async function reprove(
  source: ResoSource,
  client: PageClient,
  oldest: Array<{ key: string; ts: string }>,
  stats: ResoReadStats,
  ctx: FeedContext,
): Promise<boolean> {
  const profile = vendorProfile(source.vendor);
  const q = pullQuery(source, profile, {
    full: true,
    order: 'time',
    remaining: oldest.length,
    select: [source.keyField, TS],
  });
  const url = queryUrl(source.url!, source.resource, { ...q, expandMedia: false, expandOpenHouse: false });
  const proof = await proveTimeOrder({ client, url, oldest, keyField: source.keyField });
  const warning = proof.proven
    ? 'asked by ModificationTimestamp, the server answered the oldest records in that order: the nextLink paging an earlier incremental pull learned (it found $orderby ignored) is dropped, and incremental pulls page by keyset again'
    : `${proof.why}: incremental pulls keep paging by @odata.nextLink (set source.paging to decide for good)`;
  stats.warnings.push(warning);
  ctx.logger.warn({ paging: proof.proven ? 'keyset' : 'nextLink' }, warning);
  return proof.proven;
}

/** What the records of a pull share as they are read: where, the keys seen (twice: counted), the last MLS named, a replay's filter. */
interface ReadAlong {
  label: string;
  keyField: string;
  stats: ResoReadStats;
  seen: Set<string>;
  index: number;
  /** the OriginatingSystemName of the last record that had one */
  system?: string;
  /** a replay (source.path): filtered here as a server would filter it, its mark moved by what it holds */
  replay?: { stored: Mark | undefined; now: number; state: PullState };
  /** a full pull that re-proves learned paging: its oldest records by time (learnedToReprove) */
  oldest?: ReturnType<typeof oldestRecords>;
}

/** A page's records as feed items: a value that is not an object is an error of its own, a key seen before is counted. */
function* pageItems(value: readonly unknown[], r: ReadAlong): Generator<FeedItem> {
  for (const raw of value) {
    const position = { file: r.label, index: r.index++ };
    if (raw === null || typeof raw !== 'object' || Array.isArray(raw)) {
      const error = new RecordParseError('a value of the page is not an object', {
        file: r.label,
        record: position.index,
      });
      yield { kind: 'error', position, error, standalone: true };
      continue;
    }
    const record = raw as Record<string, unknown>;
    if (typeof record.OriginatingSystemName === 'string') r.system = record.OriginatingSystemName;
    r.oldest?.offer(record[r.keyField], record[TS]);
    if (r.replay && !replayKeeps(record, r.replay)) continue;
    const item = itemOf(record, r.keyField, position);
    const id = item.position.id;
    if (id !== undefined) {
      if (r.seen.has(id)) {
        if (r.stats.keysSeenTwice.length < SEEN_TWICE_LISTED) r.stats.keysSeenTwice.push(id);
        r.stats.keysSeenTwiceCount++;
      } else r.seen.add(id);
    }
    yield item;
  }
}

/** A replay's record kept as a server would keep it (ge: the mark's own timestamp again); the mark moves to the latest kept. */
function replayKeeps(record: Record<string, unknown>, replay: NonNullable<ReadAlong['replay']>): boolean {
  const { stored, now, state } = replay;
  const t = Date.parse(String(record[TS]));
  if (stored && !(t >= Date.parse(stored.ts))) return false;
  const ts = usableTimestamp(record[TS], now);
  if (ts) state.mark = { ts: laterOf(state.mark?.ts, ts)! };
  return true;
}

/** A pull's stats; its requests and bytes as they stand when read (the confirmation's come after the pull: reso-requests.ts). */
function readStats(client: PageClient | undefined): ResoReadStats {
  return {
    pages: 0,
    get requests() {
      return client?.tally.total ?? 0;
    },
    get bytes() {
      return client?.tally.bytes;
    },
    ...(client && { tally: client.tally }),
    keysSeenTwice: [],
    keysSeenTwiceCount: 0,
    capped: false,
    warnings: [],
  };
}

/** The live pull's lookup (reso-confirm.ts): the pull's client, its paging, its $metadata read once, keys-only reads. */
function liveLookup(
  feedName: string,
  source: ResoSource,
  client: PageClient,
  pull: { label: string; state: PullState; stats: ResoReadStats; ctx: FeedContext; options: ResoOpenOptions },
): KeyLookup {
  const { label, state, stats, ctx, options } = pull;
  return resoLookup(source, {
    client,
    label,
    paging: () => pagingAdvice(source, state.paging),
    nextLink: nextLinkUrl,
    itemOf: (record, index) => itemOf(record, source.keyField, { file: label, index }),
    fieldTypes: once(async () => {
      try {
        return (await (options.metadata ?? (() => readMetadata(client, source.url!, source.resource)))()).sets.get(
          source.resource,
        );
      } catch (err) {
        const warning = `the server's $metadata could not be read (${causeMessage(err)}): keys are asked for quoted, as text`;
        stats.warnings.push(warning);
        ctx.logger.warn({ feed: feedName, file: label }, warning);
        return undefined;
      }
    }),
    keysOnly: (fields) =>
      keysOnlyPages(source, ctx, fields, {
        ...options,
        scope: feedName,
        warnings: stats.warnings,
        tally: client.tally,
      }),
  });
}

/** The first call's promise, for every call. */
function once<T>(f: () => Promise<T>): () => Promise<T> {
  let p: Promise<T> | undefined;
  return () => (p ??= f());
}

/**
 * A keys-only read: every record the feed's filter selects (a full pull's query: the vendor's terms,
 * `source.filter`, MLS Grid's `MlgCanView eq true`) with `fields`, the key and ModificationTimestamp
 * only, paged as a full pull is (keyset by key, or nextLink), on pages as large as the vendor allows
 * without `$expand`, and bounded as a pull is (source.maxPages). About 100 bytes a record against
 * 5–30 KB for a whole one.
 */
export async function* keysOnlyPages(
  source: ResoSource,
  ctx: FeedContext,
  fields: readonly string[],
  options: {
    backoffMs?: number;
    scope?: string;
    warnings?: string[];
    tally?: RequestTally;
    onClient?: (client: PageClient) => void;
  } = {},
): AsyncIterable<Array<Record<string, unknown>>> {
  const keys = keysOnlySource(source);
  const client = resoPageClient(keys, ctx, { ...options, kind: 'keys' });
  options.onClient?.(client);
  const stats: ResoReadStats = {
    pages: 0,
    requests: 0,
    keysSeenTwice: [],
    keysSeenTwiceCount: 0,
    capped: false,
    warnings: options.warnings ?? [],
  };
  for await (const value of livePages(
    { ...keys, select: [...fields] },
    client,
    undefined,
    { capped: false, pages: 0 },
    Date.now(),
    stats,
    ctx,
  )) {
    yield value.filter((v): v is Record<string, unknown> => v !== null && typeof v === 'object' && !Array.isArray(v));
  }
}

/** The source as a keys-only read asks it: no `$expand`, no cap on the total, the vendor's largest page. */
function keysOnlySource(source: ResoSource): ResoSource {
  const profile = vendorProfile(source.vendor);
  return {
    ...source,
    expandMedia: false,
    expandOpenHouse: false,
    top: undefined,
    maxPageSize: Math.min(profile.maxPageSize, source.maxPageRecords),
  };
}

/**
 * The feed's stored mark; one that cannot be used is said (stored-mark.ts), and added to `warnings`
 * (the read's) — by the one call that decides the pull: the others ask `storedMark` quietly.
 */
export function readMark(
  ctx: FeedContext,
  feedName: string,
  warnings: string[] | undefined,
  instead = 'every record is pulled (a full pull)',
): Mark | undefined {
  const read = storedMark(ctx);
  if (read.err === undefined) return read.mark;
  warnUnusableMark(ctx, feedName, warnings, {
    which: 'RESO high-water mark',
    why: read.err,
    instead,
  });
  return undefined;
}

/** The feed's stored mark, or why it cannot be used; nothing said. */
function storedMark(ctx: FeedContext): { mark?: Mark; err?: unknown } {
  if (ctx.mark === undefined) return {};
  try {
    return { mark: Mark.parse(JSON.parse(ctx.mark)) };
  } catch (err) {
    return { err };
  }
}

/** How a live pull is asked: keyset (by key, or by time from the mark) or the server's nextLinks. */
type Paging = 'keyset' | 'nextLink';

/**
 * The pages of a live pull, keyset or nextLink as the source and its vendor say. The mark comes from
 * the records received (no request of its own): their latest usable ModificationTimestamp, but not
 * after the server's clock when the pull began (the Date of its first answer, less a second), so a
 * record changed during the pull is read again by the next one rather than lost.
 */
async function* livePages(
  source: ResoSource,
  client: PageClient,
  stored: Mark | undefined,
  state: PullState,
  now: number,
  stats: ResoReadStats,
  ctx: FeedContext,
): AsyncIterable<unknown[]> {
  const p = planPull({ source, client, stored, state, now, stats, ctx });
  try {
    for (let n = 1; ; n++) {
      const where = { file: displayUrl(p.url), record: `page ${n}` };
      if (n > source.maxPages)
        throw new FeedReadError(
          `more than source.maxPages (${source.maxPages}) pages: the pull stopped there and is not complete`,
          where,
          false,
        );
      if (p.asked.has(p.url))
        throw new FeedReadError(
          `page ${n} would ask for an earlier page again (${displayUrl(p.url)}): the server's paging loops; the pull is not complete`,
          where,
          false,
        );
      p.asked.add(p.url);
      const page = await askPage(p, n, where);
      if (!page) {
        n = 0; // the keyset query refused: the first page again, by nextLink
        continue;
      }
      state.pages = n;
      state.paging = p.paging;
      const { value, disorder, last } = takeRecords(p, page);
      yield value;
      if (disorder && p.readTs) {
        // an incremental pull stops there, keeps its mark, and learns: the next pages by nextLink
        unproven(p, `${disorder.what}: the server ignores $orderby=${orderBy(p.order, source.keyField)}`);
        return;
      }
      if (disorder) {
        throw new FeedReadError(
          `${disorder.what}: the server ignores $orderby=${orderBy(p.order, source.keyField)}, so paging by key would skip records; the pull stopped here and is not complete (${disorder.advice})`,
          where,
          false,
        );
      }
      if (source.top !== undefined && p.read >= source.top) {
        state.capped = true;
        return;
      }
      if (!(await advance(p, page, value, last, n, where))) return;
    }
  } finally {
    settleLiveMark(p);
  }
}

/** One live pull as it goes: what it asks, how it pages, what it has read. */
interface LivePull {
  source: ResoSource;
  client: PageClient;
  stored: Mark | undefined;
  state: PullState;
  now: number;
  stats: ResoReadStats;
  ctx: FeedContext;
  profile: VendorProfile;
  since: string | undefined;
  order: 'time' | 'key';
  paging: Paging;
  /** incremental keyset: the latest timestamp read of each key, for the proof (reso-proof.ts) */
  readTs: Map<string, string> | undefined;
  /** the URL of a page for the cursor `after`, `remaining` records at most */
  query(after: string | undefined, remaining: number | undefined): string;
  origin: string;
  asked: Set<string>;
  inOrder: ReturnType<typeof pageOrder>;
  /** incremental $skip paging: the record the next page is asked to start with again */
  overlap: Record<string, unknown> | undefined;
  /** the latest usable timestamps read (records, photos) */
  seen: { ts: string | undefined; photos: string | undefined };
  read: number;
  url: string;
}

/** The pull's query (filter, select, order) and paging, as the source, its vendor and the mark say. */
function planPull(pull: Pick<LivePull, 'source' | 'client' | 'stored' | 'state' | 'now' | 'stats' | 'ctx'>): LivePull {
  const { source, stored, stats, ctx } = pull;
  const base = source.url!;
  const profile = vendorProfile(source.vendor);
  const photos = source.photosTimestampField && stored?.photos ? source.photosTimestampField : null;
  const since = stored ? sinceFilter(stored, photos, profile.since, profile.sinceLagMinutes) : undefined;
  const select = source.select?.length
    ? [...new Set([...source.select, source.keyField, TS, ...(photos ? [photos] : [])])]
    : undefined;
  const order = stored ? 'time' : 'key';
  let paging: Paging = (source.paging ?? 'keyset') === 'keyset' && profile.orderby ? 'keyset' : 'nextLink';
  // (what was learned, where the config says nothing: source.paging, set, wins)
  if (paging === 'keyset' && stored?.paging === 'nextLink' && source.paging === undefined) {
    paging = 'nextLink';
    const warning = `this incremental pull pages by @odata.nextLink: the server was found to ignore $orderby (an earlier pull could not prove it read its window by keyset); the next full pull asks again, and source.paging decides for good`;
    stats.warnings.push(warning);
    ctx.logger.warn({ paging }, warning);
  }
  const p: LivePull = {
    ...pull,
    profile,
    since,
    order,
    paging,
    readTs: order === 'time' && paging === 'keyset' ? new Map<string, string>() : undefined,
    query: (after, remaining) =>
      queryUrl(
        base,
        source.resource,
        pullQuery(source, profile, {
          full: !stored,
          since,
          after,
          order: p.paging === 'keyset' ? order : undefined,
          remaining,
          select,
        }),
      ),
    origin: new URL(base).origin,
    asked: new Set<string>(),
    inOrder: pageOrder(order, source.keyField),
    overlap: undefined,
    seen: { ts: undefined, photos: undefined },
    read: 0,
    url: '',
  };
  p.url = p.query(undefined, source.top);
  return p;
}

/** The page at p.url; undefined when the server refused the keyset query on the first page (p then pages by nextLink). */
async function askPage(p: LivePull, n: number, where: { file: string; record: string }): Promise<Page | undefined> {
  try {
    return await p.client.get(p.url, `page ${n}`);
  } catch (err) {
    if (n === 1 && p.paging === 'keyset' && refusesKeyset(err, p.source.keyField)) {
      // once: the server refused the keyset query (its $orderby or a field); the server's own paging instead
      const warning = `the server refused the keyset query (${refusal(err)}); this pull pages by @odata.nextLink instead (set paging: nextLink to ask that way from the start)`;
      p.stats.warnings.push(warning);
      p.ctx.logger.warn({ url: where.file, paging: 'nextLink' }, warning);
      p.paging = 'nextLink';
      p.url = p.query(undefined, p.source.top);
      return undefined;
    }
    throw err;
  }
}

/** The page's records this pull takes (the overlap dropped, within top, up to a record out of order), and what they say of the mark. */
function takeRecords(
  p: LivePull,
  page: Page,
): { value: unknown[]; disorder: ReturnType<LivePull['inOrder']>; last: Record<string, unknown> | undefined } {
  const { source, state } = p;
  if (p.overlap) {
    if (sameRecord(page.value[0], p.overlap, source.keyField)) page.value.shift();
    else state.shiftedAt ??= p.overlap[TS] as string;
    p.overlap = undefined;
  }
  let value =
    source.top !== undefined && p.read + page.value.length > source.top
      ? page.value.slice(0, source.top - p.read)
      : page.value;
  const disorder = p.paging === 'keyset' ? p.inOrder(value) : undefined;
  if (disorder) value = value.slice(0, disorder.at); // the records before it were asked for and came in order
  p.read += value.length;
  for (const v of value) {
    if (v === null || typeof v !== 'object' || Array.isArray(v)) continue;
    const r = v as Record<string, unknown>;
    p.seen.ts = laterOf(p.seen.ts, usableTimestamp(r[TS], p.now));
    if (source.photosTimestampField)
      p.seen.photos = laterOf(p.seen.photos, usableTimestamp(r[source.photosTimestampField], p.now));
    if (p.readTs && isTimestampLiteral(r[TS]) && r[source.keyField] != null)
      p.readTs.set(String(r[source.keyField]), r[TS]);
  }
  const last = lastRecord(value);
  if (last && isTimestampLiteral(last[TS])) state.lastTs = last[TS];
  return { value, disorder, last };
}

/** p.url set to the next page's; false when the pull has read everything (a keyset pull's window proved first). */
async function advance(
  p: LivePull,
  page: Page,
  value: unknown[],
  last: Record<string, unknown> | undefined,
  n: number,
  where: { file: string; record: string },
): Promise<boolean> {
  const { source } = p;
  if (p.paging === 'keyset') {
    if (
      value.length === 0 ||
      lastPage(
        page,
        source,
        p.profile,
        source.top === undefined ? undefined : source.top - (p.read - value.length),
        p.order,
      )
    ) {
      // a cursor moved (more than one page): what the pull read is proved before its mark moves
      if (p.readTs && n > 1) {
        const proof = await proveWindow({
          client: p.client,
          base: source.url!,
          resource: source.resource,
          filter: pullQuery(source, p.profile, { full: false, since: p.since }).filter,
          end: windowEnd(p)!,
          read: p.readTs,
        });
        if (!proof.proven) unproven(p, proof.why);
      }
      return false;
    }
    if (!last || last[source.keyField] === undefined || last[source.keyField] === null) {
      throw new FeedReadError(
        `the last record of page ${n} has no ${source.keyField}: keyset paging cannot go on after it (set source.keyField)`,
        where,
        false,
      );
    }
    if (p.order === 'time' && !isTimestampLiteral(last[TS])) {
      throw new FeedReadError(
        `the last record of page ${n} has ${TS} ${JSON.stringify(last[TS])}, not a timestamp: keyset paging cannot go on after it`,
        where,
        false,
      );
    }
    p.url = p.query(
      afterFilter(p.order, source.keyField, { key: last[source.keyField], ts: last[TS] as string | undefined }),
      source.top && source.top - p.read,
    );
    return true;
  }
  const next = page['@odata.nextLink'];
  if (!next) return false;
  p.url = nextLinkUrl(next, p.url, p.origin, where);
  const early = p.order === 'time' && last ? oneEarlier(p.url) : undefined;
  if (early) {
    p.url = early;
    p.overlap = last;
  }
  return true;
}

/** An incremental keyset pull that could not prove its window: its mark stays, and it learns nextLink paging. */
function unproven(p: LivePull, why: string): void {
  p.state.unproven = true;
  const next =
    p.source.paging === 'keyset'
      ? 'source.paging: keyset keeps the next pulls on keyset, so the mark moves when one proves its window (unset it to let feedsync page by @odata.nextLink)'
      : 'the next incremental pulls page by @odata.nextLink from it (set source.paging: nextLink for this server)';
  const warning = `${why}; the mark stays at ${p.stored!.ts} and ${next}`;
  p.stats.warnings.push(warning);
  p.ctx.logger.warn({ paging: 'nextLink' }, warning);
}

/** The live pull's mark, however it ended: the server's clock when the pull began bounds it. */
function settleLiveMark(p: LivePull): void {
  const { state, stored } = p;
  const ts = windowEnd(p);
  const photosTs = laterOf(stored?.photos, earlierOf(p.seen.photos, serverBound(p)));
  const learned = state.unproven || stored?.paging === 'nextLink';
  state.mark = state.unproven
    ? { ...stored!, paging: 'nextLink' }
    : ts
      ? { ts, ...(photosTs && { photos: photosTs }), ...(learned && { paging: 'nextLink' as const }) }
      : undefined;
}

/** the server's clock when the pull began, less a second (our clock when the server sends no Date) */
function serverBound(p: LivePull): string {
  return new Date((p.client.serverTime ?? p.now) - 1000).toISOString();
}

/** the mark this pull would move to: the latest timestamp read, within the bound; the end of the window it claims */
function windowEnd(p: LivePull): string | undefined {
  return laterOf(p.stored?.ts, earlierOf(p.seen.ts, serverBound(p)));
}

/**
 * A keyset page that ends the pull without asking for an empty one after it: shorter than the page
 * size asked, where the vendor documents `$top` as the page size; or, by the standard, in an
 * incremental pull, a page without a nextLink (and shorter than `maxPageSize` where one is asked). A full pull of
 * the standard profile still asks for the empty page: a server that caps pages without saying so
 * would otherwise end it early and make it look complete (deletes follow a complete full pull),
 * while an incremental pull ended early only moves its mark less far (records come in time order).
 */
function lastPage(
  page: Page,
  source: ResoSource,
  profile: VendorProfile,
  remaining: number | undefined,
  order: 'key' | 'time',
): boolean {
  if (profile.pageSizeBy === 'top')
    return page.value.length < Math.min(pageSize(source, profile), remaining ?? Infinity);
  return (
    order === 'time' &&
    !page['@odata.nextLink'] &&
    (source.maxPageSize === undefined || page.value.length < source.maxPageSize)
  );
}

function earlierOf(a: string | undefined, bound: string): string | undefined {
  return a === undefined ? undefined : Date.parse(a) > Date.parse(bound) ? bound : a;
}

/** A 400 naming $orderby, the key or ModificationTimestamp: the server will not be asked by keyset. */
function refusesKeyset(err: unknown, keyField: string): boolean {
  if (!(err instanceof FeedReadError) || err.status !== 400) return false;
  return /orderby/i.test(err.message) || err.message.includes(keyField) || err.message.includes(TS);
}

function refusal(err: unknown): string {
  const m = err instanceof FeedReadError ? err.message : String(err);
  return m.length > 300 ? `${m.slice(0, 300)}…` : m;
}

/** A $skip nextLink asked one record early ($top one more), or undefined when it has no $skip to move. */
function oneEarlier(url: string): string | undefined {
  const u = new URL(url);
  const skip = Number(u.searchParams.get('$skip'));
  if (!u.searchParams.has('$skip') || !Number.isInteger(skip) || skip < 1) return undefined;
  u.searchParams.set('$skip', String(skip - 1));
  const top = Number(u.searchParams.get('$top'));
  if (u.searchParams.has('$top') && Number.isInteger(top)) u.searchParams.set('$top', String(top + 1));
  return u.toString();
}

function sameRecord(a: unknown, b: Record<string, unknown>, keyField: string): boolean {
  if (a === null || typeof a !== 'object' || Array.isArray(a)) return false;
  const r = a as Record<string, unknown>;
  return r[keyField] === b[keyField] && r[TS] === b[TS];
}

/**
 * Whether each record of a keyset page comes after the one before it (across pages), in the pull's
 * order: by key, or by (ModificationTimestamp, key). Text keys may be ordered by code unit or, as a
 * case-insensitive collation does (SQL Server's default), by their folded form: either order is
 * accepted as long as the pull keeps to it; a record that breaks both is the server ignoring $orderby.
 * A key equal to the one before is a repeat, not disorder: the sync's read-whole check takes it.
 */
function pageOrder(
  order: 'key' | 'time',
  keyField: string,
): (value: unknown[]) => { at: number; what: string; advice: string } | undefined {
  let prev: Record<string, unknown> | undefined;
  const ways = { exact: true, folded: true };
  const show = (x: Record<string, unknown>) =>
    order === 'key' ? JSON.stringify(x[keyField]) : `${JSON.stringify(x[keyField])} (${String(x[TS])})`;
  return (value) => {
    for (let i = 0; i < value.length; i++) {
      const r = value[i];
      if (r === null || typeof r !== 'object' || Array.isArray(r)) continue;
      const rec = r as Record<string, unknown>;
      if (prev) {
        const byTime = order === 'time' ? Date.parse(String(rec[TS])) - Date.parse(String(prev[TS])) : 0;
        let broken = byTime < 0 || Number.isNaN(byTime);
        if (!broken && byTime === 0) {
          ways.exact &&= compareKeys(prev[keyField], rec[keyField], false) <= 0;
          ways.folded &&= compareKeys(prev[keyField], rec[keyField], true) <= 0;
          broken = !ways.exact && !ways.folded;
        }
        if (broken) {
          return {
            at: i,
            what: `record ${show(rec)} came after ${show(prev)}, out of order`,
            advice:
              order === 'key'
                ? 'set source.paging: nextLink for this server'
                : 'set source.paging: nextLink for this server, or incremental: false',
          };
        }
      }
      prev = rec;
    }
    return undefined;
  };
}

function lastRecord(value: unknown[]): Record<string, unknown> | undefined {
  for (let i = value.length - 1; i >= 0; i--) {
    const v = value[i];
    if (v !== null && typeof v === 'object' && !Array.isArray(v)) return v as Record<string, unknown>;
  }
  return undefined;
}

/** A record of a page as the sync takes it: removed when the vendor says it may not be shown (MlgCanView: false). */
function itemOf(
  record: Record<string, unknown>,
  keyField: string,
  position: { file: string; index: number },
): FeedItem {
  const key = record[keyField];
  const id = key === undefined || key === null ? undefined : String(key);
  const at = { ...position, ...(id !== undefined && { id, ids: recordIds(record, keyField, id) }) };
  return record.MlgCanView === false
    ? { kind: 'removed', position: at, data: record }
    : { kind: 'record', position: at, data: record };
}

/** The paging a pull used, and what to set when it missed records the server still has. */
function pagingAdvice(source: ResoSource, paging: Paging | undefined): { used: string; advice: string } {
  const profile = vendorProfile(source.vendor);
  if ((paging ?? source.paging) === 'keyset')
    return {
      used: 'source.paging: keyset',
      advice: 'set source.paging: nextLink if the server does not order by source.keyField',
    };
  const used = 'source.paging: nextLink ($skip links)';
  if (!profile.orderby)
    return {
      used,
      advice: `the ${profile.name} profile pages by nextLink only, so a pull's absences are always asked for by key`,
    };
  return {
    used,
    advice:
      'set source.paging: keyset if the server honours $orderby and $filter on source.keyField, so a change during the pull cannot shift its pages',
  };
}

/** The key and, when the record has one, its ListingId: the two names a person looks a listing up by. */
function recordIds(record: Record<string, unknown>, keyField: string, id: string): Record<string, string> {
  const listingId = record.ListingId;
  const ids: Record<string, string> = { [keyField]: id };
  if (keyField !== 'ListingId' && (typeof listingId === 'string' || typeof listingId === 'number'))
    ids.ListingId = String(listingId);
  return ids;
}
