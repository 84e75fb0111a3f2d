// RESO Web API (OData JSON) feed: pages of `value` followed by `@odata.nextLink`, ordered by
// ModificationTimestamp then key so an incremental pull can resume from a high-water mark.
//
// Incremental pulls ask for `ModificationTimestamp ge <mark>` — `ge`, not `gt`, because several
// records may share the mark's timestamp and some of them may sit on the next page of the last pull —
// and drop what was already seen at exactly the mark (same timestamp, key <= the mark's key).
// The reader never writes state: the sync hands in the stored mark (FeedContext.mark) and reads the
// mark reached (OpenedFeed.mark, once the pull ended whole), which it stores after a successful run.
//
// `path` replays a saved capture instead: a JSON file holding one page or an array of pages, or a
// folder of page files (read in name order). The mark applies the same way, so replaying the same
// capture incrementally a second time yields nothing new.
import { readdir, readFile, stat } from 'node:fs/promises';
import { join } from 'node:path';
import { z } from 'zod';
import { causeMessage, FeedReadError, RecordParseError } from '../errors.js';
import type { ResoSource } from './config-schema.js';
import { displayUrl, httpGet } from './http.js';
import { sourceBudget } from './source-budget.js';
import { feedPath } from './source.js';
import type { FeedContext, FeedItem, OpenedFeed } from './types.js';

const HighWaterMark = z.object({ ts: z.string(), key: z.string() });
type HighWaterMark = z.infer<typeof HighWaterMark>;

const Page = z.looseObject({
  value: z.array(z.unknown()),
  '@odata.nextLink': z.string().optional(),
});
type Page = z.infer<typeof Page>;

export function openReso(feedName: string, source: ResoSource, ctx: FeedContext): OpenedFeed {
  const label = source.path ?? displayUrl(source.url!);
  const wantIncremental = source.incremental && !ctx.full;
  let mode: OpenedFeed['mode'] = wantIncremental ? 'incremental' : 'full';
  let reached: HighWaterMark | undefined;
  let complete = false;

  async function* items(): AsyncIterable<FeedItem> {
    const stored = wantIncremental ? readMark(ctx, feedName, label) : undefined;
    if (!stored) mode = 'full';
    reached = stored;
    const since = stored ? Date.parse(stored.ts) : undefined;
    let index = 0;
    const pages = source.path ? replayPages(source.path, ctx, label) : fetchPages(source, stored, ctx, label);
    for await (const page of pages) {
      for (const raw of page.value) {
        const position = { file: label, index: index++ };
        if (raw === null || typeof raw !== 'object' || Array.isArray(raw)) {
          yield { kind: 'error', position, error: new RecordParseError('a value of the page is not an object', { file: label, record: position.index }) };
          continue;
        }
        const record = raw as Record<string, unknown>;
        const key = record[source.keyField];
        const ts = record.ModificationTimestamp;
        const id = key === undefined || key === null ? undefined : String(key);
        const at = { ...position, ...(id !== undefined && { id }) };
        if (stored && typeof ts === 'string' && id !== undefined && alreadySeen(ts, id, stored, since!)) continue;
        if (typeof ts === 'string' && id !== undefined && !Number.isNaN(Date.parse(ts))) {
          if (!reached || isAfter(ts, id, reached)) reached = { ts, key: id };
        }
        if (Array.isArray(record.Media)) record.Media = orderMedia(record.Media);
        yield record.MlgCanView === false ? { kind: 'removed', position: at, data: record } : { kind: 'record', position: at, data: record };
      }
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
      return complete && reached ? JSON.stringify(reached) : undefined;
    },
  };
}

function readMark(ctx: FeedContext, feedName: string, label: string): HighWaterMark | undefined {
  const text = ctx.mark;
  if (text === undefined) return undefined;
  try {
    return HighWaterMark.parse(JSON.parse(text));
  } catch (err) {
    ctx.logger.warn({ feed: feedName, file: label }, `stored RESO high-water mark is unreadable (${causeMessage(err)}); pulling everything`);
    return undefined;
  }
}

function alreadySeen(ts: string, key: string, mark: HighWaterMark, since: number): boolean {
  const t = Date.parse(ts);
  if (t < since) return true;
  return t === since && compareKeys(key, mark.key) <= 0;
}

function isAfter(ts: string, key: string, mark: HighWaterMark): boolean {
  const a = Date.parse(ts);
  const b = Date.parse(mark.ts);
  return a > b || (a === b && compareKeys(key, mark.key) > 0);
}

/** Keys compare as the server orders them: as strings (OData orders string keys by code point). */
function compareKeys(a: string, b: string): number {
  return a < b ? -1 : a > b ? 1 : 0;
}

function orderMedia(media: unknown[]): unknown[] {
  const order = (m: unknown) => {
    const o = (m as { Order?: unknown } | null)?.Order;
    return typeof o === 'number' ? o : Number(o ?? Number.MAX_SAFE_INTEGER);
  };
  return media
    .filter((m) => m !== null && typeof m === 'object' && typeof (m as { MediaURL?: unknown }).MediaURL === 'string')
    .map((m, i) => ({ m, i, o: order(m) }))
    .sort((x, y) => x.o - y.o || x.i - y.i)
    .map((x) => x.m);
}

function firstUrl(source: ResoSource, mark: HighWaterMark | undefined): string {
  const base = source.url!.replace(/\/+$/, '');
  const filters = [source.filter, mark && `ModificationTimestamp ge ${mark.ts}`].filter(Boolean) as string[];
  const params: string[] = [];
  if (filters.length) params.push(`$filter=${encodeURIComponent(filters.map((f) => (filters.length > 1 ? `(${f})` : f)).join(' and '))}`);
  params.push(`$orderby=${encodeURIComponent(`ModificationTimestamp,${source.keyField}`)}`);
  if (source.top) params.push(`$top=${source.top}`);
  if (source.select?.length) {
    const fields = new Set([...source.select, source.keyField, 'ModificationTimestamp']);
    params.push(`$select=${encodeURIComponent([...fields].join(','))}`);
  }
  if (source.expandMedia) params.push(`$expand=Media`);
  return `${base}/${source.resource}?${params.join('&')}`;
}

async function* fetchPages(source: ResoSource, mark: HighWaterMark | undefined, ctx: FeedContext, label: string): AsyncIterable<Page> {
  const headers: Record<string, string> = { accept: 'application/json', ...source.headers };
  if (source.maxPageSize) headers.prefer = `odata.maxpagesize=${source.maxPageSize}`;
  const budget = sourceBudget(source, ctx);
  let url: string | undefined = firstUrl(source, mark);
  let pageNo = 0;
  while (url) {
    const { body } = await httpGet(url, {
      headers,
      bearerToken: source.bearerToken,
      timeoutMs: source.timeoutMs,
      retries: source.retries,
      signal: ctx.signal,
      logger: ctx.logger,
      budget,
    });
    const chunks: Buffer[] = [];
    for await (const c of body) chunks.push(Buffer.from(c));
    const page = parsePage(Buffer.concat(chunks).toString('utf8'), `${label} page ${pageNo + 1}`);
    pageNo++;
    yield page;
    const next = page['@odata.nextLink'];
    url = next ? new URL(next, url).toString() : undefined;
    // a server that answers an empty page with a nextLink would loop forever
    if (next && page.value.length === 0) {
      throw new FeedReadError('the server sent an empty page with a nextLink', { file: label, record: `page ${pageNo}` }, false);
    }
  }
}

async function* replayPages(path: string, ctx: FeedContext, label: string): AsyncIterable<Page> {
  const full = feedPath(ctx, path);
  let files: string[];
  try {
    files = (await stat(full)).isDirectory()
      ? (await readdir(full)).filter((f) => f.endsWith('.json')).sort().map((f) => join(full, f))
      : [full];
  } catch (err) {
    throw new FeedReadError(`cannot open the saved RESO pages (${full}): ${causeMessage(err)}`, { file: label }, false, { cause: err });
  }
  for (const file of files) {
    const text = await readFile(file, 'utf8');
    let json: unknown;
    try {
      json = JSON.parse(text);
    } catch (err) {
      throw new FeedReadError(`saved RESO pages are not JSON: ${causeMessage(err)}`, { file }, false, { cause: err });
    }
    const pages = Array.isArray(json) ? json : [json];
    for (let i = 0; i < pages.length; i++) yield checkPage(pages[i], `${file} page ${i + 1}`);
  }
}

function parsePage(text: string, where: string): Page {
  let json: unknown;
  try {
    json = JSON.parse(text);
  } catch (err) {
    throw new FeedReadError(`the page is not JSON: ${causeMessage(err)}; starts ${JSON.stringify(text.slice(0, 80))}`, { file: where }, false, { cause: err });
  }
  return checkPage(json, where);
}

function checkPage(json: unknown, where: string): Page {
  const r = Page.safeParse(json);
  if (!r.success) throw new FeedReadError('not an OData page: expected { "value": [...] }', { file: where }, false);
  return r.data;
}
