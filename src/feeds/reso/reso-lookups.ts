// The RESO `Lookup` resource (Data Dictionary 2.0, Lookup resource; RESO Web API RCP-032): one
// record per value of each lookup list the server uses — LookupName (the list: StandardStatus, or a
// local one), LookupValue (as the records carry it), StandardLookupValue (the Data Dictionary's
// value it stands for, where there is one) and LegacyODataValue (the enum member name a server sent
// before it moved from OData enums to string lookups). A field's list is named by its
// `RESO.OData.Metadata.LookupName` annotation in `$metadata` (reso-metadata.ts). MLS Grid serves
// its lookups only there since March 2022 (https://docs.mlsgrid.com/releases/reso-enums-to-lookups-transition:
// "Metadata no longer contains enumerations. Obtain lookups through the Lookup resource") and asks
// that it be read at most once a day (the mlsgrid profile's lookupEveryMs, src/feeds/vendors/mlsgrid.ts,
// which src/drift/drift-check.ts keeps).
//
// Read whole, by nextLink on the source's origin, through the source's page client (credentials,
// budget, byte cap, request tally as `lookups`); bounded by `source.maxPages`. Only the lists asked
// for are kept: a server's Lookup holds every city and subdivision of its market; and of each, only
// its first LOOKUP_VALUES_KEPT values, the rest counted and digested (ListTally): a list of a million
// values took 1.49 GB of memory, a 62 MB state entry and 314 MB of `feed drift --json` (issue 49).
import { createHash } from 'node:crypto';
import { FeedReadError } from '../../errors.js';
import type { ResoSource } from '../config-schema.js';
import { vendorProfile } from '../vendors/registry.js';
import type { PageClient } from './reso-pages.js';
import { keyLiteral, nextLinkUrl, queryUrl } from './reso-query.js';

/** One value of a lookup list, in its spellings (absent where the server sends none). */
export interface LookupEntry {
  value: string;
  standard?: string;
  legacy?: string;
}

export interface LookupRead {
  /** LookupName → its values, for the lists asked for: at most `maxValues` each, the first the server sends */
  lists: Map<string, LookupEntry[]>;
  /** LookupName → every value of the list counted, and a digest of them all (lists.get: only the first kept) */
  sizes: Map<string, ListSize>;
  /** the OriginatingSystemName values the Lookup records carry (MLS Grid's do), sorted */
  systems: string[];
  /** records read (all lists) */
  records: number;
}

/** A lookup list's size and a digest of all its values, whatever the order they came in. */
export interface ListSize {
  values: number;
  digest: string;
}

/** Values of one lookup list kept (compared with the mapping); the rest are counted and digested, not kept. */
export const LOOKUP_VALUES_KEPT = 1000;

/**
 * One lookup list as it is read: its first `max` values kept, every value counted, and a digest of
 * the multiset of values (each value's SHA-256, its first 128 bits summed as four words mod 2^32):
 * the same values in any order give the same digest, and one value added, removed or respelled
 * changes it. Memory: `max` values and four numbers, however long the list.
 */
export class ListTally {
  readonly kept: LookupEntry[] = [];
  private count = 0;
  private readonly sum = [0, 0, 0, 0];
  constructor(private readonly max = LOOKUP_VALUES_KEPT) {}

  add(entry: LookupEntry): void {
    this.count++;
    if (this.kept.length < this.max) this.kept.push(entry);
    const h = createHash('sha256')
      .update(JSON.stringify([entry.value, entry.standard ?? null, entry.legacy ?? null]))
      .digest();
    for (let i = 0; i < 4; i++) this.sum[i] = (this.sum[i]! + h.readUInt32BE(i * 4)) >>> 0;
  }

  get size(): ListSize {
    return { values: this.count, digest: this.sum.map((w) => w.toString(16).padStart(8, '0')).join('') };
  }
}

const text = (v: unknown): string | undefined => (typeof v === 'string' && v !== '' ? v : undefined);

/** The Lookup resource's URL: beside the source's resource, under the same service root. */
export function lookupUrl(source: ResoSource): string {
  const root = source.url!.replace(/\/+$/, '');
  const base = root.endsWith(`/${source.resource}`) ? root.slice(0, -source.resource.length - 1) : root;
  const profile = vendorProfile(source.vendor);
  const required = profile.requiredFilter && source[profile.requiredFilter.sourceKey];
  return queryUrl(base, 'Lookup', {
    filter: required ? `${profile.requiredFilter!.field} eq ${keyLiteral(required)}` : undefined,
  });
}

/** Every record of the Lookup resource, keeping the lists named in `wanted`. */
export async function readLookups(
  client: PageClient,
  source: ResoSource,
  wanted: ReadonlySet<string>,
): Promise<LookupRead> {
  const out: LookupRead = { lists: new Map(), sizes: new Map(), systems: [], records: 0 };
  const tallies = new Map<string, ListTally>();
  const systems = new Set<string>();
  const first = lookupUrl(source);
  const origin = new URL(first).origin;
  let url: string | undefined = first;
  for (let page = 1; url !== undefined; page++) {
    if (page > source.maxPages) {
      throw new FeedReadError(
        `the Lookup resource has more than ${source.maxPages} pages (source.maxPages); it was not read whole`,
        { file: first },
        false,
      );
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
      let tally = tallies.get(name);
      if (!tally) tallies.set(name, (tally = new ListTally()));
      tally.add({ value, ...(standard && { standard }), ...(legacy && { legacy }) });
    }
    const next = answer['@odata.nextLink'];
    url =
      next === undefined ? undefined : nextLinkUrl(next, url, origin, { file: first, record: `Lookup page ${page}` });
  }
  for (const [name, tally] of tallies) {
    out.lists.set(name, tally.kept);
    out.sizes.set(name, tally.size);
  }
  out.systems = [...systems].sort();
  return out;
}
