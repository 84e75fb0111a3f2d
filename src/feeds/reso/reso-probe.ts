// `feed probe`: a few small requests that say what a RESO server accepts, and the source settings to
// use (or that the vendor profile's fit). Bounded: at most PROBES requests, each asking one record
// (the page-size probe asks the key field alone), all through the source's budget. A vendor profile
// is only asked what it would send (never what its documentation says it refuses: a refusal may
// count against the token); the standard profile is asked everything.
import { causeMessage, FeedReadError } from '../../errors.js';
import type { ResoSource } from '../config-schema.js';
import { resoPageClient, type Page, type PageClient } from './reso-pages.js';
import { and, compareKeys, keyLiteral, pageSize, queryUrl, TS, type QueryParts } from './reso-query.js';
import type { FeedContext } from '../types.js';
import type { VendorProfile } from '../vendors/profile.js';
import { vendorProfile } from '../vendors/registry.js';
import { chooseChanges, type ChangesChoice } from './reso-events.js';
import { readMetadata } from './reso-metadata.js';

export interface ProbeResult {
  /** what was asked, e.g. "$orderby=ListingKey" */
  what: string;
  ok: boolean;
  /** the server's refusal (its OData error.message), or what the answer showed */
  detail: string;
}

export interface ProbeReport {
  vendor: string;
  results: ProbeResult[];
  /** every request sent to the server (each retry included), and the OAuth2 token endpoint's calls apart */
  requests: number;
  tokenCalls: number;
  compression: string;
  quotaHeaders: string[];
  /** the settings the answers point to */
  settings: { paging: 'keyset' | 'nextLink'; maxPageSize?: number; expandMedia: boolean; select: boolean };
  /** where those differ from the source's */
  differences: string[];
  /** how an incremental pull finds changes (source.changes; auto: by what the server's $metadata offers), and why */
  changes: ChangesChoice;
}

const QUOTA = /quota|ratelimit|rate-limit|retry-after/i;
/** records asked each way to see whether the server orders by the key */
const ORDER_PROBE = 5;

/** Whether the records' keys come in `dir` order (1 ascending, -1 descending), by code unit or case-folded. */
function inOrder(value: unknown[], keyField: string, dir: 1 | -1): boolean {
  const keys = value
    .map((v) => (v !== null && typeof v === 'object' ? (v as Record<string, unknown>)[keyField] : undefined))
    .filter((k) => k !== undefined && k !== null);
  const monotone = (fold: boolean) => keys.every((k, i) => i === 0 || compareKeys(keys[i - 1], k, fold) * dir <= 0);
  return monotone(false) || monotone(true);
}

/** Asks one thing of the server, noting what it accepted or refused, its compression and quota headers. */
class Asker {
  readonly results: ProbeResult[] = [];
  compression = 'none';
  readonly quota = new Set<string>();

  constructor(
    private readonly client: PageClient,
    private readonly source: ResoSource,
  ) {}

  async ask(what: string, q: QueryParts): Promise<Page | undefined> {
    try {
      const page = await this.client.get(queryUrl(this.source.url!, this.source.resource, q), what);
      const headers = this.client.lastHeaders;
      if (headers?.get('content-encoding')) this.compression = headers.get('content-encoding')!;
      headers?.forEach((_v, name) => QUOTA.test(name) && this.quota.add(name));
      this.results.push({
        what,
        ok: true,
        detail: `${page.value.length} record(s)${page['@odata.nextLink'] ? ', with a nextLink' : ''}`,
      });
      return page;
    } catch (err) {
      if (!(err instanceof FeedReadError) || err.status === undefined || err.status === 401 || err.status >= 500)
        throw err;
      this.results.push({ what, ok: false, detail: causeMessage(err) });
      return undefined;
    }
  }
}

/** Whether keyset paging holds: `$orderby` by the key honoured both ways (several records each), and a key filter after `key` (the first record's) accepted with it. */
async function probeKeyset(asker: Asker, keyField: string, base: string | undefined, key: unknown): Promise<boolean> {
  // several records each way: one record cannot be out of order, and a key-sorted server that ignores $orderby looks right ascending
  const several = { top: ORDER_PROBE };
  const up = await asker.ask(`$orderby=${keyField} (${ORDER_PROBE} records)`, {
    filter: base,
    orderby: keyField,
    ...several,
  });
  const down =
    up &&
    (await asker.ask(`$orderby=${keyField} desc (${ORDER_PROBE} records)`, {
      filter: base,
      orderby: `${keyField} desc`,
      ...several,
    }));
  const honoured = up && down && inOrder(up.value, keyField, 1) && inOrder(down.value, keyField, -1);
  if (up && down && !honoured)
    asker.results.push({
      what: `$orderby=${keyField}`,
      ok: false,
      detail: `the server ignores $orderby: ${ORDER_PROBE} records asked ascending and descending by ${keyField} did not come in that order`,
    });
  if (key === undefined) return false;
  const after = await asker.ask(`$filter=${keyField} gt ${keyLiteral(key)} with $orderby`, {
    filter: and(base, `${keyField} gt ${keyLiteral(key)}`),
    orderby: keyField,
    top: 1,
  });
  return Boolean(honoured && after);
}

/** The page-size cap: the key field alone, as many as the profile allows in a page; undefined when the server sent all asked. */
async function probePageSize(
  asker: Asker,
  source: ResoSource,
  profile: VendorProfile,
  base: string | undefined,
  select: boolean,
): Promise<{ asked: number; cap?: number }> {
  const asked = profile.pageSizeBy === 'top' ? pageSize({ ...source, expandMedia: false }, profile) : 1000;
  const sized = await asker.ask(`a page of ${asked} (key field only)`, {
    filter: base,
    select: select ? [source.keyField] : undefined,
    top: asked,
  });
  const cap = sized && sized['@odata.nextLink'] && sized.value.length < asked ? sized.value.length : undefined;
  return { asked, ...(cap !== undefined && { cap }) };
}

/** Where the settings the answers point to differ from the source's. */
function differencesOf(source: ResoSource, settings: ProbeReport['settings'], asked: number, cap?: number): string[] {
  const differences: string[] = [];
  if (settings.paging !== (source.paging ?? 'keyset'))
    differences.push(`paging: ${settings.paging} (the source says ${source.paging ?? 'keyset'})`);
  if (cap !== undefined && (source.maxPageSize ?? Infinity) > cap)
    differences.push(`maxPageSize: ${cap} (the server sent ${cap} of ${asked} with a nextLink)`);
  if (!settings.expandMedia && source.expandMedia)
    differences.push('expandMedia: false (the server refused $expand=Media)');
  if (!settings.select && source.select?.length) differences.push('select: none (the server refused $select)');
  return differences;
}

export async function probeReso(
  source: ResoSource,
  ctx: FeedContext,
  options: { backoffMs?: number } = {},
): Promise<ProbeReport> {
  if (!source.url)
    throw new FeedReadError(
      'feed probe asks a live server: this source replays a file (path)',
      { file: source.path ?? '' },
      false,
    );
  const profile = vendorProfile(source.vendor);
  const client = resoPageClient({ ...source, retries: Math.min(source.retries, 1), maxPageSize: undefined }, ctx, {
    ...options,
    kind: 'probe',
  });
  const required = profile.requiredFilter && source[profile.requiredFilter.sourceKey];
  const base = and(required ? `${profile.requiredFilter!.field} eq ${keyLiteral(required)}` : undefined, source.filter);
  const one = { top: 1 };
  const asker = new Asker(client, source);

  const first = await asker.ask(`the resource${base ? ` with $filter=${base}` : ''}`, { filter: base, ...one });
  const record = first?.value[0] as Record<string, unknown> | undefined;
  const ts = record?.[TS];
  const keyset = profile.orderby && (await probeKeyset(asker, source.keyField, base, record?.[source.keyField]));
  if (typeof ts === 'string')
    await asker.ask(`$filter=${TS} ${profile.since} ${ts}`, {
      filter: and(base, `${TS} ${profile.since} ${ts}`),
      ...one,
    });
  const select = Boolean(
    await asker.ask(`$select=${source.keyField},${TS}`, { filter: base, select: [source.keyField, TS], ...one }),
  );
  const media = Boolean(await asker.ask('$expand=Media', { filter: base, expandMedia: true, ...one }));
  const { asked, cap } = await probePageSize(asker, source, profile, base, select);

  const settings: ProbeReport['settings'] = {
    paging: keyset ? 'keyset' : 'nextLink',
    ...(cap !== undefined
      ? { maxPageSize: cap }
      : source.maxPageSize !== undefined && { maxPageSize: source.maxPageSize }),
    expandMedia: media,
    select,
  };
  // asked before the requests are counted: its $metadata read is one of them (counted after it, the
  // report said 8 requests where the server had 9)
  const changes = await chooseChanges(source, () => readMetadata(client, source.url!, source.resource));
  return {
    vendor: profile.name,
    results: asker.results,
    requests: client.requests,
    tokenCalls: client.tally.tokenCalls,
    compression: asker.compression,
    quotaHeaders: [...asker.quota].sort(),
    settings,
    differences: differencesOf(source, settings, asked, cap),
    changes,
  };
}

export function probeLines(r: ProbeReport): string[] {
  return [
    ...r.results.map((x) => `  ${x.ok ? 'accepted' : 'refused '} ${x.what}: ${x.detail}`),
    `  changes found by ${r.changes.used}: ${r.changes.why}`,
    `  compression: ${r.compression}; quota headers: ${r.quotaHeaders.length ? r.quotaHeaders.join(', ') : 'none'}; ${r.requests} requests${r.tokenCalls ? `, ${r.tokenCalls} token call${r.tokenCalls === 1 ? '' : 's'}` : ''}`,
    '',
    r.differences.length
      ? `settings to use (vendor ${r.vendor}):\n${r.differences.map((d) => `  ${d}`).join('\n')}`
      : `the source's settings fit what the server accepts (vendor ${r.vendor}: paging ${r.settings.paging}${r.settings.maxPageSize ? `, maxPageSize ${r.settings.maxPageSize}` : ''})`,
  ];
}
