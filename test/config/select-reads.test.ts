// A RESO source's `select` against what its feed reads of a record, checked at config load: a field
// the mapping reads that the select leaves out comes back absent from every record, and most rules
// read absent as a value (the reso preset's HOAMonth takes an AssociationFee without its
// AssociationFeeFrequency as monthly: an annual 1200 shown as 1200 a month, on every listing). So the
// config is refused, naming the file:line of the select, each field left out with what reads it, and
// the fix; the sync, the worker and `config check` all load it this way.
import { describe, expect, it } from 'vitest';
import { parseConfig } from '../../src/config/load.js';
import { ConfigError } from '../../src/errors.js';
import { selectFlagWarnings } from '../../src/config/select-reads.js';

const config = (feed: string[]) =>
  [
    'api: { baseUrl: https://api.test, secretKey: test-secret-key-0123, sessionKey: test-session-key-4567 }',
    'chatbots: [{ serialNumber: SN-1 }, { serialNumber: SN-2 }]',
    'feeds:',
    '  - name: mls',
    '    chatbot: SN-1',
    ...feed.map((l) => `    ${l}`),
  ].join('\n');

function refusal(text: string): ConfigError {
  try {
    parseConfig(text, 'feedsync.yaml', {});
  } catch (err) {
    expect(err).toBeInstanceOf(ConfigError);
    return err as ConfigError;
  }
  throw new Error('the config was accepted');
}

/** the fields of the reso preset's rules and entries, but those named */
const RESO_READS = [
  'ListingId',
  'StandardStatus',
  'PropertyType',
  'PropertySubType',
  'ListPrice',
  'SecurityDeposit',
  'BedroomsTotal',
  'BathroomsTotalDecimal',
  'BathroomsTotalInteger',
  'LivingArea',
  'LivingAreaUnits',
  'LotSizeArea',
  'LotSizeSquareFeet',
  'LotSizeAcres',
  'LotSizeUnits',
  'YearBuilt',
  'DaysOnMarket',
  'CumulativeDaysOnMarket',
  'ParkingTotal',
  'GarageSpaces',
  'UnparsedAddress',
  'StreetNumber',
  'StreetName',
  'StreetSuffix',
  'City',
  'StateOrProvince',
  'PostalCode',
  'Latitude',
  'Longitude',
  'PublicRemarks',
  'AssociationFee',
  'AssociationFeeFrequency',
  ...['ListAgent', 'CoListAgent'].flatMap((a) =>
    ['FullName', 'FirstName', 'LastName', 'PreferredPhone', 'DirectPhone', 'Email'].map((f) => a + f),
  ),
  ...['ListOffice', 'CoListOffice'].flatMap((o) => ['Name', 'Phone', 'Email'].map((f) => o + f)),
];
const selectBut = (...left: string[]) => `[${RESO_READS.filter((f) => !left.includes(f)).join(', ')}]`;
const resoFeed = (select: string, more: string[] = []) => [
  'source:',
  '  kind: reso',
  '  url: https://mls.test/odata',
  `  select: ${select}`,
  ...more,
  'mapping: { preset: reso, fields: { Url: { template: "https://broker.test/l/{ListingId}" } } }',
];

describe("a RESO source's select against the fields its feed reads", () => {
  it("a select without AssociationFeeFrequency (read by the reso preset's HOAMonth, per.from) is refused at the select's line, naming the field, its reader and the fix", () => {
    const err = refusal(config(resoFeed(selectBut('AssociationFeeFrequency'))));
    expect(err.issues).toHaveLength(1);
    expect(err.issues[0]).toMatchObject({ path: 'feeds[0].source.select', line: 9 });
    expect(err.message).toContain(
      'feedsync.yaml:9: feeds[0].source.select must name every field this feed reads: it leaves out AssociationFeeFrequency (read by HOAMonth).',
    );
    expect(err.message).toContain('add AssociationFeeFrequency to source.select');
    expect(err.message).toContain(
      'for a field this server does not have, take out what reads it (mapping.fields.HOAMonth: null, or a rule of your own)',
    );
  });

  it('every field left out is named with what reads it: a from list, a template, a unit, an ExtensionColumn entry, a route', () => {
    const err = refusal(
      config([
        ...resoFeed(selectBut('LotSizeAcres', 'StreetSuffix', 'LotSizeUnits', 'CoListOfficeEmail')).filter(
          (l) => !l.startsWith('chatbot'),
        ),
      ]).replace(
        '    chatbot: SN-1',
        '    chatbots: [{ serialNumber: SN-1, where: { "ListAgentKey": [A1] } }, { serialNumber: SN-2 }]',
      ),
    );
    expect(err.issues).toHaveLength(1);
    expect(err.issues[0]!.message).toContain(
      'it leaves out 5 fields (each with what reads it): LotSizeAcres (LotArea), LotSizeUnits (LotArea), StreetSuffix (Address), CoListOfficeEmail (ExtensionColumn CoListOfficeEmail), ListAgentKey (chatbots[0].where).',
    );
  });

  it('with related Member and Office, the keys naming the agents and offices are read', () => {
    const err = refusal(config(resoFeed(selectBut(), ['  related: [Member, Office]'])));
    expect(err.issues[0]!.message).toContain(
      'ListAgentKey (related Member), CoListAgentKey (related Member), ListOfficeKey (related Office), CoListOfficeKey (related Office)',
    );
  });

  it('accepted: a select holding every field read; fields that come by $expand (Media) and those always asked (the key, ModificationTimestamp) need not be in it; no select; a file source', () => {
    expect(() => parseConfig(config(resoFeed(selectBut())), 'feedsync.yaml', {})).not.toThrow();
    expect(() =>
      parseConfig(config(resoFeed(selectBut()).filter((l) => !l.includes('select'))), 'feedsync.yaml', {}),
    ).not.toThrow();
    const file = resoFeed('[ListingKey]').map((l) => l.replace('url: https://mls.test/odata', 'path: feed.json'));
    expect(() => parseConfig(config(file), 'feedsync.yaml', {})).not.toThrow();
  });

  it('a rule taken out of the mapping (fields.HOAMonth: null) reads nothing: the select need not name its fields', () => {
    const text = config(resoFeed(selectBut('AssociationFee', 'AssociationFeeFrequency'))).replace(
      'fields: { Url:',
      'fields: { HOAMonth: null, Url:',
    );
    expect(() => parseConfig(text, 'feedsync.yaml', {})).not.toThrow();
  });
});

describe("a RESO source's select against the display rules' flags (a warning: a server may not carry a flag at all)", () => {
  const loaded = (text: string) => ({
    config: parseConfig(text, 'feedsync.yaml', {}),
    file: 'feedsync.yaml',
    dir: '.',
  });
  const flags = ['InternetEntireListingDisplayYN', 'IDXParticipationYN', 'InternetAddressDisplayYN', 'CloseDate'];

  it("an idx feed (a RESO source's default purpose) whose select leaves out the flags: one warning naming each and what an absent flag does", () => {
    const warnings = selectFlagWarnings(loaded(config(resoFeed(selectBut()))));
    expect(warnings).toHaveLength(1);
    expect(warnings[0]).toContain(
      'feedsync.yaml: feeds[0].source.select leaves out InternetEntireListingDisplayYN, IDXParticipationYN, InternetAddressDisplayYN, CloseDate, which the display rules (display.purpose idx) read',
    );
    expect(warnings[0]).toContain('an absent flag hides nothing');
    expect(warnings[0]).toContain('display.flags');
  });

  it('none: the flags selected (under the names display.flags gives), no select, an internal feed; MlgCanView only for vendor mlsgrid', () => {
    expect(selectFlagWarnings(loaded(config(resoFeed(`[${[...RESO_READS, ...flags].join(', ')}]`))))).toEqual([]);
    const renamed = config(
      resoFeed(
        `[${[...RESO_READS, 'InternetEntireListingDisplayYN', 'ACT_IDX', 'InternetAddressDisplayYN', 'CloseDate'].join(', ')}]`,
        ['display: { flags: { IDXParticipationYN: ACT_IDX } }'],
      ),
    );
    expect(selectFlagWarnings(loaded(renamed))).toEqual([]);
    expect(selectFlagWarnings(loaded(config(resoFeed(selectBut()).filter((l) => !l.includes('select')))))).toEqual([]);
    const internal = config(resoFeed(selectBut(), ['display: { purpose: internal }']));
    expect(selectFlagWarnings(loaded(internal))).toEqual([]);
  });
});
