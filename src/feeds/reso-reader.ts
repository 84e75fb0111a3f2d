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
// `path` replays saved pages instead (reso-replay.ts); the mark then is the latest usable timestamp
// replayed, and an incremental replay drops records older than the stored mark.
import { z } from 'zod';
import { causeMessage, FeedReadError, RecordParseError } from '../errors.js';
import type { ResoSource } from './config-schema.js';
import { displayUrl } from './http.js';
import { resoPageClient, type PageClient } from './reso-pages.js';
import { afterFilter, and, headQuery, isTimestampLiteral, laterOf, orderBy, queryUrl, sinceFilter, TS, usableTimestamp } from './reso-query.js';
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
}

export function openReso(feedName: string, source: ResoSource, ctx: FeedContext, options: { backoffMs?: number } = {}): OpenedResoFeed {
  const label = source.path ?? displayUrl(source.url!);
  const wantIncremental = source.incremental && !ctx.full;
  let mode: OpenedFeed['mode'] = wantIncremental ? 'incremental' : 'full';
  let complete = false;
  let since: string | undefined;
  const state: PullState = { capped: false, pages: 0 };
  const stats: ResoReadStats = { pages: 0, requests: 0, keysSeenTwice: [], keysSeenTwiceCount: 0, capped: false };
  const client = source.path ? undefined : resoPageClient(source, ctx, { ...options, scope: feedName });

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
          const key = record[source.keyField];
          const id = key === undefined || key === null ? undefined : String(key);
          const at = { ...position, ...(id !== undefined && { id, ids: recordIds(record, source.keyField, id) }) };
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
          yield record.MlgCanView === false ? { kind: 'removed', position: at, data: record } : { kind: 'record', position: at, data: record };
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
    complete = true;
  }

  return {
    items: items(),
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
  let read = 0;
  let url = query(undefined, source.top);
  for (let n = 1; ; n++) {
    const where = { file: displayUrl(url), record: `page ${n}` };
    if (n > source.maxPages) throw new FeedReadError(`more than source.maxPages (${source.maxPages}) pages: the pull stopped there and is not complete`, where, false);
    if (asked.has(url)) throw new FeedReadError(`page ${n} would ask for an earlier page again (${displayUrl(url)}): the server's paging loops; the pull is not complete`, where, false);
    asked.add(url);
    const page = await client.get(url, `page ${n}`);
    state.pages = n;
    const value = source.top !== undefined && read + page.value.length > source.top ? page.value.slice(0, source.top - read) : page.value;
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
    }
  }
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

/** The key and, when the record has one, its ListingId: the two names a person looks a listing up by. */
function recordIds(record: Record<string, unknown>, keyField: string, id: string): Record<string, string> {
  const listingId = record.ListingId;
  const ids: Record<string, string> = { [keyField]: id };
  if (keyField !== 'ListingId' && (typeof listingId === 'string' || typeof listingId === 'number')) ids.ListingId = String(listingId);
  return ids;
}
