// A RESO source's `select` against what its feed reads of a record. A field the `$select` leaves out
// comes back absent from every record, and most rules read absent as a value: the reso preset's
// HOAMonth takes an AssociationFee without its AssociationFeeFrequency as a monthly fee (an annual
// 1200 shown as 1200 a month), MLSNumber falls back from ListingId to the ListingKey, LotArea to 0,
// a route's where takes no record. Nothing in a run can tell that from a record without the value,
// so when a select is given, every field the feed reads must be in it, else the config is refused:
// the fields its mapping reads (mapped-fields.ts, from rule-paths.ts: each `from`, template
// placeholder, unit and `per` field, the ExtensionColumn entries, the preset's included), each
// route's `where`, and, with `related: [Member, Office]`, the Property fields naming the agents and
// offices. Not asked of it: what the reader adds to every `$select` (the key, ModificationTimestamp,
// the photos' timestamp) and what comes by `$expand` (Media, OpenHouse). Pure.
import { fieldOf } from '../mapping/rule-paths.js';
import { mappedFields } from '../mapping/mapped-fields.js';
import type { MappingConfig } from '../mapping/config-schema.js';
import type { ResoSource } from '../feeds/config-schema.js';
import { ROSTER_ROLES } from '../feeds/reso/roster-contacts.js';
import { flagFieldsRead } from '../mapping/display-rules.js';
import type { DisplayRules } from '../mapping/display-config.js';

/** Navigation properties a record carries by `$expand`, never by `$select`. */
const EXPANDED = new Set(['Media', 'OpenHouse']);
/** Fields the reader adds to every `$select` of a pull (reso-reader.ts planPull). */
const ALWAYS_ASKED = ['ModificationTimestamp'];

export interface SelectGap {
  /** the source field the select leaves out */
  field: string;
  /** what reads it: a listing field (HOAMonth), `ExtensionColumn ListAgentName`, `chatbots[0].where`, `related Member` */
  usedBy: string[];
}

export interface SelectedFeed {
  source: { kind: string } & Partial<
    Pick<ResoSource, 'url' | 'select' | 'keyField' | 'photosTimestampField' | 'related'>
  >;
  mapping: MappingConfig;
  chatbots?: ReadonlyArray<{ where?: Record<string, unknown> }>;
}

/** What a live RESO source's select asks for, with what the reader adds to it; undefined: no select (every field comes). */
function askedFields(source: SelectedFeed['source']): Set<string> | undefined {
  if (source.kind !== 'reso' || !source.url || !source.select?.length) return undefined;
  return new Set([
    ...source.select,
    ...ALWAYS_ASKED,
    ...(source.keyField ? [source.keyField] : []),
    ...(source.photosTimestampField ? [source.photosTimestampField] : []),
  ]);
}

/** The fields a live RESO source's select leaves out that the feed reads, in the order they are read; none without a select. */
export function selectGaps(feed: SelectedFeed): SelectGap[] {
  const asked = askedFields(feed.source);
  if (!asked) return [];
  const { source } = feed;
  const gaps = new Map<string, string[]>();
  const read = (field: string, usedBy: string) => {
    if (asked.has(field) || EXPANDED.has(field)) return;
    const readers = gaps.get(field) ?? [];
    if (!readers.includes(usedBy)) readers.push(usedBy);
    gaps.set(field, readers);
  };
  for (const m of mappedFields(feed.mapping)) read(m.field, m.usedBy);
  feed.chatbots?.forEach((route, i) => {
    for (const path of Object.keys(route.where ?? {})) read(fieldOf(path), `chatbots[${i}].where`);
  });
  for (const role of ROSTER_ROLES)
    if (source.related?.includes(role.resource)) read(role.keyField, `related ${role.resource}`);
  return [...gaps].map(([field, usedBy]) => ({ field, usedBy }));
}

/** The issue's sentence, after `feeds[i].source.select`: each field left out with what reads it, and the two fixes. */
export function selectGapMessage(gaps: readonly SelectGap[]): string {
  const one = gaps.length === 1 ? gaps[0] : undefined;
  const left = one
    ? `${one.field} (read by ${one.usedBy.join(', ')})`
    : `${gaps.length} fields (each with what reads it): ${gaps.map((g) => `${g.field} (${g.usedBy.join(', ')})`).join(', ')}`;
  const readers = gaps.flatMap((g) => g.usedBy);
  const rules = [...new Set(readers.filter((u) => /^[A-Z]\w*$/.test(u)))];
  const takeOut = [
    ...(rules.length === 1 ? [`mapping.fields.${rules[0]}: null, or a rule of your own`] : []),
    ...(rules.length > 1 ? ['mapping.fields.<Field>: null, or a rule of your own'] : []),
    ...(readers.some((u) => u.startsWith('ExtensionColumn'))
      ? ["a preset's ExtensionColumn entry: display.withhold"]
      : []),
  ];
  return (
    `must name every field this feed reads: it leaves out ${left}. ` +
    'A field not selected comes back absent from every record, and what reads it then gives a wrong value or none: ' +
    `add ${one ? one.field : 'them'} to source.select` +
    (takeOut.length
      ? `, or, for a field this server does not have, take out what reads it (${takeOut.join('; ')})`
      : '')
  );
}

/**
 * The display rules' flags a RESO source's select leaves out, one warning a feed. Not a refusal as
 * selectGaps is: a server may not carry a flag at all (then nothing can be done and nothing is
 * hidden), but where it does, a flag left out of the select comes back absent, and an absent flag
 * hides nothing: a listing whose seller opted out of internet display, or withheld the address,
 * would be shown. MlgCanView is read only from MLS Grid (vendor mlsgrid), the one server that has it.
 */
export function selectFlagWarnings(loaded: {
  file: string;
  config: {
    feeds: ReadonlyArray<{ source: SelectedFeed['source'] & { vendor?: string }; displayRules: DisplayRules }>;
  };
}): string[] {
  return loaded.config.feeds.flatMap((feed, i) => {
    const asked = askedFields(feed.source);
    if (!asked) return [];
    const rules = feed.displayRules;
    const left = flagFieldsRead(rules.purpose)
      .filter((rule) => rule !== 'MlgCanView' || feed.source.vendor === 'mlsgrid')
      .map((rule) => rules.fields[rule])
      .filter((field) => !asked.has(field));
    if (!left.length) return [];
    return [
      `${loaded.file}: feeds[${i}].source.select leaves out ${left.join(', ')}, which the display rules (display.purpose ${rules.purpose}) read: ` +
        'a field not selected comes back absent, and an absent flag hides nothing, so a listing whose seller opted out of display or withheld its address would be shown. ' +
        'Add them to source.select; where the server carries one under another name, display.flags.<Rule>: <its field> (docs/display-rules.md)',
    ];
  });
}
