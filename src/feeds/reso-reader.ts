// RESO Web API (OData JSON) feed. The pull pages by keyset (reso-query.ts): by key for a full pull,
// by (ModificationTimestamp, key) from the mark for an incremental one, so records changed during the
// pull cannot tear it; or, with `paging: nextLink`, by the server's own @odata.nextLink, followed on
// the configured origin only, never twice to one URL. Every pull is bounded: source.maxPages pages,
// source.maxPageRecords records and source.maxPageBytes bytes a page, source.top records in all.
//
// The mark (what the next incremental pull starts from) is where the server stood when the pull
// began: its latest ModificationTimestamp not after our clock (and the same for the photos' own
// timestamp where the server has one), asked before the first page. A record changed during the pull
// is thus read again by the next one rather than lost, and a record stamped in the future, or a
// timestamp that does not parse, never becomes the mark. The reader never writes state: the sync
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
import { z } from 'zod';
import { causeMessage, FeedReadError, RecordParseError } from '../errors.js';
import type { ResoSource } from './config-schema.js';
import { displayUrl } from './http.js';
import { resoPageClient, type PageClient } from './reso-pages.js';
import { afterFilter, and, headQuery, isTimestampLiteral, laterOf, orderBy, queryUrl, sinceFilter, TS, usableTimestamp } from './reso-query.js';
import { resoLookup } from './reso-confirm.js';
import { replayPages } from './reso-replay.js';
import type { FeedContext, FeedItem, OpenedFeed } from './types.js';

const Mark = z.object({ ts: z.string().refine(isTimestampLiteral, 'not an ISO timestamp'), photos: z.string().refine(isTimestampLiteral).optional() });
type Mark = z.infer<typeof Mark>;

/** How many keys seen twice a read lists by name (the count is exact). */
const SEEN_TWICE_LISTED = 100;

/** What one RESO pull saw, for `feed preview` and the report. */
export interface ResoReadStats {
  pages: number;
  requests: number;
  /** keys (source.keyField) that came twice in this pull, the first 100 */
  keysSeenTwice: string[];
  keysSeenTwiceCount: number;
  /** the pull stopped at source.top */
  capped: boolean;
}

export interface OpenedResoFeed extends OpenedFeed {
  readonly stats: ResoReadStats;
}

interface PullState {
  mark?: Mark;
  capped: boolean;
  pages: number;
  /** the last record read, in the pull's order (an incremental pull cut short by top resumes after it) */
  lastTs?: string;
  /** an incremental $skip page shifted: everything before this record's timestamp was read */
  shiftedAt?: string;
}

export function openReso(feedName: string, source: ResoSource, ctx: FeedContext, options: { backoffMs?: number } = {}): OpenedResoFeed {
  const label = source.path ?? displayUrl(source.url!);
  const wantIncremental = source.incremental && !ctx.full;
  let mode: OpenedFeed['mode'] = wantIncremental ? 'incremental' : 'full';
  let complete = false;
  let since: string | undefined;
  const state: PullState = { capped: false, pages: 0 };
  const stats: ResoReadStats = { pages: 0, requests: 0, keysSeenTwice: [], keysSeenTwiceCount: 0, capped: false };
  const client = source.path ? undefined : resoPageClient(source, ctx, options);

  async function* items(): AsyncIterable<FeedItem> {
    const stored = wantIncremental ? readMark(ctx, feedName, label) : undefined;
    if (!stored) mode = 'full';
    since = stored?.ts;
    const now = Date.now();
    const seen = new Set<string>();
    let index = 0;
    const pages = client ? livePages(source, client, stored, state, now) : replayPages(source.path!, ctx, label, source.maxPageRecords);
    if (!client) state.mark = stored;
    try {
      for await (const value of pages) {
        for (const raw of value) {
          const position = { file: label, index: index++ };
          if (raw === null || typeof raw !== 'object' || Array.isArray(raw)) {
            const error = new RecordParseError('a value of the page is not an object', { file: label, record: position.index });
            yield { kind: 'error', position, error, standalone: true };
            continue;
          }
          const record = raw as Record<string, unknown>;
          const item = itemOf(record, source.keyField, position);
          const id = item.position.id;
          if (!client) {
            // a replay is filtered here as a server would filter it (ge: the mark's own timestamp again)
            const t = Date.parse(String(record[TS]));
            if (stored && !(t >= Date.parse(stored.ts))) continue;
            const ts = usableTimestamp(record[TS], now);
            if (ts) state.mark = { ts: laterOf(state.mark?.ts, ts)! };
          }
          if (id !== undefined) {
            if (seen.has(id)) {
              if (stats.keysSeenTwice.length < SEEN_TWICE_LISTED) stats.keysSeenTwice.push(id);
              stats.keysSeenTwiceCount++;
            } else seen.add(id);
          }
          yield item;
        }
      }
    } finally {
      stats.pages = state.pages;
      stats.requests = client?.requests ?? 0;
      stats.capped = state.capped;
    }
    if (state.capped && mode === 'full') {
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
      ctx.logger.warn({ feed: feedName, file: label, mark: state.mark.ts }, `a $skip page shifted during the incremental pull (records before it left the result): the next pull asks again from ${state.mark.ts}`);
    }
    complete = true;
  }

  const paging = source.paging === 'keyset'
    ? { used: 'source.paging: keyset', advice: 'set source.paging: nextLink if the server does not order by source.keyField' }
    : { used: 'source.paging: nextLink ($skip links)', advice: 'set source.paging: keyset if the server honours $orderby and $filter on source.keyField, so a change during the pull cannot shift its pages' };
  return {
    items: items(),
    ...(client && {
      lookup: resoLookup(source, {
        client,
        label,
        paging,
        nextLink: (next, current, where) => nextLinkUrl(next, current, new URL(source.url!).origin, where),
        itemOf: (record, index) => itemOf(record, source.keyField, { file: label, index }),
      }),
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
  };
}

function readMark(ctx: FeedContext, feedName: string, label: string): Mark | undefined {
  if (ctx.mark === undefined) return undefined;
  try {
    return Mark.parse(JSON.parse(ctx.mark));
  } catch (err) {
    ctx.logger.warn({ feed: feedName, file: label }, `stored RESO high-water mark is unreadable (${causeMessage(err)}); pulling everything`);
    return undefined;
  }
}

/** The pages of a live pull: first where the server stands (the next mark), then keyset or nextLink pages. */
async function* livePages(source: ResoSource, client: PageClient, stored: Mark | undefined, state: PullState, now: number): AsyncIterable<unknown[]> {
  const base = source.url!;
  const nowIso = new Date(now).toISOString();
  const head = async (field: string) => {
    const page = await client.get(queryUrl(base, source.resource, headQuery(field, source.filter, nowIso)), `latest ${field}`);
    const first = page.value[0];
    return first !== null && typeof first === 'object' && !Array.isArray(first) ? (first as Record<string, unknown>) : undefined;
  };
  const latest = await head(TS);
  const photosField = source.photosTimestampField;
  // the photos' timestamp is used where the server has it: the latest record (all fields) shows it
  const photos = photosField && (latest ? photosField in latest : Boolean(stored?.photos)) ? photosField : null;
  const ts = laterOf(stored?.ts, usableTimestamp(latest?.[TS], now));
  const photosTs = photos ? laterOf(stored?.photos, usableTimestamp((await head(photos))?.[photos], now)) : undefined;
  state.mark = ts ? { ts, ...(photosTs && { photos: photosTs }) } : undefined;

  const order = stored ? 'time' : 'key';
  const since = stored ? sinceFilter(stored, photos) : undefined;
  const select = source.select?.length ? [...new Set([...source.select, source.keyField, TS, ...(photos ? [photos] : [])])] : undefined;
  const query = (after: string | undefined, top: number | undefined) =>
    queryUrl(base, source.resource, { filter: and(source.filter, since, after), orderby: orderBy(order, source.keyField), top, select, expandMedia: source.expandMedia });
  const origin = new URL(base).origin;
  const asked = new Set<string>();
  const inOrder = pageOrder(order, source.keyField);
  /** incremental $skip paging: the record the next page is asked to start with again */
  let overlap: Record<string, unknown> | undefined;
  let read = 0;
  let url = query(undefined, source.top);
  for (let n = 1; ; n++) {
    const where = { file: displayUrl(url), record: `page ${n}` };
    if (n > source.maxPages) throw new FeedReadError(`more than source.maxPages (${source.maxPages}) pages: the pull stopped there and is not complete`, where, false);
    if (asked.has(url)) throw new FeedReadError(`page ${n} would ask for an earlier page again (${displayUrl(url)}): the server's paging loops; the pull is not complete`, where, false);
    asked.add(url);
    const page = await client.get(url, `page ${n}`);
    state.pages = n;
    if (overlap) {
      const first = page.value[0];
      if (sameRecord(first, overlap, source.keyField)) page.value.shift();
      else state.shiftedAt ??= overlap[TS] as string;
      overlap = undefined;
    }
    const value = source.top !== undefined && read + page.value.length > source.top ? page.value.slice(0, source.top - read) : page.value;
    const disorder = source.paging === 'keyset' ? inOrder(value) : undefined;
    if (disorder) {
      yield value.slice(0, disorder.at); // the records before it were asked for and came in order
      throw new FeedReadError(
        `${disorder.what}: the server ignores $orderby=${orderBy(order, source.keyField)}, so paging by key would skip records; the pull stopped here and is not complete (${disorder.advice})`,
        where,
        false,
      );
    }
    read += value.length;
    const last = lastRecord(value);
    if (last && isTimestampLiteral(last[TS])) state.lastTs = last[TS];
    yield value;
    if (source.top !== undefined && read >= source.top) {
      state.capped = true;
      return;
    }
    if (source.paging === 'keyset') {
      if (value.length === 0) return;
      if (!last || last[source.keyField] === undefined || last[source.keyField] === null) {
        throw new FeedReadError(`the last record of page ${n} has no ${source.keyField}: keyset paging cannot go on after it (set source.keyField)`, where, false);
      }
      if (order === 'time' && !isTimestampLiteral(last[TS])) {
        throw new FeedReadError(`the last record of page ${n} has ${TS} ${JSON.stringify(last[TS])}, not a timestamp: keyset paging cannot go on after it`, where, false);
      }
      url = query(afterFilter(order, source.keyField, { key: last[source.keyField], ts: last[TS] as string | undefined }), source.top && source.top - read);
    } else {
      const next = page['@odata.nextLink'];
      if (!next) return;
      url = nextLinkUrl(next, url, origin, where);
      if (order === 'time' && last) {
        const early = oneEarlier(url);
        if (early) {
          url = early;
          overlap = last;
        }
      }
    }
  }
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
 */
function pageOrder(order: 'key' | 'time', keyField: string): (value: unknown[]) => { at: number; what: string; advice: string } | undefined {
  let prev: Record<string, unknown> | undefined;
  const ways = { exact: true, folded: true };
  return (value) => {
    for (let i = 0; i < value.length; i++) {
      const r = value[i];
      if (r === null || typeof r !== 'object' || Array.isArray(r)) continue;
      const rec = r as Record<string, unknown>;
      if (prev) {
        const byTime = order === 'time' ? Date.parse(String(rec[TS])) - Date.parse(String(prev[TS])) : 0;
        if (byTime < 0 || Number.isNaN(byTime)) return disorder(i, rec, prev);
        if (byTime === 0) {
          // (a key equal to the one before is a repeat, not disorder: the sync's read-whole check takes it)
          ways.exact &&= compareKeys(prev[keyField], rec[keyField], false) <= 0;
          ways.folded &&= compareKeys(prev[keyField], rec[keyField], true) <= 0;
          if (!ways.exact && !ways.folded) return disorder(i, rec, prev);
        }
      }
      prev = rec;
    }
    return undefined;
  };
  function disorder(at: number, rec: Record<string, unknown>, before: Record<string, unknown>) {
    const show = (x: Record<string, unknown>) => (order === 'key' ? JSON.stringify(x[keyField]) : `${JSON.stringify(x[keyField])} (${String(x[TS])})`);
    return {
      at,
      what: `record ${show(rec)} came after ${show(before)}, out of order`,
      advice: order === 'key' ? 'set source.paging: nextLink for this server' : 'set source.paging: nextLink for this server, or incremental: false',
    };
  }
}

function compareKeys(a: unknown, b: unknown, folded: boolean): number {
  if (typeof a === 'number' && typeof b === 'number') return a - b;
  const x = folded ? String(a).toLowerCase() : String(a);
  const y = folded ? String(b).toLowerCase() : String(b);
  return x < y ? -1 : x > y ? 1 : 0;
}

/** A nextLink is followed on the configured origin only, over http(s): the feed's credentials go with it. */
function nextLinkUrl(next: string, current: string, origin: string, where: { file: string; record: string }): string {
  let url: URL;
  try {
    url = new URL(next, current);
  } catch {
    throw new FeedReadError(`the @odata.nextLink ${JSON.stringify(next.slice(0, 200))} is not a URL; the pull is not complete`, where, false);
  }
  if (url.protocol !== 'http:' && url.protocol !== 'https:') {
    throw new FeedReadError(`the @odata.nextLink is a ${url.protocol} URL: only http(s) is followed; the pull is not complete`, where, false);
  }
  if (url.origin !== origin) {
    throw new FeedReadError(
      `the @odata.nextLink leads to another origin (${url.origin}); the feed's credentials never leave ${origin}, so it is not followed and the pull is not complete`,
      where,
      false,
    );
  }
  return url.toString();
}

function lastRecord(value: unknown[]): Record<string, unknown> | undefined {
  for (let i = value.length - 1; i >= 0; i--) {
    const v = value[i];
    if (v !== null && typeof v === 'object' && !Array.isArray(v)) return v as Record<string, unknown>;
  }
  return undefined;
}

/** A record of a page as the sync takes it: removed when the vendor says it may not be shown (MlgCanView: false). */
function itemOf(record: Record<string, unknown>, keyField: string, position: { file: string; index: number }): FeedItem {
  const key = record[keyField];
  const id = key === undefined || key === null ? undefined : String(key);
  const at = { ...position, ...(id !== undefined && { id, ids: recordIds(record, keyField, id) }) };
  return record.MlgCanView === false ? { kind: 'removed', position: at, data: record } : { kind: 'record', position: at, data: record };
}

/** The key and, when the record has one, its ListingId: the two names a person looks a listing up by. */
function recordIds(record: Record<string, unknown>, keyField: string, id: string): Record<string, string> {
  const listingId = record.ListingId;
  const ids: Record<string, string> = { [keyField]: id };
  if (keyField !== 'ListingId' && (typeof listingId === 'string' || typeof listingId === 'number')) ids.ListingId = String(listingId);
  return ids;
}
