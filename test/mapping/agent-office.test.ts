// Agent and office on every listing (issue 40, point 1): the reso, zillow and listhub presets put the
// list agent's and office's public contact into ExtensionColumn under the same Keys; a feed that
// withholds one of those fields gets the listing without it, never with it.
import { describe, expect, it } from 'vitest';
import { readXml } from '../../src/feeds/xml/xml-reader.js';
import type { FeedItem } from '../../src/feeds/types.js';
import { resolveDisplay, type DisplayConfig } from '../../src/mapping/display-config.js';
import { compileMapping, MappingConfig } from '../../src/mapping/index.js';
import { mapItem } from '../../src/mapping/map-feed.js';
import { restrictedReads } from '../../src/mapping/restricted-fields.js';
import { chunks, collect } from '../feeds/helpers.js';
import { RESO_BASE } from './reso-base.js';

const reso = {
  ...RESO_BASE,
  City: 'Austin',
  ListAgentKey: 'A1',
  ListAgentFirstName: 'Ann',
  ListAgentLastName: 'Lee',
  ListAgentDirectPhone: '512-555-0101',
  ListAgentPreferredPhone: '512-555-0199',
  ListAgentEmail: 'ann@oak.test',
  ListOfficeName: 'Oak Realty',
  ListOfficePhone: '512-555-0100',
  CoListAgentFullName: 'Bo Diaz',
  CoListAgentDirectPhone: '512-555-0202',
  ShowingContactPhone: '512-555-0999',
  PrivateRemarks: 'lockbox on the back door',
};

function extension(
  mapping: unknown,
  data: Record<string, unknown>,
  display?: Partial<DisplayConfig>,
): Record<string, string> {
  const m = MappingConfig.parse(mapping);
  const compiled = compileMapping(m, display ? { display: resolveDisplay(display, 'reso') } : {});
  const item = mapItem({ kind: 'record', position: { file: 'f', index: 0 }, data }, compiled, {
    serialNumber: 'SN-1',
    keyBy: 'MLSNumber',
  });
  if (item.kind !== 'listing') throw new Error(`expected a listing, got ${JSON.stringify(item)}`);
  return Object.fromEntries((item.listing.ExtensionColumn ?? []).map((e) => [e.Key, e.value]));
}

async function xmlRecords(xml: string): Promise<Record<string, unknown>[]> {
  const items: FeedItem[] = await collect(
    readXml(chunks(xml, 64), { label: 'feed.xml', recordPath: 'Listings.Listing' }),
  );
  return items.flatMap((i) => (i.kind === 'record' ? [i.data] : []));
}

describe('agent and office in ExtensionColumn', () => {
  const resoMapping = { preset: 'reso', fields: { Url: { template: 'https://broker.test/l/{ListingId}' } } };

  it('reso: name (First Last when no FullName), preferred phone before direct, email, office; the co-list agent too; nothing restricted', () => {
    expect(extension(resoMapping, reso, { purpose: 'idx' })).toEqual({
      ListAgentName: 'Ann Lee',
      ListAgentPhone: '512-555-0199',
      ListAgentEmail: 'ann@oak.test',
      ListOfficeName: 'Oak Realty',
      ListOfficePhone: '512-555-0100',
      CoListAgentName: 'Bo Diaz',
      CoListAgentPhone: '512-555-0202',
      Attribution: 'Listing courtesy of Oak Realty',
    });
    // a FullName wins over the parts; the direct phone stands in for a missing preferred one
    const other = extension(resoMapping, {
      ...reso,
      ListAgentFullName: 'Ann B. Lee',
      ListAgentPreferredPhone: undefined,
    });
    expect([other.ListAgentName, other.ListAgentPhone]).toEqual(['Ann B. Lee', '512-555-0101']);
    // no agent fields: no entries, the listing still made
    const bare = extension(resoMapping, {
      ...reso,
      ListAgentFirstName: '',
      ListAgentLastName: undefined,
      ListAgentDirectPhone: null,
      ListAgentPreferredPhone: undefined,
      ListAgentEmail: undefined,
      CoListAgentFullName: undefined,
      CoListAgentDirectPhone: undefined,
    });
    expect(Object.keys(bare)).toEqual(['ListOfficeName', 'ListOfficePhone']);
  });

  it('an agent field the feed withholds is left out of the listing, and is no config error', () => {
    const display: Partial<DisplayConfig> = { purpose: 'idx', withhold: ['ListAgentEmail', 'CoListAgentDirectPhone'] };
    const ext = extension(resoMapping, reso, display);
    expect(ext.ListAgentEmail).toBeUndefined();
    expect(ext.CoListAgentPhone).toBeUndefined();
    expect(ext.ListAgentName).toBe('Ann Lee');
    expect(restrictedReads(MappingConfig.parse(resoMapping), resolveDisplay(display, 'reso'))).toEqual([]);
    // the feed's own extension reading it stays a config error
    const own = MappingConfig.parse({ ...resoMapping, extension: { Email: 'ListAgentEmail' } });
    expect(restrictedReads(own, resolveDisplay(display, 'reso')).map((r) => r.rule)).toEqual([
      'mapping.extension Email',
    ]);
  });

  it('zillow: Agent and Office elements under the same Keys', async () => {
    const [data] = await xmlRecords(`<Listings><Listing>
      <ListingDetails><Status>Active</Status><Price>385000</Price><ListingUrl>https://broker.test/l/Z1</ListingUrl><MlsId>Z1</MlsId></ListingDetails>
      <BasicDetails><PropertyType>Condo</PropertyType><Bedrooms>2</Bedrooms><Bathrooms>1</Bathrooms><LivingArea>900</LivingArea><LotSize>0.1</LotSize><YearBuilt>2001</YearBuilt></BasicDetails>
      <Agent><FirstName>Cy</FirstName><LastName>Ng</LastName><EmailAddress>cy@elm.test</EmailAddress><OfficeLineNumber>512-555-0300</OfficeLineNumber></Agent>
      <Office><BrokerageName>Elm &amp; Co</BrokerageName><BrokerPhone>512-555-0301</BrokerPhone></Office>
    </Listing></Listings>`);
    expect(extension({ preset: 'zillow' }, data!)).toEqual({
      ListAgentName: 'Cy Ng',
      ListAgentPhone: '512-555-0300',
      ListAgentEmail: 'cy@elm.test',
      ListOfficeName: 'Elm & Co',
      ListOfficePhone: '512-555-0301',
    });
  });

  it('listhub: the first Participant is the list agent; the office from Offices, else Brokerage', async () => {
    const [data] = await xmlRecords(`<Listings xmlns:commons="http://rets.org/xsd/RETSCommons"><Listing>
      <MlsNumber>L1</MlsNumber><ListingKey>lk1</ListingKey><ListingURL>https://broker.test/l/L1</ListingURL><ListingStatus>Active</ListingStatus>
      <ListPrice>500000</ListPrice><Bedrooms>3</Bedrooms><Bathrooms>2</Bathrooms><LivingArea>1500</LivingArea><LotSize>4000</LotSize><YearBuilt>1990</YearBuilt><PropertyType>Residential</PropertyType>
      <ListingParticipants>
        <Participant><FirstName>Di</FirstName><LastName>Ro</LastName><Role>Listing Agent</Role><PrimaryContactPhone>512-555-0400</PrimaryContactPhone><Email>di@ash.test</Email></Participant>
        <Participant><FirstName>Ed</FirstName><LastName>Yu</LastName><Role>Listing Agent</Role><OfficePhone>512-555-0500</OfficePhone></Participant>
      </ListingParticipants>
      <Brokerage><Name>Ash Brokerage</Name><Phone>512-555-0401</Phone><Email>desk@ash.test</Email></Brokerage>
    </Listing></Listings>`);
    expect(extension({ preset: 'listhub' }, data!)).toEqual({
      ListingKey: 'lk1',
      ListAgentName: 'Di Ro',
      ListAgentPhone: '512-555-0400',
      ListAgentEmail: 'di@ash.test',
      ListOfficeName: 'Ash Brokerage',
      ListOfficePhone: '512-555-0401',
      ListOfficeEmail: 'desk@ash.test',
    });
  });
});
