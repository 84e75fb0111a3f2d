// The `$metadata` document (OData CSDL XML, OData 4.0 Part 3: Common Schema Definition Language) the
// test servers answer: entity sets with their key and typed fields, as RESO servers publish theirs
// (the Data Dictionary's `org.reso.metadata` namespace).
import type { Row } from './odata-filter.js';

/** Each field the records carry (Media aside) with its Edm type: `types`, else by its values. */
export function fieldTypes(records: readonly Row[], types: Record<string, string> = {}): Map<string, string> {
  const out = new Map<string, string>(Object.entries(types));
  for (const r of records) {
    for (const [k, v] of Object.entries(r)) {
      if (k === 'Media' || out.has(k) || v === null || v === undefined) continue;
      out.set(
        k,
        k.endsWith('Timestamp')
          ? 'Edm.DateTimeOffset'
          : typeof v === 'number'
            ? 'Edm.Decimal'
            : typeof v === 'boolean'
              ? 'Edm.Boolean'
              : 'Edm.String',
      );
    }
  }
  return out;
}

/** A field's Property element; with a lookup list, its `RESO.OData.Metadata.LookupName` annotation (RESO Data Dictionary 2.0, Lookup resource). */
function property(field: string, type: string, lookup: string | undefined): string {
  if (lookup === undefined) return `<Property Name="${field}" Type="${type}"/>`;
  return `<Property Name="${field}" Type="${type}"><Annotation Term="RESO.OData.Metadata.LookupName" String="${lookup}"/></Property>`;
}

/**
 * An OData CSDL document (OData 4.0 Part 3) of entity sets, each with its key and typed fields;
 * `lookups`: field → the name of its list in the Lookup resource, as a string field's annotation;
 * `navigation`: the related records `$expand` brings (NavigationProperty elements, not fields).
 */
export function csdl(
  sets: Record<
    string,
    {
      key: string;
      fields: ReadonlyMap<string, string>;
      lookups?: ReadonlyMap<string, string>;
      /** navigation property → its type (Media: Collection(org.reso.metadata.Media)), as `$expand` names it */
      navigation?: Record<string, string>;
    }
  >,
): string {
  const types = Object.entries(sets).map(
    ([name, { key, fields, lookups, navigation }]) =>
      `<EntityType Name="${name}"><Key><PropertyRef Name="${key}"/></Key>${[...fields].map(([f, t]) => property(f, t, lookups?.get(f))).join('')}${Object.entries(
        navigation ?? {},
      )
        .map(([n, t]) => `<NavigationProperty Name="${n}" Type="${t}"/>`)
        .join('')}</EntityType>`,
  );
  const container = Object.keys(sets)
    .map((name) => `<EntitySet Name="${name}" EntityType="org.reso.metadata.${name}"/>`)
    .join('');
  return (
    '<?xml version="1.0" encoding="utf-8"?><edmx:Edmx Version="4.0" xmlns:edmx="http://docs.oasis-open.org/odata/ns/edmx"><edmx:DataServices>' +
    `<Schema Namespace="org.reso.metadata" xmlns="http://docs.oasis-open.org/odata/ns/edm">${types.join('')}<EntityContainer Name="Default">${container}</EntityContainer></Schema>` +
    '</edmx:DataServices></edmx:Edmx>'
  );
}
