// What a RESO source's dictionary says at one moment, as `feed drift` keeps it: the fields of the
// feed's resource with their Edm types, each field's lookup list (its RESO.OData.Metadata.LookupName
// annotation, or its enum type), the values of the lists the mapping maps (from the Lookup resource
// where the server offers one, else from $metadata's enum members), and the OriginatingSystemName
// values the Lookup records carry. Read with the feed's own page client: its credentials, budget and
// byte cap. Reads no record of the resource.
import type { ResoSource } from '../feeds/config-schema.js';
import { resoPageClient, type PageClient } from '../feeds/reso/reso-pages.js';
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
  /** the entity type's navigation properties (Media, OpenHouse: related records, not fields); absent in reads before issue 54 */
  navigation?: string[];
  /** when the lookup values (and systems) were read, where not at `readAt`: a vendor that limits Lookup reads had them from that read */
  lookupsReadAt?: string;
  /** requests sent for this snapshot */
  requests: number;
}

/**
 * A source's identity for the once-a-day rule: its service root, resource and MLS (MLS Grid's
 * OriginatingSystemName), the root without its credentials (`url`; the raw one names an entry an
 * earlier feedsync kept, which held them). Not a state key as it is: a token may travel in the
 * root's path (drift-check.ts keyOf).
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

export interface SnapshotWants {
  /** fields whose lookup values are read (those the mapping reads through a map) */
  valueFields: readonly string[];
  /** more lookup lists whose values are read, chosen once `$metadata` is read (field → type, field → list) */
  moreLists?: (fields: Readonly<Record<string, string>>, lookupOf: Readonly<Record<string, string>>) => string[];
  /** the read whose lookup values stand (a vendor that limits Lookup reads): the Lookup resource is not read */
  lookupsFrom?: DictionarySnapshot;
}

/** Reads `$metadata`, then (where offered, unless `wants.lookupsFrom`) the Lookup resource's lists of `valueFields`. */
export async function readSnapshot(
  source: ResoSource,
  ctx: FeedContext,
  wants: SnapshotWants,
  now: Date,
): Promise<DictionarySnapshot> {
  const client = resoPageClient(source, ctx, { scope: 'drift', kind: 'metadata' });
  const meta = await readMetadata(client, source.url!, source.resource);
  const lookupOf = lookupNamesOf(meta, source.resource);
  const fields = Object.fromEntries(meta.sets.get(source.resource) ?? []);
  const wanted = new Set([
    ...wants.valueFields.map((f) => lookupOf[f]).filter((n): n is string => n !== undefined),
    ...(wants.moreLists?.(fields, lookupOf) ?? []),
  ]);
  const values = meta.sets.has('Lookup')
    ? wants.lookupsFrom?.valuesFrom === 'Lookup'
      ? keptValues(wants.lookupsFrom)
      : await lookupValues(client, source, wanted)
    : enumValues(meta, wanted);
  return {
    readAt: now.toISOString(),
    resource: source.resource,
    fields,
    lookupOf,
    ...values,
    navigation: [...(meta.navigation.get(source.resource) ?? [])],
    requests: client.requests,
  };
}

type Values = Pick<DictionarySnapshot, 'lookups' | 'lookupSizes' | 'valuesFrom' | 'systems' | 'lookupsReadAt'>;

/** The lists asked for, from the Lookup resource. */
async function lookupValues(client: PageClient, source: ResoSource, wanted: ReadonlySet<string>): Promise<Values> {
  const read = await readLookups(client, source, wanted);
  return {
    lookups: Object.fromEntries(read.lists),
    lookupSizes: Object.fromEntries(read.sizes),
    valuesFrom: 'Lookup',
    systems: read.systems,
  };
}

/** The values of an earlier read of the Lookup resource, and when it was. */
function keptValues(from: DictionarySnapshot): Values {
  return {
    lookups: from.lookups,
    ...(from.lookupSizes && { lookupSizes: from.lookupSizes }),
    valuesFrom: from.valuesFrom,
    systems: from.systems,
    lookupsReadAt: from.lookupsReadAt ?? from.readAt,
  };
}

/** The lists asked for, from `$metadata`'s enum types (none: no values). */
function enumValues(meta: ResoMetadata, wanted: ReadonlySet<string>): Values {
  if (!meta.enums.size) return { lookups: {}, lookupSizes: {}, valuesFrom: 'none', systems: [] };
  const lookups: Record<string, LookupEntry[]> = {};
  const lookupSizes: Record<string, ListSize> = {};
  for (const name of wanted) {
    const members = meta.enums.get(name);
    if (!members) continue;
    const tally = new ListTally();
    for (const value of members) tally.add({ value });
    lookups[name] = tally.kept;
    lookupSizes[name] = tally.size;
  }
  return { lookups, lookupSizes, valuesFrom: 'enums', systems: [] };
}
