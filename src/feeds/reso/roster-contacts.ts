// A listing's agent and office contact from the MLS roster (source.related: Member, Office). Pure.
// A Member record kept is its contact fields only (MemberFullName, …, MemberEmail: the Data
// Dictionary's names); an Office record its OfficeName, OfficePhone, OfficeEmail. A Property record
// names its agents and offices by key (ListAgentKey, CoListAgentKey, ListOfficeKey, CoListOfficeKey);
// where the roster holds the record a key names, that record's contact replaces the Property's own
// contact fields of that role (ListAgentFullName, …), a field the roster record lacks included, so
// the mapping (the reso preset's agent entries) reads the current contact; where it does not, the
// Property's own fields stay.

export const ROSTER_RESOURCES = ['Member', 'Office'] as const;
export type RosterResource = (typeof ROSTER_RESOURCES)[number];

/** Roster records one lane keeps between runs (source.related Member, Office): key → its contact fields as JSON. */
export type RosterStore = Readonly<Record<RosterResource, ReadonlyMap<string, string>>>;

/** What a read pulled of one roster resource: each record read (key → contact JSON), the keys it said to remove, and whether it read the resource whole. */
export interface RosterPull {
  resource: RosterResource;
  read: ReadonlyMap<string, string>;
  removed: ReadonlySet<string>;
  full: boolean;
}

/** The key field of each roster resource (Data Dictionary). */
export const ROSTER_KEY: Readonly<Record<RosterResource, string>> = { Member: 'MemberKey', Office: 'OfficeKey' };

/** Property field suffix (after the role: ListAgent, CoListOffice, …) → the roster record's field. */
const CONTACT_FIELDS: Readonly<Record<RosterResource, Readonly<Record<string, string>>>> = {
  Member: {
    FullName: 'MemberFullName',
    FirstName: 'MemberFirstName',
    LastName: 'MemberLastName',
    PreferredPhone: 'MemberPreferredPhone',
    DirectPhone: 'MemberDirectPhone',
    MobilePhone: 'MemberMobilePhone',
    Email: 'MemberEmail',
  },
  Office: { Name: 'OfficeName', Phone: 'OfficePhone', Email: 'OfficeEmail' },
};

/** The roles a Property record names roster records in: the key field, and the prefix of its contact fields. */
export const ROSTER_ROLES: ReadonlyArray<{ resource: RosterResource; keyField: string; prefix: string }> = [
  { resource: 'Member', keyField: 'ListAgentKey', prefix: 'ListAgent' },
  { resource: 'Member', keyField: 'CoListAgentKey', prefix: 'CoListAgent' },
  { resource: 'Office', keyField: 'ListOfficeKey', prefix: 'ListOffice' },
  { resource: 'Office', keyField: 'CoListOfficeKey', prefix: 'CoListOffice' },
];

export type Contact = Readonly<Record<string, string>>;

/** The contact fields of a roster record that hold a value (text or number), as kept in the state store. */
export function contactOf(resource: RosterResource, record: Record<string, unknown>): Contact {
  const out: Record<string, string> = {};
  for (const field of Object.values(CONTACT_FIELDS[resource])) {
    const v = record[field];
    if ((typeof v === 'string' && v.trim() !== '') || (typeof v === 'number' && Number.isFinite(v)))
      out[field] = String(v);
  }
  return out;
}

/** The key a Property field names a roster record by, as text; undefined when empty. */
export function namedKey(record: Record<string, unknown>, keyField: string): string | undefined {
  const v = record[keyField];
  return typeof v === 'string' ? (v === '' ? undefined : v) : typeof v === 'number' ? String(v) : undefined;
}

/**
 * The Property record with the contact of each roster record it names (among `resources`) in place
 * of its own contact fields of that role; the record itself when it names none the roster holds.
 */
export function withContacts(
  record: Record<string, unknown>,
  resources: ReadonlySet<RosterResource>,
  contact: (resource: RosterResource, key: string) => Contact | undefined,
): Record<string, unknown> {
  let out: Record<string, unknown> | undefined;
  for (const role of ROSTER_ROLES) {
    if (!resources.has(role.resource)) continue;
    const key = namedKey(record, role.keyField);
    const found = key === undefined ? undefined : contact(role.resource, key);
    if (!found) continue;
    out ??= { ...record };
    for (const [suffix, field] of Object.entries(CONTACT_FIELDS[role.resource])) {
      const name = `${role.prefix}${suffix}`;
      if (found[field] !== undefined) out[name] = found[field];
      else delete out[name];
    }
  }
  return out ?? record;
}

/** What a lane's copy of the roster takes from a pull: the contacts it does not hold yet, the keys it holds that went. */
export function rosterDifference(
  copy: RosterStore,
  learned: readonly RosterPull[],
): Array<{ resource: RosterResource; set: Array<[string, string]>; delete: string[] }> {
  return learned.map((p) => {
    const held = copy[p.resource];
    const set = [...p.read].filter(([key, contact]) => held.get(key) !== contact);
    const gone = [...p.removed].filter((key) => held.has(key));
    if (p.full) for (const key of held.keys()) if (!p.read.has(key)) gone.push(key);
    return { resource: p.resource, set, delete: gone };
  });
}
