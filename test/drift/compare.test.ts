// The dictionary check's parts that need no server: a `$metadata` in OData enum mode (EnumType
// members, as servers that have not moved to the Lookup resource publish lookups) and string
// fields annotated RESO.OData.Metadata.LookupName (RESO Data Dictionary 2.0, Lookup resource) read
// by reso-metadata.ts; what the mapping reads (mapping/mapped-fields.ts); and the findings.
import { describe, expect, it } from 'vitest';
import { compareDictionary } from '../../src/drift/compare.js';
import type { DictionarySnapshot } from '../../src/drift/snapshot.js';
import { enumTypeOf, parseMetadata } from '../../src/feeds/reso/reso-metadata.js';
import { MappingConfig } from '../../src/mapping/config-schema.js';
import { mappedFields } from '../../src/mapping/mapped-fields.js';

const CSDL = `<?xml version="1.0"?><edmx:Edmx Version="4.0" xmlns:edmx="http://docs.oasis-open.org/odata/ns/edmx"><edmx:DataServices>
<Schema Namespace="org.reso.metadata.enums" xmlns="http://docs.oasis-open.org/odata/ns/edm">
  <EnumType Name="StandardStatus"><Member Name="Active"/><Member Name="ActiveUnderContract"/><Member Name="ComingSoon"/><Member Name="Auction"/></EnumType>
</Schema>
<Schema Namespace="org.reso.metadata" xmlns="http://docs.oasis-open.org/odata/ns/edm">
  <EntityType Name="Property"><Key><PropertyRef Name="ListingKey"/></Key>
    <Property Name="ListingKey" Type="Edm.String"/>
    <Property Name="StandardStatus" Type="org.reso.metadata.enums.StandardStatus"/>
    <Property Name="Appliances" Type="Collection(Edm.String)"><Annotation Term="RESO.OData.Metadata.LookupName" String="Appliances"/></Property>
    <NavigationProperty Name="Media" Type="Collection(org.reso.metadata.Media)"/>
  </EntityType>
  <EntityContainer Name="Default"><EntitySet Name="Property" EntityType="org.reso.metadata.Property"/></EntityContainer>
</Schema></edmx:DataServices></edmx:Edmx>`;

const snapshot = (patch: Partial<DictionarySnapshot>): DictionarySnapshot => ({
  readAt: '2026-11-27T00:00:00.000Z',
  resource: 'Property',
  fields: {},
  lookupOf: {},
  lookups: {},
  valuesFrom: 'none',
  systems: [],
  requests: 2,
  ...patch,
});

describe('the dictionary check, pure', () => {
  it('reads enum members and LookupName annotations from $metadata', async () => {
    const meta = await parseMetadata(CSDL);
    expect([...meta.sets.get('Property')!.keys()]).toEqual(['ListingKey', 'StandardStatus', 'Appliances']);
    expect(meta.lookupNames.get('Property')).toEqual(new Map([['Appliances', 'Appliances']]));
    expect(meta.enums.get('StandardStatus')).toEqual(['Active', 'ActiveUnderContract', 'ComingSoon', 'Auction']);
    expect(enumTypeOf('Collection(org.reso.metadata.enums.Appliances)')).toBe('Appliances');
    expect(enumTypeOf('Edm.String')).toBeUndefined();
  });

  it('an enum member no map covers is a finding in either spelling; a preset field the server never had is not drift', () => {
    const mapped = mappedFields(MappingConfig.parse({ preset: 'reso' }));
    const status = mapped.find((m) => m.field === 'StandardStatus')!;
    expect(status.usedBy).toBe('Status');
    const current = snapshot({
      fields: { StandardStatus: 'org.reso.metadata.enums.StandardStatus', ListingKey: 'Edm.String' },
      lookupOf: { StandardStatus: 'StandardStatus' },
      lookups: {
        StandardStatus: ['Active', 'ActiveUnderContract', 'ComingSoon', 'Auction'].map((value) => ({ value })),
      },
      valuesFrom: 'enums',
    });
    const { findings, notOffered } = compareDictionary({ mapped, current, systems: {} });
    expect(findings.map((f) => [f.kind, f.value])).toEqual([['value', 'Auction']]);
    expect(notOffered).toContain('CoListAgentEmail');
  });

  it("a field the feed's own mapping names is found missing on a first read; a removal without a like field new is `gone`", () => {
    const mapped = mappedFields(MappingConfig.parse({ preset: 'reso', fields: { Description: 'PrivateRemarksX' } }));
    const first = compareDictionary({
      mapped,
      current: snapshot({ fields: { ListingKey: 'Edm.String' } }),
      systems: {},
    });
    expect(first.findings.map((f) => f.message)).toEqual([
      'PrivateRemarksX is not in the Property entity type; the mapping reads it for Description',
    ]);

    const previous = snapshot({ fields: { ListingKey: 'Edm.String', PrivateRemarksX: 'Edm.String' } });
    const current = snapshot({
      readAt: '2026-11-28T00:00:00.000Z',
      fields: { ListingKey: 'Edm.String', A: 'Edm.String', B: 'Edm.String' },
    });
    const next = compareDictionary({ mapped, current, previous, systems: {} });
    // two new text fields: no telling which one it became
    expect(next.findings.map((f) => f.kind)).toEqual(['gone']);
  });

  it("the Lookup records' OriginatingSystemName changed (MLS Grid filters them on the feed's): a `system` finding", () => {
    const mapped = mappedFields(MappingConfig.parse({ preset: 'reso' }));
    const previous = snapshot({ fields: { ListingKey: 'Edm.String' }, systems: ['actris'], valuesFrom: 'Lookup' });
    const current = snapshot({
      readAt: '2026-11-28T00:00:00.000Z',
      fields: { ListingKey: 'Edm.String' },
      systems: [],
      valuesFrom: 'Lookup',
    });
    const { findings } = compareDictionary({
      mapped,
      current,
      previous,
      systems: { configured: 'actris', records: 'actris', before: 'actris' },
    });
    expect(findings).toEqual([
      {
        kind: 'system',
        value: '',
        message: `the Lookup records' OriginatingSystemName changed from "actris" to "(none)"`,
      },
    ]);
  });

  it('issue 53/54: a navigation property is not "not offered"; a first read names a likely rename only by a list its map covers half of', () => {
    const mapped = mappedFields(MappingConfig.parse({ preset: 'reso' }));
    const units = (values: string[]) => values.map((value) => ({ value }));
    const current = (list: string[]) =>
      snapshot({
        fields: { ListingKey: 'Edm.String', LivingAreaUnit: 'Edm.String' },
        lookupOf: { LivingAreaUnit: 'AreaUnits' },
        lookups: { AreaUnits: units(list) },
        valuesFrom: 'Lookup',
        navigation: ['Media'],
      });
    const likely = compareDictionary({ mapped, current: current(['Square Feet', 'Acres', 'Hectares']), systems: {} });
    expect(likely.notOffered).not.toContain('Media');
    expect(likely.notOffered).not.toContain('LivingAreaUnits');
    expect(likely.findings.filter((f) => f.kind === 'renamed').map((f) => [f.field, f.to, f.why])).toEqual([
      [
        'LivingAreaUnits',
        'LivingAreaUnit',
        'its lookup AreaUnits: 2 of its 3 values are ones the map of AreaUnit covers',
      ],
    ]);
    // one value in four covered is not the same list: not offered, as before
    const unlike = compareDictionary({
      mapped,
      current: current(['Square Feet', 'Hectares', 'Ares', 'Rods']),
      systems: {},
    });
    expect(unlike.findings.filter((f) => f.kind === 'renamed')).toEqual([]);
    expect(unlike.notOffered).toContain('LivingAreaUnits');
    // a read before issue 54 kept no navigation properties: Media is listed as before
    expect(compareDictionary({ mapped, current: snapshot({}), systems: {} }).notOffered).toContain('Media');
  });
});
