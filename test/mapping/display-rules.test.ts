// The display rules (src/mapping/display-rules.ts) applied to RESO records through the reso preset,
// and the config-time check that no mapping of an idx or vow feed reads a restricted field.
import { describe, expect, it } from 'vitest';
import { generateResoRecords } from '../../fixtures/generate.js';
import { formatIssue } from '../../src/errors.js';
import { FeedConfig } from '../../src/config/schema.js';
import { mapItem } from '../../src/mapping/map-feed.js';
import { compileMapping } from '../../src/mapping/index.js';
import { MappingConfig } from '../../src/mapping/config-schema.js';
import { resolveDisplay, type DisplayConfig } from '../../src/mapping/display-config.js';
import { readFlag } from '../../src/mapping/display-rules.js';
import type { MappedItem } from '../../src/mapping/types.js';

const NOW = new Date('2026-11-26T12:00:00Z');
const mapping = MappingConfig.parse({
  preset: 'reso',
  fields: { Url: { template: 'https://broker.test/l/{ListingId}' } },
});

function record(fields: Record<string, unknown> = {}): Record<string, unknown> {
  const [r] = generateResoRecords(1, { seed: 3 });
  return { ...r, StandardStatus: 'Active', ListOfficeName: 'Oak Realty', ...fields };
}

function mapWith(
  display: Partial<DisplayConfig> | undefined,
  data: Record<string, unknown>,
  kind: 'record' | 'removed' = 'record',
): MappedItem {
  const compiled = compileMapping(mapping, { now: () => NOW, display: resolveDisplay(display, 'reso') });
  return mapItem({ kind, position: { file: 'f', index: 0 }, data }, compiled, {
    serialNumber: 'SN-1',
    keyBy: 'MLSNumber',
  });
}

const ruleOf = (m: MappedItem) => (m.kind === 'skipped' ? m.rule : undefined);

describe('display rules of an idx feed', () => {
  it.each([
    ['StandardStatus', { StandardStatus: null }],
    ['StandardStatus', { StandardStatus: 'Actve' }],
    ['InternetEntireListingDisplayYN', { InternetEntireListingDisplayYN: 'maybe' }],
    ['IDXParticipationYN', { IDXParticipationYN: 7 }],
  ])(
    'holds back, never hides, a record whose %s it cannot read: a removal by rule is not held by any limit',
    (field, fields) => {
      const m = mapWith(undefined, record(fields));
      expect(m.kind).toBe('rejected');
      expect(m.kind === 'rejected' && m.issues.map((i) => i.field)).toEqual([field]);
    },
  );

  it.each([
    ['InternetEntireListingDisplayYN', { InternetEntireListingDisplayYN: false }],
    ['InternetEntireListingDisplayYN', { InternetEntireListingDisplayYN: 'N' }],
    ['IDXParticipationYN', { IDXParticipationYN: '0' }],
    ['MlgCanView', { MlgCanView: false }],
    ['StandardStatus', { StandardStatus: 'Expired' }],
    ['StandardStatus', { StandardStatus: 'ComingSoon' }],
    ['sold-window', { StandardStatus: 'Closed', CloseDate: '2026-11-20' }],
  ])('hides a record by %s', (rule, fields) => {
    expect(ruleOf(mapWith(undefined, record(fields)))).toBe(rule);
  });

  it('reads a flag under its local name (flags), in any of its spellings', () => {
    expect(ruleOf(mapWith({ flags: { IDXParticipationYN: 'ACT_IDXOptInYN' } }, record({ ACT_IDXOptInYN: '0' })))).toBe(
      'IDXParticipationYN',
    );
    expect(
      mapWith(
        { flags: { IDXParticipationYN: 'ACT_IDXOptInYN' } },
        record({ ACT_IDXOptInYN: '1', IDXParticipationYN: false }),
      ).kind,
    ).toBe('listing');
    expect([true, 'Y', 'yes', '1', 1].map(readFlag)).toEqual([true, true, true, true, true]);
    expect([false, 'N', 'No', '0', 0].map(readFlag)).toEqual([false, false, false, false, false]);
    expect([undefined, null, ''].map(readFlag)).toEqual([undefined, undefined, undefined]);
    expect(readFlag('maybe')).toBe('unreadable');
  });

  it('a record MLS Grid marks MlgCanView false is a removal by that rule; without display rules it stays "removed"', () => {
    expect(ruleOf(mapWith(undefined, record({ MlgCanView: false }), 'removed'))).toBe('MlgCanView');
    expect(mapWith({ purpose: 'internal' }, record({ MlgCanView: false }), 'removed').kind).toBe('removed');
  });

  it('withholds the street address and coordinates when InternetAddressDisplayYN is false', () => {
    const m = mapWith(undefined, record({ InternetAddressDisplayYN: 'N' }));
    expect(m.kind).toBe('listing');
    if (m.kind !== 'listing') return;
    expect([m.listing.Address, m.listing.Location, m.listing.Latitude, m.listing.Longitude]).toEqual([
      undefined,
      undefined,
      undefined,
      undefined,
    ]);
    expect(m.listing.City).toBeTruthy();
    expect(m.shown).toEqual({ addressWithheld: true });
    const shown = mapWith(undefined, record({ InternetAddressDisplayYN: true }));
    expect(shown.kind === 'listing' && shown.listing.Address).toBeTruthy();
  });

  it('renders the attribution and disclaimer from the source record into ExtensionColumn', () => {
    const m = mapWith(
      {
        attribution: 'Listing courtesy of {ListOfficeName} ({ListAgentFullName})',
        disclaimer: 'Deemed reliable, not guaranteed.',
      },
      record({ ListAgentFullName: 'Ann Lee' }),
    );
    // (the reso preset's agent and office entries come before them)
    const rendered = (x: typeof m) =>
      x.kind === 'listing' &&
      x.listing.ExtensionColumn?.filter((e) => e.Key === 'Attribution' || e.Key === 'Disclaimer');
    expect(rendered(m)).toEqual([
      { Key: 'Attribution', value: 'Listing courtesy of Oak Realty (Ann Lee)' },
      { Key: 'Disclaimer', value: 'Deemed reliable, not guaranteed.' },
    ]);
    // the default of an idx feed
    const d = mapWith(undefined, record());
    expect(rendered(d)).toEqual([{ Key: 'Attribution', value: 'Listing courtesy of Oak Realty' }]);
  });

  it('holds back a record that lacks a field its attribution names, saying so', () => {
    const m = mapWith(undefined, record({ ListOfficeName: undefined }));
    expect(m.kind).toBe('rejected');
    expect(m.kind === 'rejected' && m.issues.map(formatIssue)).toEqual([
      'ListOfficeName is missing (display.attribution names ListOfficeName, and a listing is never shown without its attribution: held back)',
    ]);
    expect(m.key).toBeTruthy();
  });

  // issue 54: a held-back record said "ExtensionColumn is missing" / "InternetEntireListingDisplayYN
  // is missing" when the field was there: the reason says what the record holds and what is wrong with it
  const NOT_TOLD = 'the display rules cannot tell whether the listing may be shown';
  const ATTRIBUTION = `display.attribution names ListOfficeName, and a listing is never shown without its attribution: held back`;
  it.each([
    [
      'a flag present with a value that is not a yes/no',
      {},
      { InternetEntireListingDisplayYN: 'maybe' },
      `InternetEntireListingDisplayYN is not a yes/no (Y/N, Yes/No, true/false, 1/0): ${NOT_TOLD}: held back (got "maybe")`,
    ],
    [
      'a flag present with a number other than 1/0',
      {},
      { IDXParticipationYN: 7 },
      `IDXParticipationYN is not a yes/no (Y/N, Yes/No, true/false, 1/0): ${NOT_TOLD}: held back (got 7)`,
    ],
    [
      'a flag under its local name (flags)',
      { flags: { IDXParticipationYN: 'ACT_IDXOptInYN' } },
      { ACT_IDXOptInYN: 'unknown' },
      `ACT_IDXOptInYN is not a yes/no (Y/N, Yes/No, true/false, 1/0): ${NOT_TOLD}: held back (got "unknown")`,
    ],
    [
      'StandardStatus absent',
      {},
      { StandardStatus: undefined },
      `StandardStatus is missing (${NOT_TOLD} without it: held back)`,
    ],
    [
      'StandardStatus present but empty',
      {},
      { StandardStatus: ' ' },
      `StandardStatus is empty: ${NOT_TOLD}: held back (got " ")`,
    ],
    [
      'StandardStatus present as null',
      {},
      { StandardStatus: null },
      `StandardStatus is empty: ${NOT_TOLD}: held back (got null)`,
    ],
    [
      'StandardStatus neither a Data Dictionary value nor among statuses',
      {},
      { StandardStatus: 'Actve' },
      'StandardStatus is neither a StandardStatus value nor among display.statuses: held back (got "Actve")',
    ],
    ['an attribution field absent', {}, { ListOfficeName: undefined }, `ListOfficeName is missing (${ATTRIBUTION})`],
    [
      'an attribution field present but empty',
      {},
      { ListOfficeName: '' },
      `ListOfficeName is empty: ${ATTRIBUTION} (got "")`,
    ],
    [
      'an attribution field present as a list of blanks',
      {},
      { ListOfficeName: ['', ' '] },
      `ListOfficeName is empty: ${ATTRIBUTION} (got [""," "])`,
    ],
    [
      'an attribution field present but not text',
      {},
      { ListOfficeName: { Name: 'Oak Realty' } },
      `ListOfficeName is not text: ${ATTRIBUTION} (got {"Name":"Oak Realty"})`,
    ],
    [
      'one of two attribution fields absent',
      { attribution: 'Listing courtesy of {ListOfficeName} ({ListAgentFullName})' },
      { ListAgentFullName: undefined },
      'ListAgentFullName is missing (display.attribution names ListAgentFullName (of ListOfficeName, ListAgentFullName), and a listing is never shown without its attribution: held back)',
    ],
    [
      'an attribution field absent on an internal feed',
      { purpose: 'internal', attribution: 'Listing courtesy of {ListOfficeName}' },
      { ListOfficeName: undefined },
      `ListOfficeName is missing (${ATTRIBUTION})`,
    ],
  ] as const)('a record held back for %s says what is wrong with the field', (_case, display, fields, reason) => {
    const m = mapWith(display as Partial<DisplayConfig>, record(fields));
    expect(m).toMatchObject({ kind: 'rejected', held: true });
    expect(m.kind === 'rejected' && m.issues.map(formatIssue)).toEqual([reason]);
  });

  it('shows a Closed listing until soldDays after its CloseDate (fixed clock), and says when its window ends', () => {
    const inside = mapWith({ soldDays: 30 }, record({ StandardStatus: 'Closed', CloseDate: '2026-11-01' }));
    expect(inside.kind === 'listing' && inside.listing.Status).toBe('Sold');
    expect(inside.kind === 'listing' && inside.shown).toEqual({ until: '2026-12-01T00:00:00.000Z' });
    const past = mapWith({ soldDays: 30 }, record({ StandardStatus: 'Closed', CloseDate: '2026-10-01' }));
    expect(past.kind === 'skipped' && [past.rule, past.reason]).toEqual([
      'sold-window',
      'closed 2026-10-01, more than 30 days ago',
    ]);
    expect(ruleOf(mapWith({ soldDays: 30 }, record({ StandardStatus: 'Closed' })))).toBe('sold-window');
  });

  it('internal applies no rule, and maps exactly as without display', () => {
    const data = record({
      InternetEntireListingDisplayYN: false,
      StandardStatus: 'Closed',
      InternetAddressDisplayYN: false,
      ListOfficeName: undefined,
    });
    const plain = mapItem(
      { kind: 'record', position: { file: 'f', index: 0 }, data },
      compileMapping(mapping, { now: () => NOW }),
      { serialNumber: 'SN-1', keyBy: 'MLSNumber' },
    );
    expect(mapWith({ purpose: 'internal' }, data)).toEqual(plain);
    expect(plain.kind).toBe('listing');
  });
});

describe('display at config load', () => {
  const feed = (over: Record<string, unknown>) => ({
    name: 'f',
    chatbot: 'SN-1',
    source: { kind: 'reso', url: 'https://mls.test/odata' },
    mapping: { preset: 'reso' },
    ...over,
  });

  const resolved = (given: Record<string, unknown>) => {
    const parsed = FeedConfig.parse(given);
    return resolveDisplay(parsed.display, parsed.source.kind);
  };

  it('defaults: idx for RESO sources, internal for CSV and XML', () => {
    expect(resolved(feed({}))).toMatchObject({
      purpose: 'idx',
      soldDays: 0,
      attribution: 'Listing courtesy of {ListOfficeName}',
    });
    expect(resolved(feed({ source: { kind: 'csv', path: 'x.csv' } }))).toMatchObject({ purpose: 'internal' });
    expect(resolved(feed({ source: { kind: 'csv', path: 'x.csv' } })).attribution).toBeUndefined();
  });

  it.each([
    [
      { mapping: { preset: 'reso', fields: { Description: { from: ['PublicRemarks', 'PrivateRemarks'] } } } },
      ['mapping', 'fields', 'Description'],
      /mapping\.fields\.Description reads PrivateRemarks, restricted: private and office remarks/,
    ],
    [
      { mapping: { preset: 'reso', extension: { Gate: 'AccessCode' } } },
      ['mapping', 'extension', 'Gate'],
      /mapping\.extension Gate reads AccessCode, restricted: lockbox and access codes/,
    ],
    [
      { mapping: { preset: 'reso', fields: { Description: { template: 'Call {ShowingContactPhone}' } } } },
      ['mapping', 'fields', 'Description'],
      /reads ShowingContactPhone/,
    ],
    [
      { display: { attribution: 'Courtesy of {OwnerName}' } },
      ['display', 'attribution'],
      /display\.attribution reads OwnerName, restricted: owner and occupant/,
    ],
    [
      {
        display: { purpose: 'vow', withhold: ['ListAgentEmail'] },
        mapping: { preset: 'reso', extension: ['ListAgentEmail'] },
      },
      ['mapping', 'extension', 0],
      /reads ListAgentEmail, listed in display\.withhold/,
    ],
    [
      { display: { flags: { InternetAddressDisplayYN: 'Listing.ShowingInstructions' } } },
      ['display', 'flags', 'InternetAddressDisplayYN'],
      /display\.flags\.InternetAddressDisplayYN reads ShowingInstructions \(Listing\.ShowingInstructions\), restricted: showing instructions/,
    ],
    [
      { display: { withhold: ['ACT_Gate'], flags: { IDXParticipationYN: 'ACT_Gate' } } },
      ['display', 'flags', 'IDXParticipationYN'],
      /reads ACT_Gate, listed in display\.withhold/,
    ],
  ])(
    'a mapping that reads a restricted field is an error naming the field and the rule (%#)',
    (over, path, message) => {
      const r = FeedConfig.safeParse(feed(over));
      expect(r.success).toBe(false);
      const issue = r.error!.issues.find((i) => message.test(i.message));
      expect(issue, JSON.stringify(r.error!.issues)).toBeDefined();
      expect(issue!.path).toEqual(path);
    },
  );

  it('internal may read the built-in list (a back-office chatbot), but never display.withhold', () => {
    expect(
      FeedConfig.safeParse(
        feed({ display: { purpose: 'internal' }, mapping: { preset: 'reso', extension: ['PrivateRemarks'] } }),
      ).success,
    ).toBe(true);
    expect(
      FeedConfig.safeParse(
        feed({
          display: { purpose: 'internal', withhold: ['PrivateRemarks'] },
          mapping: { preset: 'reso', extension: ['PrivateRemarks'] },
        }),
      ).success,
    ).toBe(false);
  });

  it('refuses an unknown purpose or flag', () => {
    expect(FeedConfig.safeParse(feed({ display: { purpose: 'public' } })).error?.issues[0]?.message).toMatch(
      /unknown purpose "public"/,
    );
    expect(FeedConfig.safeParse(feed({ display: { flags: { IDXOptIn: 'X' } } })).success).toBe(false);
  });
});
