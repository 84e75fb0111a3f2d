// The confirmation queries' batching: every key asked once, no URL past MAX_URL, no more `or` terms
// than the vendor allows.
import { describe, expect, it } from 'vitest';
import { batches, MAX_URL } from '../../src/feeds/reso/reso-confirm.js';
import { keyFilters, queryUrl } from '../../src/feeds/reso/reso-query.js';
import { vendorProfile } from '../../src/feeds/vendors/registry.js';
import { parseMetadata, typedLiteral } from '../../src/feeds/reso/reso-metadata.js';

const keys = Array.from({ length: 300 }, (_, i) => `LISTING-${String(i).padStart(6, '0')}-${'x'.repeat(i % 40)}`);

describe('confirmation batches', () => {
  it.each(['reso', 'mlsgrid'] as const)(
    '%s: every key once, each URL within MAX_URL characters and the or-limit',
    (name) => {
      const profile = vendorProfile(name);
      const url = (field: string, values: string[]) =>
        queryUrl('https://mls.example/odata', 'Property', { filter: keyFilters(profile, field, values)![0] });
      const out = [...batches([{ field: 'ListingId', values: keys }], url, profile.maxOrTerms ?? 50)];
      expect(out.flatMap(([, v]) => v)).toEqual(keys);
      for (const [field, values] of out) {
        expect(field).toBe('ListingId');
        expect(url(field, values).length).toBeLessThanOrEqual(MAX_URL);
        expect(values.length).toBeLessThanOrEqual(profile.maxOrTerms ?? 50);
      }
      expect(out.length).toBeGreaterThanOrEqual(300 / (profile.maxOrTerms ?? 50));
    },
  );

  it("issue 35: keys with ' are measured as sent — each ' doubled in OData, then %27 on the wire — whatever string the caller builds", () => {
    const quoted = Array.from({ length: 200 }, (_, i) => `O'Neil's 'Lot' ${i} & é/${"'".repeat(i % 6)}`);
    // encodeURIComponent leaves ' as it is; the URL parser (undici's) sends it as %27
    const raw = (field: string, values: string[]) =>
      `https://mls.example/odata/Property?$filter=${encodeURIComponent(keyFilters(vendorProfile('reso'), field, values)![0]!)}`;
    for (const url of [
      raw,
      (field: string, values: string[]) =>
        queryUrl('https://mls.example/odata', 'Property', {
          filter: keyFilters(vendorProfile('reso'), field, values)![0],
        }),
    ]) {
      const out = [...batches([{ field: 'ListingId', values: quoted }], url, 50)];
      expect(out.flatMap(([, v]) => v)).toEqual(quoted);
      const sent = out.map(([field, values]) => new URL(url(field, values)).href.length);
      expect(Math.max(...sent)).toBeLessThanOrEqual(MAX_URL);
      expect(Math.max(...sent)).toBeGreaterThan(MAX_URL - 100);
    }
    expect(queryUrl('https://mls.example/odata', 'Property', { filter: "ListingId eq 'O''Neil'" })).toBe(
      'https://mls.example/odata/Property?$filter=ListingId%20eq%20%27O%27%27Neil%27',
    );
  });

  it('a key too long for any URL still goes, alone', () => {
    const long = 'K'.repeat(MAX_URL);
    const url = (field: string, values: string[]) =>
      queryUrl('https://mls.example/odata', 'Property', {
        filter: values.map((v) => `${field} eq '${v}'`).join(' or '),
      });
    expect([...batches([{ field: 'ListingKey', values: ['A', long, 'B'] }], url)]).toEqual([
      ['ListingKey', ['A']],
      ['ListingKey', [long]],
      ['ListingKey', ['B']],
    ]);
  });
});

describe('$metadata types (issue 38)', () => {
  const xml = (props: string) =>
    `<?xml version="1.0"?><edmx:Edmx Version="4.0" xmlns:edmx="http://docs.oasis-open.org/odata/ns/edmx"><edmx:DataServices>` +
    `<Schema Namespace="org.reso.metadata" xmlns="http://docs.oasis-open.org/odata/ns/edm"><EntityType Name="Property"><Key><PropertyRef Name="ListingKey"/></Key>${props}</EntityType>` +
    `<EntityType Name="EntityEvent"><Property Name='EntityEventSequence' Type='Edm.Int64' /></EntityType>` +
    `<EntityContainer Name="Default"><EntitySet Name="Property" EntityType="org.reso.metadata.Property"/><EntitySet Name="EntityEvent" EntityType="org.reso.metadata.EntityEvent"/></EntityContainer></Schema></edmx:DataServices></edmx:Edmx>`;

  it('reads each entity set’s field types, attributes in any order and quoting', async () => {
    const m = await parseMetadata(
      xml(
        `<Property Type="Edm.Int64" Name="ListingKey" Nullable="false"/><Property Name="ListingId" Type="Edm.String" MaxLength="255"/>`,
      ),
    );
    expect(m.sets.get('Property')).toEqual(
      new Map([
        ['ListingKey', 'Edm.Int64'],
        ['ListingId', 'Edm.String'],
      ]),
    );
    expect(m.sets.get('EntityEvent')?.get('EntityEventSequence')).toBe('Edm.Int64');
  });

  it('is not fooled by a document that is not CSDL', async () => {
    await expect(parseMetadata('{"value":[]}')).rejects.toThrow(/not an OData \$metadata document/);
  });

  it('a key goes as its field is typed; a value the type cannot hold is not asked', () => {
    expect(typedLiteral('12', 'Edm.Int64')).toBe('12');
    expect(typedLiteral('A-1', 'Edm.Int64')).toBeUndefined();
    expect(typedLiteral('12.5', 'Edm.Decimal')).toBe('12.5');
    expect(typedLiteral("O'Hare", 'Edm.String')).toBe("'O''Hare'");
    expect(typedLiteral('12', undefined)).toBe("'12'");
    const profile = vendorProfile('reso');
    expect(keyFilters(profile, 'ListingKey', ['12', '13'], undefined, 'Edm.Int64')).toEqual([
      'ListingKey eq 12 or ListingKey eq 13',
    ]);
  });
});
