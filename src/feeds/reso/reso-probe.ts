// `feed probe`: a few small requests that say what a RESO server accepts, and the source settings to
// use (or that the vendor profile's fit). Bounded: at most PROBES requests, each asking one record
// (the page-size probe asks the key field alone), all through the source's budget. A vendor profile
// is only asked what it would send (never what its documentation says it refuses: a refusal may
// count against the token); the standard profile is asked everything.
import { causeMessage, FeedReadError } from '../../errors.js';
import type { ResoSource } from '../config-schema.js';
import { resoPageClient, type Page } from './reso-pages.js';
import { and, keyLiteral, pageSize, queryUrl, TS, type QueryParts } from './reso-query.js';
import type { FeedContext } from '../types.js';
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
  const cmp = (a: unknown, b: unknown, fold: boolean): number => {
    if (typeof a === 'number' && typeof b === 'number') return a - b;
    const [x, y] = fold ? [String(a).toLowerCase(), String(b).toLowerCase()] : [String(a), String(b)];
    return x < y ? -1 : x === y ? 0 : 1;
  };
  const monotone = (fold: boolean) => keys.every((k, i) => i === 0 || cmp(keys[i - 1], k, fold) * dir <= 0);
  return monotone(false) || monotone(true);
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
  const results: ProbeResult[] = [];
  let compression = 'none';
  const quota = new Set<string>();

  async function ask(what: string, q: QueryParts): Promise<Page | undefined> {
    try {
      const page = await client.get(queryUrl(source.url!, source.resource, q), what);
      const headers = client.lastHeaders;
      if (headers?.get('content-encoding')) compression = headers.get('content-encoding')!;
      headers?.forEach((_v, name) => QUOTA.test(name) && quota.add(name));
      results.push({
        what,
        ok: true,
        detail: `${page.value.length} record(s)${page['@odata.nextLink'] ? ', with a nextLink' : ''}`,
      });
      return page;
    } catch (err) {
      if (!(err instanceof FeedReadError) || err.status === undefined || err.status === 401 || err.status >= 500)
        throw err;
      results.push({ what, ok: false, detail: causeMessage(err) });
      return undefined;
    }
  }

  const first = await ask(`the resource${base ? ` with $filter=${base}` : ''}`, { filter: base, ...one });
  const record = first?.value[0] as Record<string, unknown> | undefined;
  const key = record?.[source.keyField];
  const ts = record?.[TS];
  let keyset = false;
  if (profile.orderby) {
    // several records each way: one record cannot be out of order, and a key-sorted server that ignores $orderby looks right ascending
    const several = { top: ORDER_PROBE };
    const up = await ask(`$orderby=${source.keyField} (${ORDER_PROBE} records)`, {
      filter: base,
      orderby: source.keyField,
      ...several,
    });
    const down =
      up &&
      (await ask(`$orderby=${source.keyField} desc (${ORDER_PROBE} records)`, {
        filter: base,
        orderby: `${source.keyField} desc`,
        ...several,
      }));
    const honoured = up && down && inOrder(up.value, source.keyField, 1) && inOrder(down.value, source.keyField, -1);
    if (up && down && !honoured)
      results.push({
        what: `$orderby=${source.keyField}`,
        ok: false,
        detail: `the server ignores $orderby: ${ORDER_PROBE} records asked ascending and descending by ${source.keyField} did not come in that order`,
      });
    const ordered = honoured ? up : undefined;
    const after =
      key === undefined
        ? undefined
        : await ask(`$filter=${source.keyField} gt ${keyLiteral(key)} with $orderby`, {
            filter: and(base, `${source.keyField} gt ${keyLiteral(key)}`),
            orderby: source.keyField,
            ...one,
          });
    keyset = Boolean(ordered && after);
  }
  if (typeof ts === 'string')
    await ask(`$filter=${TS} ${profile.since} ${ts}`, { filter: and(base, `${TS} ${profile.since} ${ts}`), ...one });
  const select = Boolean(
    await ask(`$select=${source.keyField},${TS}`, { filter: base, select: [source.keyField, TS], ...one }),
  );
  const media = Boolean(await ask('$expand=Media', { filter: base, expandMedia: true, ...one }));
  // the page-size cap: the key field alone, as many as the profile allows in a page
  const asked = profile.pageSizeBy === 'top' ? pageSize({ ...source, expandMedia: false }, profile) : 1000;
  const sized = await ask(`a page of ${asked} (key field only)`, {
    filter: base,
    select: select ? [source.keyField] : undefined,
    top: asked,
  });
  const cap = sized && sized['@odata.nextLink'] && sized.value.length < asked ? sized.value.length : undefined;

  const settings: ProbeReport['settings'] = {
    paging: keyset ? 'keyset' : 'nextLink',
    ...(cap !== undefined
      ? { maxPageSize: cap }
      : source.maxPageSize !== undefined && { maxPageSize: source.maxPageSize }),
    expandMedia: media,
    select,
  };
  const differences: string[] = [];
  if (settings.paging !== source.paging)
    differences.push(`paging: ${settings.paging} (the source says ${source.paging})`);
  if (cap !== undefined && (source.maxPageSize ?? Infinity) > cap)
    differences.push(`maxPageSize: ${cap} (the server sent ${cap} of ${asked} with a nextLink)`);
  if (!media && source.expandMedia) differences.push('expandMedia: false (the server refused $expand=Media)');
  if (!select && source.select?.length) differences.push('select: none (the server refused $select)');
  return {
    vendor: profile.name,
    results,
    requests: client.requests,
    tokenCalls: client.tally.tokenCalls,
    compression,
    quotaHeaders: [...quota].sort(),
    settings,
    differences,
    changes: await chooseChanges(source, () => readMetadata(client, source.url!, source.resource)),
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
