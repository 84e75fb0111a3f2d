// What a RESO source's dictionary says at one moment, as `feed drift` keeps it: the fields of the
// feed's resource with their Edm types, each field's lookup list (its RESO.OData.Metadata.LookupName
// annotation, or its enum type), the values of the lists the mapping maps (from the Lookup resource
// where the server offers one, else from $metadata's enum members), and the OriginatingSystemName
// values the Lookup records carry. Read with the feed's own page client: its credentials, budget and
// byte cap. Reads no record of the resource.
import type { ResoSource } from '../feeds/config-schema.js';
import { resoPageClient } from '../feeds/reso/reso-pages.js';
import { enumTypeOf, metadataUrl, readMetadata, type ResoMetadata } from '../feeds/reso/reso-metadata.js';
import { ListTally, readLookups, type ListSize, type LookupEntry } from '../feeds/reso/reso-lookups.js';
import type { FeedContext } from '../feeds/types.js';
import { credentialFreeUrl } from '../secrets.js';

export type { LookupEntry } from '../feeds/reso/reso-lookups.js';

export interface DictionarySnapshot {
  /** when the server was read (ISO) */
  readAt: string;
  resource: string;
  /** field → Edm type, of the resource's entity type */
  fields: Record<string, string>;
  /** field → its lookup list's name (annotation, else enum type) */
  lookupOf: Record<string, string>;
  /** lookup list → its values, for the lists of the fields asked for: at most LOOKUP_VALUES_KEPT each (the first read) */
  lookups: Record<string, LookupEntry[]>;
  /** lookup list → how many values it has and a digest of them all (a change past the values kept is found by it); absent in reads before issue 49 */
  lookupSizes?: Record<string, ListSize>;
  /** where the values came from: the Lookup resource, $metadata's enum types, or nowhere (neither offered) */
  valuesFrom: 'Lookup' | 'enums' | 'none';
  /** OriginatingSystemName values the Lookup records carry (none without a Lookup resource) */
  systems: string[];
  /** requests sent for this snapshot */
  requests: number;
}

/**
 * A source's identity for the once-a-day rule: its service root, resource and MLS (MLS Grid's
 * OriginatingSystemName). It is a state key: the root without its credentials (`url`; the raw one
 * names the entry kept before, which held them).
 */
export function sourceId(source: ResoSource, url = credentialFreeUrl(source.url!)): string {
  return `${metadataUrl(url, source.resource)} ${source.resource}${source.originatingSystem ? ` ${source.originatingSystem}` : ''}`;
}

/** Lookup names of these fields, by annotation or enum type. */
function lookupNamesOf(meta: ResoMetadata, resource: string): Record<string, string> {
  const out: Record<string, string> = {};
  for (const [field, type] of meta.sets.get(resource) ?? []) {
    const name = meta.lookupNames.get(resource)?.get(field) ?? enumTypeOf(type);
    if (name) out[field] = name;
  }
  return out;
}

/** Reads `$metadata`, then (where offered) the Lookup resource's lists of `valueFields`. */
export async function readSnapshot(
  source: ResoSource,
  ctx: FeedContext,
  valueFields: readonly string[],
  now: Date,
): Promise<DictionarySnapshot> {
  const client = resoPageClient(source, ctx, { scope: 'drift', kind: 'metadata' });
  const meta = await readMetadata(client, source.url!, source.resource);
  const lookupOf = lookupNamesOf(meta, source.resource);
  const wanted = new Set(valueFields.map((f) => lookupOf[f]).filter((n): n is string => n !== undefined));
  const lookups: Record<string, LookupEntry[]> = {};
  const lookupSizes: Record<string, ListSize> = {};
  let valuesFrom: DictionarySnapshot['valuesFrom'] = 'none';
  let systems: string[] = [];
  if (meta.sets.has('Lookup')) {
    const read = await readLookups(client, source, wanted);
    for (const [name, entries] of read.lists) lookups[name] = entries;
    for (const [name, size] of read.sizes) lookupSizes[name] = size;
    systems = read.systems;
    valuesFrom = 'Lookup';
  } else if (meta.enums.size) {
    for (const name of wanted) {
      const members = meta.enums.get(name);
      if (!members) continue;
      const tally = new ListTally();
      for (const value of members) tally.add({ value });
      lookups[name] = tally.kept;
      lookupSizes[name] = tally.size;
    }
    valuesFrom = 'enums';
  }
  return {
    readAt: now.toISOString(),
    resource: source.resource,
    fields: Object.fromEntries(meta.sets.get(source.resource) ?? []),
    lookupOf,
    lookups,
    lookupSizes,
    valuesFrom,
    systems,
    requests: client.requests,
  };
}
