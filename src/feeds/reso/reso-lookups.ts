// The RESO `Lookup` resource (Data Dictionary 2.0, Lookup resource; RESO Web API RCP-032): one
// record per value of each lookup list the server uses — LookupName (the list: StandardStatus, or a
// local one), LookupValue (as the records carry it), StandardLookupValue (the Data Dictionary's
// value it stands for, where there is one) and LegacyODataValue (the enum member name a server sent
// before it moved from OData enums to string lookups). A field's list is named by its
// `RESO.OData.Metadata.LookupName` annotation in `$metadata` (reso-metadata.ts). MLS Grid serves
// its lookups only there since March 2022 (https://docs.mlsgrid.com/releases/reso-enums-to-lookups-transition:
// "Metadata no longer contains enumerations. Obtain lookups through the Lookup resource") and asks
// that it be read at most once a day (src/drift/drift-check.ts keeps that).
//
// Read whole, by nextLink on the source's origin, through the source's page client (credentials,
// budget, byte cap, request tally as `lookups`); bounded by `source.maxPages`. Only the lists asked
// for are kept: a server's Lookup holds every city and subdivision of its market.
import { FeedReadError } from '../../errors.js';
import type { ResoSource } from '../config-schema.js';
import { vendorProfile } from '../vendors/registry.js';
import type { PageClient } from './reso-pages.js';
import { keyLiteral, queryUrl } from './reso-query.js';
import { nextLinkUrl } from './reso-reader.js';

/** One value of a lookup list, in its spellings (absent where the server sends none). */
export interface LookupEntry {
  value: string;
  standard?: string;
  legacy?: string;
}

export interface LookupRead {
  /** LookupName → its values, for the lists asked for */
  lists: Map<string, LookupEntry[]>;
  /** the OriginatingSystemName values the Lookup records carry (MLS Grid's do), sorted */
  systems: string[];
  /** records read (all lists) */
  records: number;
}

const text = (v: unknown): string | undefined => (typeof v === 'string' && v !== '' ? v : undefined);

/** The Lookup resource's URL: beside the source's resource, under the same service root. */
export function lookupUrl(source: ResoSource): string {
  const root = source.url!.replace(/\/+$/, '');
  const base = root.endsWith(`/${source.resource}`) ? root.slice(0, -source.resource.length - 1) : root;
  const profile = vendorProfile(source.vendor);
  const required = profile.requiredFilter && source[profile.requiredFilter.sourceKey];
  return queryUrl(base, 'Lookup', { filter: required ? `${profile.requiredFilter!.field} eq ${keyLiteral(required)}` : undefined });
}

/** Every record of the Lookup resource, keeping the lists named in `wanted`. */
export async function readLookups(client: PageClient, source: ResoSource, wanted: ReadonlySet<string>): Promise<LookupRead> {
  const out: LookupRead = { lists: new Map(), systems: [], records: 0 };
  const systems = new Set<string>();
  const first = lookupUrl(source);
  const origin = new URL(first).origin;
  let url: string | undefined = first;
  for (let page = 1; url !== undefined; page++) {
    if (page > source.maxPages) {
      throw new FeedReadError(`the Lookup resource has more than ${source.maxPages} pages (source.maxPages); it was not read whole`, { file: first }, false);
    }
    const answer = await client.get(url, `Lookup page ${page}`, 'lookups');
    for (const raw of answer.value) {
      if (raw === null || typeof raw !== 'object') continue;
      const r = raw as Record<string, unknown>;
      out.records++;
      const system = text(r.OriginatingSystemName);
      if (system) systems.add(system);
      const name = text(r.LookupName);
      const value = text(r.LookupValue);
      if (!name || value === undefined || !wanted.has(name)) continue;
      const standard = text(r.StandardLookupValue);
      const legacy = text(r.LegacyODataValue);
      const list = out.lists.get(name) ?? [];
      list.push({ value, ...(standard && { standard }), ...(legacy && { legacy }) });
      out.lists.set(name, list);
    }
    const next = answer['@odata.nextLink'];
    url = next === undefined ? undefined : nextLinkUrl(next, url, origin, { file: first, record: `Lookup page ${page}` });
  }
  out.systems = [...systems].sort();
  return out;
}
