// What a RESO server's `$metadata` (OData CSDL XML) says that a client must follow: the Edm type of
// each field of each entity set, so a key goes into a `$filter` as the server types it (a numeric
// key, `Edm.Int64`, bare: `ListingKey eq 12345`; a server answers the quoted `'12345'` with a 400,
// which would keep a feed's deletes unconfirmed for good), and which entity sets the server offers
// (`EntityEvent`: RESO RCP-027). Pure but for `readMetadata`, which asks once through the feed's
// page client (its credentials, budget and byte cap).
//
// The CSDL is scanned, not parsed into a tree: only the start and end tags of Schema, EntityType,
// Property, NavigationProperty, EntitySet, EnumType, Member and Annotation are read (a `$metadata` of the whole Data
// Dictionary is several MB), in one linear pass that lets the event loop run every few hundred KB
// (csdl-scan.ts), from a document of at most source.maxMetadataBytes. What a field's lookup is
// (`feed drift`): a string field's `RESO.OData.Metadata.LookupName` annotation names its list in the
// Lookup resource (RESO Data Dictionary 2.0, Lookup resource); an enum-typed field's values are its
// EnumType's members.
import { FeedReadError } from '../../errors.js';
import { scanTags } from './csdl-scan.js';
import type { PageClient } from './reso-pages.js';

export interface ResoMetadata {
  /** entity set name (Property, EntityEvent, …) → field → Edm type (Edm.String, Edm.Int64, …) */
  sets: ReadonlyMap<string, ReadonlyMap<string, string>>;
  /** entity set name → field → its `RESO.OData.Metadata.LookupName` annotation (fields without one absent) */
  lookupNames: ReadonlyMap<string, ReadonlyMap<string, string>>;
  /** entity set name → its entity type's navigation properties (Media, OpenHouse: related records `$expand` brings), not fields */
  navigation: ReadonlyMap<string, readonly string[]>;
  /** enum type name (unqualified: StandardStatus) → its members' names */
  enums: ReadonlyMap<string, readonly string[]>;
}

/** The annotation that ties a string (or string collection) field to its list in the Lookup resource. */
export const LOOKUP_NAME_TERM = 'RESO.OData.Metadata.LookupName';

/** The service root's `$metadata`: the resource's URL less the resource. */
export function metadataUrl(base: string, resource: string): string {
  const root = base.replace(/\/+$/, '');
  return `${root.endsWith(`/${resource}`) ? root.slice(0, -resource.length - 1) : root}/$metadata`;
}

export async function readMetadata(client: PageClient, base: string, resource: string): Promise<ResoMetadata> {
  const url = metadataUrl(base, resource);
  return parseMetadata(await client.text(url, '$metadata'), url);
}

const TAGS: ReadonlySet<string> = new Set([
  'Schema',
  'EntityType',
  'Property',
  'NavigationProperty',
  'EntitySet',
  'EnumType',
  'Member',
  'Annotation',
]);
const ATTRS: ReadonlySet<string> = new Set(['Name', 'Type', 'Namespace', 'EntityType', 'Term', 'String']);
/** the root element within the first 4 KB (`<edmx:Edmx`); a linear search, not a regex */
function hasEdmx(head: string): boolean {
  for (let at = head.indexOf('Edmx'); at >= 0; at = head.indexOf('Edmx', at + 4)) {
    const before = head.charCodeAt(at - 1);
    const after = head.charCodeAt(at + 4);
    const ends = Number.isNaN(after) || after <= 32 || after === 62 || after === 47;
    if ((before === 60 || before === 58) && ends) return true;
  }
  return false;
}

/** What the scan holds while it goes: the entity type and field it is in, and what it gathered. */
interface Scan {
  namespace: string;
  types: Map<string, Map<string, string>>;
  lookups: Map<string, Map<string, string>>;
  enums: Map<string, string[]>;
  navigation: Map<string, string[]>;
  sets: Array<[string, string]>;
  entity?: { name: string; fields: Map<string, string>; lookups: Map<string, string>; navigation: string[] };
  field?: string;
  members?: string[];
}

export async function parseMetadata(xml: string, where = '$metadata'): Promise<ResoMetadata> {
  if (!hasEdmx(xml.slice(0, 4096))) {
    throw new FeedReadError(
      `not an OData $metadata document (no Edmx element); it starts ${JSON.stringify(xml.slice(0, 80))}`,
      { file: where },
      false,
    );
  }
  const scan: Scan = {
    namespace: '',
    types: new Map(),
    lookups: new Map(),
    enums: new Map(),
    navigation: new Map(),
    sets: [],
  };
  await scanTags(xml, TAGS, ATTRS, (tag) =>
    tag.close ? closeTag(scan, tag.name) : openTag(scan, tag.name, tag.attrs, tag.selfClosing),
  );
  const of = <T>(map: Map<string, T>, type: string) => map.get(type) ?? map.get(type.split('.').pop()!);
  return {
    sets: new Map(scan.sets.map(([name, type]) => [name, of(scan.types, type) ?? new Map()])),
    lookupNames: new Map(scan.sets.map(([name, type]) => [name, of(scan.lookups, type) ?? new Map()])),
    navigation: new Map(scan.sets.map(([name, type]) => [name, of(scan.navigation, type) ?? []])),
    enums: scan.enums,
  };
}

function closeTag(scan: Scan, tag: string): void {
  if (tag === 'EntityType') scan.entity = undefined;
  else if (tag === 'Property') scan.field = undefined;
  else if (tag === 'EnumType') scan.members = undefined;
}

type Attrs = ReadonlyMap<string, string>;

/** What each tag read adds to the scan (`name`: its Name attribute). */
const OPEN: Record<string, (scan: Scan, name: string | undefined, attrs: Attrs, selfClosing: boolean) => void> = {
  Schema: (scan, _name, attrs) => {
    scan.namespace = attrs.get('Namespace') ?? '';
  },
  EntityType: (scan, name, _attrs, selfClosing) => {
    if (name === undefined) return;
    const entity = { name, fields: new Map<string, string>(), lookups: new Map<string, string>(), navigation: [] };
    for (const key of [`${scan.namespace}.${name}`, name]) {
      scan.types.set(key, entity.fields);
      scan.lookups.set(key, entity.lookups);
      scan.navigation.set(key, entity.navigation);
    }
    scan.entity = selfClosing ? undefined : entity;
  },
  Property: (scan, name, attrs, selfClosing) => {
    if (!scan.entity) return;
    const type = attrs.get('Type');
    if (name !== undefined && type !== undefined) scan.entity.fields.set(name, type);
    scan.field = selfClosing ? undefined : name;
  },
  NavigationProperty: (scan, name) => {
    if (scan.entity && name !== undefined) scan.entity.navigation.push(name);
  },
  Annotation: (scan, _name, attrs) => {
    if (!scan.entity || scan.field === undefined || attrs.get('Term') !== LOOKUP_NAME_TERM) return;
    const lookup = attrs.get('String');
    if (lookup) scan.entity.lookups.set(scan.field, lookup);
  },
  EntitySet: (scan, name, attrs) => {
    const type = attrs.get('EntityType');
    if (name !== undefined && type !== undefined) scan.sets.push([name, type]);
  },
  EnumType: (scan, name, _attrs, selfClosing) => {
    if (name === undefined) return;
    scan.members = [];
    scan.enums.set(name, scan.members);
    if (selfClosing) scan.members = undefined;
  },
  Member: (scan, name) => {
    if (scan.members && name !== undefined) scan.members.push(name);
  },
};

function openTag(scan: Scan, tag: string, attrs: Attrs, selfClosing: boolean): void {
  OPEN[tag]?.(scan, attrs.get('Name'), attrs, selfClosing);
}

/** The enum type a field's Edm type names (org.reso.metadata.enums.StandardStatus, or a Collection of one), unqualified; undefined for Edm types. */
export function enumTypeOf(type: string): string | undefined {
  const inner = /^Collection\((.+)\)$/.exec(type)?.[1] ?? type;
  return inner.startsWith('Edm.') ? undefined : inner.split('.').pop();
}

const INTEGER = new Set(['Edm.Int16', 'Edm.Int32', 'Edm.Int64', 'Edm.Byte', 'Edm.SByte']);
const DECIMAL = new Set(['Edm.Decimal', 'Edm.Double', 'Edm.Single']);
const GUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

/**
 * A value as an OData literal of the field's Edm type: integers and decimals bare, a Guid bare,
 * anything else quoted ('' for '). Undefined when the value cannot be of that type (a key "A-1" of
 * an Edm.Int64 field): no record can hold it, so it is not asked.
 */
export function typedLiteral(value: string, type: string | undefined): string | undefined {
  if (type !== undefined && INTEGER.has(type)) return /^-?\d{1,20}$/.test(value) ? value : undefined;
  if (type !== undefined && DECIMAL.has(type))
    return /^-?\d{1,30}(\.\d{1,30})?([eE][+-]?\d{1,3})?$/.test(value) ? value : undefined;
  if (type === 'Edm.Guid') return GUID.test(value) ? value : undefined;
  return `'${value.replace(/'/g, "''")}'`;
}
