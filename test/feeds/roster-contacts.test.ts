// The roster's contact in place of a Property's own (src/feeds/reso/roster-contacts.ts): pure.
import { describe, expect, it } from 'vitest';
import { contactOf, rosterDifference, withContacts, type Contact } from '../../src/feeds/reso/roster-contacts.js';
import type { RosterPull } from '../../src/feeds/reso/roster-contacts.js';

const ALL = new Set(['Member', 'Office'] as const);
const roster: Record<string, Record<string, Contact>> = {
  Member: {
    A1: { MemberFullName: 'Ann Agent', MemberDirectPhone: '512-555-0101' },
    C2: { MemberFullName: 'Cole Co', MemberEmail: 'cole@broker.test' },
  },
  Office: { O1: { OfficeName: 'Hill Realty', OfficePhone: '512-555-0900' } },
};
const contact = (resource: 'Member' | 'Office', key: string) => roster[resource]![key];

describe('withContacts', () => {
  it("replaces each named role's contact fields with the roster record's, a field it lacks removed; other roles and fields untouched", () => {
    const record = {
      ListingKey: 'K1',
      ListAgentKey: 'A1',
      ListAgentFullName: 'Stale Name',
      ListAgentPreferredPhone: '555-0000',
      ListAgentEmail: 'stale@old.test',
      CoListAgentKey: 'C2',
      ListOfficeKey: 'O1',
      ListOfficeEmail: 'office@old.test',
      CoListOfficeKey: 'O9',
      CoListOfficeName: 'Own Co Office',
      ListPrice: 500_000,
    };
    const out = withContacts(record, ALL, contact);
    expect(out).toEqual({
      ListingKey: 'K1',
      ListAgentKey: 'A1',
      ListAgentFullName: 'Ann Agent',
      ListAgentDirectPhone: '512-555-0101',
      CoListAgentKey: 'C2',
      CoListAgentFullName: 'Cole Co',
      CoListAgentEmail: 'cole@broker.test',
      ListOfficeKey: 'O1',
      ListOfficeName: 'Hill Realty',
      ListOfficePhone: '512-555-0900',
      CoListOfficeKey: 'O9',
      CoListOfficeName: 'Own Co Office',
      ListPrice: 500_000,
    });
    // the record read is not changed
    expect(record.ListAgentFullName).toBe('Stale Name');
  });

  it('a record naming no roster record, or a resource not replicated, is the record itself', () => {
    const record = { ListAgentKey: 'A9', ListOfficeKey: 'O1', ListOfficeName: 'Own' };
    expect(withContacts({ ListAgentKey: 'A9' }, ALL, contact)).toEqual({ ListAgentKey: 'A9' });
    expect(withContacts(record, new Set(['Member'] as const), contact)).toBe(record);
  });

  it('contactOf keeps the contact fields that hold text or a number, nothing else', () => {
    expect(
      contactOf('Member', {
        MemberKey: 'A1',
        MemberFullName: 'Ann',
        MemberEmail: ' ',
        MemberMobilePhone: null,
        MemberAddress1: '1 Main',
        MlgCanView: true,
      }),
    ).toEqual({
      MemberFullName: 'Ann',
    });
  });
});

describe('rosterDifference', () => {
  const copy = {
    Member: new Map([
      ['A1', '{"MemberFullName":"Ann"}'],
      ['A2', '{"MemberFullName":"Bo"}'],
      ['A3', '{}'],
    ]),
    Office: new Map<string, string>(),
  };
  it('an incremental pull: what differs is set, a removed key the copy holds deleted', () => {
    const pull: RosterPull = {
      resource: 'Member',
      read: new Map([
        ['A1', '{"MemberFullName":"Ann"}'],
        ['A4', '{}'],
      ]),
      removed: new Set(['A2', 'A7']),
      full: false,
    };
    expect(rosterDifference(copy, [pull])).toEqual([{ resource: 'Member', set: [['A4', '{}']], delete: ['A2'] }]);
  });
  it('a full pull also drops what it did not read', () => {
    const pull: RosterPull = {
      resource: 'Member',
      read: new Map([['A1', '{"MemberFullName":"Ann B"}']]),
      removed: new Set(),
      full: true,
    };
    expect(rosterDifference(copy, [pull])).toEqual([
      { resource: 'Member', set: [['A1', '{"MemberFullName":"Ann B"}']], delete: ['A2', 'A3'] },
    ]);
  });
});
