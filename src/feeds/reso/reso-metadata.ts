// What a RESO server's `$metadata` (OData CSDL XML) says that a client must follow: the Edm type of
// each field of each entity set, so a key goes into a `$filter` as the server types it (a numeric
// key, `Edm.Int64`, bare: `ListingKey eq 12345`; a server answers the quoted `'12345'` with a 400,
// which would keep a feed's deletes unconfirmed for good), and which entity sets the server offers
// (`EntityEvent`: RESO RCP-027). Pure but for `readMetadata`, which asks once through the feed's
// page client (its credentials, budget and byte cap).
//
// The CSDL is scanned, not parsed into a tree: only the start tags of Schema, EntityType, Property
// and EntitySet are read (a `$metadata` of the whole Data Dictionary is several MB), in one pass.
import { FeedReadError } from '../../errors.js';
import type { PageClient } from './reso-pages.js';

export interface ResoMetadata {
  /** entity set name (Property, EntityEvent, …) → field → Edm type (Edm.String, Edm.Int64, …) */
  sets: ReadonlyMap<string, ReadonlyMap<string, string>>;
}

/** The service root's `$metadata`: the resource's URL less the resource. */
export function metadataUrl(base: string, resource: string): string {
  const root = base.replace(/\/+$/, '');
  return `${root.endsWith(`/${resource}`) ? root.slice(0, -resource.length - 1) : root}/$metadata`;
}

export async function readMetadata(client: PageClient, base: string, resource: string): Promise<ResoMetadata> {
  const url = metadataUrl(base, resource);
  return parseMetadata(await client.text(url, '$metadata'), url);
}

const TAG = /<(\/?)(?:[A-Za-z_][\w.-]*:)?(Schema|EntityType|Property|EntitySet)\b([^>]*)>/g;
const ATTR = /([A-Za-z_][\w.-]*)\s*=\s*(?:"([^"]*)"|'([^']*)')/g;

function attributes(text: string): Map<string, string> {
  const out = new Map<string, string>();
  for (const m of text.matchAll(ATTR)) out.set(m[1]!, m[2] ?? m[3] ?? '');
  return out;
}

export function parseMetadata(xml: string, where = '$metadata'): ResoMetadata {
  if (!/<(?:[A-Za-z_][\w.-]*:)?Edmx\b/.test(xml.slice(0, 4096))) {
    throw new FeedReadError(`not an OData $metadata document (no Edmx element); it starts ${JSON.stringify(xml.slice(0, 80))}`, { file: where }, false);
  }
  const types = new Map<string, Map<string, string>>();
  const sets: Array<[string, string]> = [];
  let namespace = '';
  let current: Map<string, string> | undefined;
  for (const m of xml.matchAll(TAG)) {
    const [, close, tag, rest] = m as unknown as [string, string, string, string];
    if (close) {
      if (tag === 'EntityType') current = undefined;
      continue;
    }
    const attrs = attributes(rest);
    const selfClosing = rest.trimEnd().endsWith('/');
    if (tag === 'Schema') namespace = attrs.get('Namespace') ?? '';
    else if (tag === 'EntityType') {
      const name = attrs.get('Name');
      if (name === undefined) continue;
      current = new Map();
      types.set(`${namespace}.${name}`, current);
      types.set(name, current);
      if (selfClosing) current = undefined;
    } else if (tag === 'Property' && current) {
      const name = attrs.get('Name');
      const type = attrs.get('Type');
      if (name !== undefined && type !== undefined) current.set(name, type);
    } else if (tag === 'EntitySet') {
      const name = attrs.get('Name');
      const type = attrs.get('EntityType');
      if (name !== undefined && type !== undefined) sets.push([name, type]);
    }
  }
  return { sets: new Map(sets.map(([name, type]) => [name, types.get(type) ?? types.get(type.split('.').pop()!) ?? new Map()])) };
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
  if (type !== undefined && DECIMAL.has(type)) return /^-?\d{1,30}(\.\d{1,30})?([eE][+-]?\d{1,3})?$/.test(value) ? value : undefined;
  if (type === 'Edm.Guid') return GUID.test(value) ? value : undefined;
  return `'${value.replace(/'/g, "''")}'`;
}
