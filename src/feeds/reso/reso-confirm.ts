// Asking a RESO server for particular records by key, to confirm the absences of a full pull before
// anything is deleted for them (issue 22): a server that ignores $orderby, scrambles its answers, or
// pages with $skip while records are deleted can leave records out of a pull that it still has.
//
// Keys go out as `$filter=(<vendor term>) and (<the feed's filter>) and (Field eq 'a' or Field eq 'b'
// or …)` (reso-query.ts keyFilters: the vendor profile's required term, its searchable fields and its
// `or` limit) with the feed's $select and $expand, batched so that no URL, as sent (percent-encoded), is longer than MAX_URL
// characters (IIS, behind many RESO servers, refuses a query string past 2,048 bytes by default).
// `eq … or` rather than `in`: `in` is OData 4.01, which not every RESO server speaks. Keys go as the
// server's `$metadata` types the field (read once; `Edm.Int64` bare: a server answers a quoted number
// with a 400), quoted when it has none; a field `$metadata` does not list, or a key its type cannot
// hold (a text key of an `Edm.Int64` field), is asked anyway, quoted, in requests of its own: the
// records were read by it, so `$metadata` is what is wrong, and a lookup that asked nothing would
// answer "gone" for keys the server holds (issue 49). A server that refuses that fails the lookup,
// saying why. A field the vendor does not let a filter name (MLS Grid's ListingKey) is found in a keys-only read instead, and the records still there are asked for by the
// searchable field the vendor profile names (`confirmBy`: ListingId); without such a field the
// confirmation fails.
// Requests go through the feed's page client,
// so they count against the source's request budget (source.limits) and carry its credentials; an
// answer's own @odata.nextLink is followed on the feed's origin. All of it is bounded by
// source.maxPages requests: past that the confirmation fails, and a failed confirmation deletes nothing.
import { FeedReadError, formatPlace, RecordParseError } from '../../errors.js';
import type { ResoSource } from '../config-schema.js';
import { typedLiteral } from './reso-metadata.js';
import type { PageClient } from './reso-pages.js';
import { keyFilters, pageSize, queryUrl, TS } from './reso-query.js';
import type { FeedItem, KeyAsk, KeyLookup } from '../types.js';
import { vendorProfile } from '../vendors/registry.js';

/** The longest URL a confirmation sends (one key longer than that still goes, alone). */
export const MAX_URL = 2048;

export interface LookupDeps {
  client: PageClient;
  /** the pull's label for positions (the feed URL without its query) */
  label: string;
  /** how the pull paged, and what a person should set when it missed records (asked once the pull is read) */
  paging(): KeyLookup['paging'];
  /** an @odata.nextLink, checked as the pull checks it (origin, protocol), made absolute */
  nextLink(next: string, current: string, origin: string, where: { file: string; record: string }): string;
  /** the record's item, as the pull yields it (removed when MlgCanView is false) */
  itemOf(record: Record<string, unknown>, index: number): FeedItem;
  /** the resource's field → Edm type by the server's $metadata (read once); undefined when it could not be read */
  fieldTypes(): Promise<ReadonlyMap<string, string> | undefined>;
  /** every record the feed's filter selects, with these fields only (a keys-only read), a page at a time */
  keysOnly(fields: readonly string[]): AsyncIterable<Array<Record<string, unknown>>>;
}

export function resoLookup(source: ResoSource, deps: LookupDeps): KeyLookup {
  const profile = vendorProfile(source.vendor);
  const origin = new URL(source.url!).origin;
  const searchable = (field: string) => keyFilters(profile, field, [], source) !== undefined;
  return {
    get paging() {
      return deps.paging();
    },
    idField: source.keyField,
    async *find(wanted) {
      const types = (await deps.fieldTypes()) ?? new Map<string, string>();
      // an optional field the server's $metadata lacks holds no record's value (a server lacking CoListAgentKey): not asked
      const held = wanted.filter((a) => !a.optional || types.size === 0 || types.has(a.field));
      if (wanted.length && !held.length) return;
      const asks = typedAsks(
        held.filter((a) => searchable(a.field)),
        types,
      );
      const hidden = held.filter((a) => !searchable(a.field));
      const index = { next: 0 };
      if (hidden.length && profile.confirmBy && searchable(profile.confirmBy)) {
        const { by, unasked } = await byConfirmField(hidden, profile.confirmBy, deps);
        asks.push(...typedAsks([{ field: profile.confirmBy, values: by }], types));
        // on the server, but with no value of the field it could be asked by: kept, never deleted
        if (unasked.length) yield unasked.map((r) => unaskable(r, profile.confirmBy!, deps.label, index.next++));
      } else if (asks.length === 0) {
        throw new FeedReadError(
          `the ${profile.name} profile lets no filter name ${wanted.map((a) => a.field).join(' or ')}, so absences cannot be asked for by key`,
          { file: deps.label },
          false,
        );
      }
      yield* askAll(asks, { source, deps, origin, index });
    },
  };
}

/**
 * An ask as the server's `$metadata` types its field: the values its Edm type takes (Edm.Int64
 * bare), and apart, quoted, those it cannot type, with why. A field `$metadata` does not list, or a
 * value its type cannot hold (a text key of an `Edm.Int64` field), is still asked: the records were
 * read by it, so the `$metadata` is what is wrong, and a lookup that asked nothing would answer
 * "gone" for keys the server holds. A server that refuses the quoted literal fails the lookup.
 */
interface TypedAsk extends KeyAsk {
  type: string | undefined;
  /** why the values go quoted though `$metadata` was read (said when the server refuses them) */
  untyped?: string;
}

function typedAsks(asks: readonly KeyAsk[], types: ReadonlyMap<string, string>): TypedAsk[] {
  const out: TypedAsk[] = [];
  for (const a of asks) {
    const type = types.get(a.field);
    if (types.size > 0 && type === undefined) {
      out.push({
        field: a.field,
        values: a.values,
        type,
        untyped: `the server's $metadata does not list ${a.field} in the entity type`,
      });
      continue;
    }
    const ok = a.values.filter((v) => typedLiteral(v, type) !== undefined);
    const rest = a.values.filter((v) => typedLiteral(v, type) === undefined);
    if (ok.length) out.push({ field: a.field, values: ok, type });
    if (rest.length) {
      const untyped = `the server's $metadata types ${a.field} ${type}, which ${rest.length} key(s) (${JSON.stringify(rest[0])}${rest.length > 1 ? ', …' : ''}) cannot be`;
      out.push({ field: a.field, values: rest, type: undefined, untyped });
    }
  }
  return out;
}

/** Every ask's records, batched within the URL and `or` limits, a request's answer at a time; bounded by source.maxPages requests. */
async function* askAll(
  asks: readonly TypedAsk[],
  at: { source: ResoSource; deps: LookupDeps; origin: string; index: { next: number } },
): AsyncIterable<FeedItem[]> {
  const { source, deps, origin, index } = at;
  const profile = vendorProfile(source.vendor);
  const select = source.select?.length
    ? [...new Set([...source.select, source.keyField, TS, ...asks.map((a) => a.field)])]
    : undefined;
  const top = profile.pageSizeBy === 'top' ? pageSize(source, profile) : undefined;
  let requests = 0;
  for (const ask of asks) {
    const url = (field: string, values: string[]) =>
      queryUrl(source.url!, source.resource, {
        filter: keyFilters(profile, field, values, source, ask.type)![0],
        top,
        select,
        expandMedia: source.expandMedia,
        expandOpenHouse: source.expandOpenHouse,
      });
    for (const [field, values] of batches([ask], url, profile.maxOrTerms ?? 50)) {
      let next: string | undefined = url(field, values);
      while (next) {
        requests++;
        const what = `confirmation request ${requests}`;
        if (requests > source.maxPages) {
          throw new FeedReadError(
            `confirming the pull's absences would take more than source.maxPages (${source.maxPages}) requests, so they are not confirmed`,
            { file: deps.label, record: what },
            false,
          );
        }
        let page: Awaited<ReturnType<PageClient['get']>>;
        try {
          page = await deps.client.get(next, what, 'byKey');
        } catch (err) {
          throw ask.untyped === undefined ? err : refusedQuoted(ask, err, { file: deps.label, record: what });
        }
        const items: FeedItem[] = [];
        for (const raw of page.value) {
          if (raw !== null && typeof raw === 'object' && !Array.isArray(raw))
            items.push(deps.itemOf(raw as Record<string, unknown>, index.next++));
        }
        yield items;
        const link = page['@odata.nextLink'];
        next = link ? deps.nextLink(link, next, origin, { file: deps.label, record: what }) : undefined;
      }
    }
  }
}

/** The server refused keys asked for quoted because its `$metadata` could not type them: the lookup fails, saying why. */
function refusedQuoted(ask: TypedAsk, err: unknown, place: { file: string; record: string }): unknown {
  if (!(err instanceof FeedReadError) || err.credentialKey !== undefined || err.retryable) return err;
  // the server's own words, without the place it repeats
  const prefix = `${formatPlace(err.place)}: `;
  const answer = err.message.startsWith(prefix) ? err.message.slice(prefix.length) : err.message;
  return new FeedReadError(
    `${ask.untyped}, so its keys were asked for as text (quoted), and the server refused that (${answer}): they are neither found nor taken for gone, and nothing is deleted for them`,
    place,
    false,
    // (no cause: its words are in the message, and a cause's chain would repeat them)
    err.status !== undefined ? { status: err.status } : undefined,
  );
}

/**
 * Keys of fields no filter may name, found in a keys-only read of the feed (their field and the
 * profile's confirm field): the confirm field's values of those on the server (asked for next), and
 * the rows of those that have none (on the server, so never deleted, but not to be asked for).
 */
async function byConfirmField(
  hidden: readonly KeyAsk[],
  confirmBy: string,
  deps: LookupDeps,
): Promise<{ by: string[]; unasked: Array<Record<string, unknown>> }> {
  const wanted = hidden.map((a) => ({ field: a.field, values: new Set(a.values) }));
  const by = new Set<string>();
  const unasked: Array<Record<string, unknown>> = [];
  for await (const rows of deps.keysOnly([...new Set([...hidden.map((a) => a.field), confirmBy])])) {
    for (const row of rows) {
      if (!wanted.some((w) => w.values.has(String(row[w.field])))) continue;
      const value = row[confirmBy];
      if (typeof value === 'string' || typeof value === 'number') by.add(String(value));
      else unasked.push(row);
    }
  }
  return { by: [...by], unasked };
}

function unaskable(row: Record<string, unknown>, confirmBy: string, label: string, index: number): FeedItem {
  const error = new RecordParseError(
    `the server still has this record, but it has no ${confirmBy}, the field it could be asked for by: kept, not read`,
    {
      file: label,
      record: index,
    },
  );
  return { kind: 'error', position: { file: label, index }, error, data: row, standalone: true };
}

/** The values of each ask in groups of at most `maxTerms` whose URL, as sent (percent-encoded: queryUrl), stays within MAX_URL. */
export function* batches(
  asks: readonly KeyAsk[],
  url: (field: string, values: string[]) => string,
  maxTerms = Number.POSITIVE_INFINITY,
): Generator<[string, string[]]> {
  for (const ask of asks) {
    let batch: string[] = [];
    for (const value of ask.values) {
      if (batch.length && (batch.length >= maxTerms || sentLength(url(ask.field, [...batch, value])) > MAX_URL)) {
        yield [ask.field, batch];
        batch = [];
      }
      batch.push(value);
    }
    if (batch.length) yield [ask.field, batch];
  }
}

/** The length of a URL as it goes out (a URL parser percent-encodes what the string left, `'` among it). */
function sentLength(url: string): number {
  return new URL(url).href.length;
}
