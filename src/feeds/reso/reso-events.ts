// RESO EntityEvent (RCP-027, ratified December 2023; docs/reso-paging.md "Change feeds"), with
// `source.changes: entityEvent`: the server's log of which records changed, read instead of a pull.
// An event is `EntityEventSequence` (int64, only increases; gaps are legal), `ResourceName`,
// `ResourceRecordKey` (and an optional `ResourceRecordUrl`): no event type, no payload. So:
// - the log is polled from the mark: `EntityEvent?$filter=EntityEventSequence gt <mark>&$orderby=
//   EntityEventSequence`, following nextLinks on the feed's origin, at most source.maxPages pages;
//   a no-change poll is one request;
// - events are coalesced per (ResourceName, ResourceRecordKey); each changed record of the feed's
//   resource is fetched by key (the confirmation's lookup, reso-confirm.ts: batched, typed by
//   $metadata, within the budget) and yielded like any record read: an event is only a hint;
// - a key the server no longer returns (404, 400 or an empty answer, as the RCP allows: here an
//   empty answer to a by-key query) is gone: yielded `removed`, so the sync deletes it under the
//   guards; only where the listing key is the key field itself (otherwise the listing it names is
//   unknown: the report says so, and a reconcile or full pull removes it);
// - the mark is `{ ts, seq }`: the highest sequence read, handed back to the sync, which stores it
//   with the lane's commit after the writes, so a crash replays events rather than skipping them.
// The first pull (no sequence stored) is a pull (reso-reader.ts) that reads the log's newest
// sequence before it begins, and starts the log there.
import { z } from 'zod';
import { FeedReadError } from '../../errors.js';
import type { ResoSource } from '../config-schema.js';
import { displayUrl } from '../source/http.js';
import type { FeedContext, FeedItem, OpenedFeed, SourceReadStats } from '../types.js';
import type { Page, PageClient } from './reso-pages.js';
import { queryUrl, resourceUrl } from './reso-query.js';
import { openReso } from './reso-reader.js';

export const EVENT_RESOURCE = 'EntityEvent';
const SEQ = 'EntityEventSequence';

const Event = z.looseObject({
  [SEQ]: z.union([z.number().int().nonnegative(), z.string().regex(/^\d{1,19}$/)]),
  ResourceName: z.string().min(1).max(200),
  ResourceRecordKey: z.union([z.string().min(1).max(2048), z.number()]),
});

const EventMark = z.object({ seq: z.string().regex(/^\d{1,19}$/) });

/** The sequence a stored mark holds, when it holds one. */
export function storedSequence(mark: string | undefined): string | undefined {
  if (mark === undefined) return undefined;
  try {
    const r = EventMark.safeParse(JSON.parse(mark));
    return r.success ? r.data.seq : undefined;
  } catch {
    return undefined;
  }
}

const later = (a: string, b: string) => (BigInt(b) > BigInt(a) ? b : a);

export function openResoChanges(feedName: string, source: ResoSource, ctx: FeedContext, options: { backoffMs?: number } = {}): OpenedFeed {
  const pull = openReso(feedName, source, ctx, options);
  const client = pull.client!;
  const seq = source.incremental && !ctx.full ? storedSequence(ctx.mark) : undefined;
  if (seq !== undefined && ctx.mark !== undefined) return eventFeed(feedName, source, ctx, pull, seq);
  // a pull, with the log's newest sequence read before it begins: the log starts there
  let start: string | undefined;
  async function* items(): AsyncIterable<FeedItem> {
    start = await newestSequence(client, source);
    yield* pull.items;
  }
  return {
    items: items(),
    get mode() {
      return pull.mode;
    },
    get mark() {
      const m = pull.mark;
      return m !== undefined && start !== undefined ? JSON.stringify({ ...(JSON.parse(m) as object), seq: start }) : m;
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
  if (!r.success) throw new FeedReadError(`the EntityEvent log's newest event has no ${SEQ} that is a whole number`, { file: displayUrl(url) }, false);
  return String(r.data[SEQ]);
}

function eventFeed(feedName: string, source: ResoSource, ctx: FeedContext, pull: ReturnType<typeof openReso>, seq: string): OpenedFeed {
  const client = pull.client!;
  const label = displayUrl(resourceUrl(source.url!, EVENT_RESOURCE));
  const stats: SourceReadStats = {
    get pages() {
      return client.tally.total;
    },
    get requests() {
      return client.tally.total;
    },
    tally: client.tally,
    get bytes() {
      return client.bytes;
    },
    warnings: [],
    events: { read: 0, keys: 0, fetched: 0, gone: 0 },
  };
  let reached: string | undefined;
  const stored = JSON.parse(ctx.mark!) as Record<string, unknown>;

  async function* items(): AsyncIterable<FeedItem> {
    const { keys, last } = await pollLog(client, source, seq, stats, label);
    const fetched = new Set<string>();
    let index = 0;
    if (keys.size) {
      for await (const batch of pull.lookup!.find([{ field: source.keyField, values: [...keys] }])) {
        for (const item of batch) {
          const key = item.data?.[source.keyField];
          if (key !== undefined && key !== null) fetched.add(String(key));
          stats.events!.fetched++;
          index++;
          yield item;
        }
      }
    }
    for (const key of keys) {
      if (fetched.has(key)) continue;
      stats.events!.gone++;
      yield { kind: 'removed', position: { file: label, index: index++, id: key }, data: { [source.keyField]: key } };
    }
    reached = JSON.stringify({ ...stored, seq: last });
    ctx.logger.debug({ feed: feedName, seq: last, keys: keys.size }, 'EntityEvent log read');
  }

  return {
    items: items(),
    mode: 'incremental',
    get mark() {
      return reached;
    },
    ...(pull.lookup && { lookup: pull.lookup }),
    stats,
  };
}

/** The log from `seq` on: the keys of the feed's resource it names (coalesced), and the highest sequence read. */
async function pollLog(client: PageClient, source: ResoSource, seq: string, stats: SourceReadStats, label: string): Promise<{ keys: Set<string>; last: string }> {
  const keys = new Set<string>();
  let last = seq;
  const origin = new URL(source.url!).origin;
  let url: string | undefined = queryUrl(source.url!, EVENT_RESOURCE, { filter: `${SEQ} gt ${seq}`, orderby: SEQ });
  for (let n = 1; url; n++) {
    const where = { file: label, record: `event page ${n}` };
    if (n > source.maxPages) throw new FeedReadError(`the EntityEvent log has more than source.maxPages (${source.maxPages}) pages from sequence ${seq}`, where, false);
    const page: Page = await client.get(url, where.record, 'events');
    for (const raw of page.value) {
      const r = Event.safeParse(raw);
      if (!r.success) throw new FeedReadError(`an EntityEvent lacks ${SEQ}, ResourceName or ResourceRecordKey: ${JSON.stringify(raw).slice(0, 200)}`, where, false);
      stats.events!.read++;
      last = later(last, String(r.data[SEQ]));
      if (r.data.ResourceName === source.resource) keys.add(String(r.data.ResourceRecordKey));
    }
    const next = page['@odata.nextLink'];
    if (next) {
      const u: URL = new URL(next, url);
      if (u.origin !== origin) throw new FeedReadError(`the EntityEvent nextLink leads to another origin (${u.origin}); not followed`, where, false);
      url = u.toString();
    } else url = undefined;
  }
  stats.events!.keys = keys.size;
  return { keys, last };
}
