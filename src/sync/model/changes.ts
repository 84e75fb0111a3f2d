// One listing's change, in the one format a dry run and a real run share: what the change log
// records, `feedsync history` and `runs show` print, and the status page links to. Plain data.
import { describeFieldChange } from '../../format/change.js';
import { formatPosition } from '../../feeds/position.js';
import type { FieldChange } from '../../listing/canonical.js';
import type { ListingCreate } from '../../listing/schema.js';
import { ruleLabel } from '../../mapping/display-rules.js';
import {
  ruleOf,
  type DeleteReason,
  type PlannedCreate,
  type PlannedDelete,
  type PlannedUpdate,
  type RejectedRecord,
  type RuleReason,
} from './plan-types.js';

/** The few fields that say which listing it is and what it costs, kept with a create. */
export type Headline = Partial<
  Pick<ListingCreate, 'Address' | 'City' | 'SalePrice' | 'RentPrice' | 'Status' | 'SaleType' | 'MLSNumber' | 'Url'>
>;

/**
 * What a write keeps for `feedsync undo` (capture-before.ts): `before` the listing as the service
 * held it just before (packed whole), or `beforeMissing` why it was not kept; `after` the
 * comparison hash of what was written (a later change on the service shows as a different hash).
 */
export interface Undoable {
  before?: string;
  beforeMissing?: string;
  after?: string;
}

/**
 * `withheldFields`: listing fields the display rules withheld from what was written (its address,
 * docs/display-rules.md); no value of them is in the change, nor in the listing kept before it, and
 * undo puts none of them back while the key's last write says so.
 */
export type ListingChange =
  | ({ op: 'create'; key: string; headline: Headline; withheldFields?: string[] } & Pick<Undoable, 'after'>)
  | ({
      op: 'update';
      key: string;
      reason: 'fields' | 'unlisted';
      changes: FieldChange[];
      headline?: Headline;
      withheldFields?: string[];
    } & Undoable)
  /** withheld: the guard held it back (nothing deleted); dry runs record what they would do */
  | ({ op: 'delete'; key: string; reason: DeleteReason; deleteKey?: string; withheld?: boolean } & Omit<
      Undoable,
      'after'
    >)
  | { op: 'reject'; key?: string; place: string; reasons: string[] }
  | { op: 'fail'; key: string; attempted: 'create' | 'update' | 'delete'; reason: string; retryable: boolean }
  /**
   * One entry for a whole run whose read was not whole (failed, capped, missed records): its `count`
   * deletes were withheld. One entry, not one per listing, so such runs do not bury real history.
   */
  | { op: 'withheld'; key?: undefined; count: number; reason: string };

/** Where a sync reports each change as it is made (or, in a dry run, planned). */
export type ChangeSink = (change: ListingChange) => void;

const HEADLINE: ReadonlyArray<keyof Headline> = [
  'MLSNumber',
  'Address',
  'City',
  'SaleType',
  'Status',
  'SalePrice',
  'RentPrice',
  'Url',
];

function headlineOf(listing: ListingCreate): Headline {
  const out: Record<string, unknown> = {};
  for (const f of HEADLINE) if (listing[f] !== undefined && listing[f] !== '') out[f] = listing[f];
  return out as Headline;
}

const withheldOf = (w: PlannedCreate['withheld']) => (w?.length ? { withheldFields: [...w] } : {});

export const createChange = (c: PlannedCreate): ListingChange => ({
  op: 'create',
  key: c.key,
  headline: headlineOf(c.listing),
  ...withheldOf(c.withheld),
});
export const updateChange = (
  u: Pick<PlannedUpdate, 'key' | 'reason' | 'changes' | 'listing' | 'withheld'>,
): ListingChange => ({
  op: 'update',
  key: u.key,
  reason: u.reason,
  changes: u.changes,
  headline: headlineOf(u.listing),
  ...withheldOf(u.withheld),
});
export const deleteChange = (
  d: Pick<PlannedDelete, 'key' | 'reason' | 'deleteKey'>,
  withheld = false,
): ListingChange => ({
  op: 'delete',
  key: d.key,
  reason: d.reason,
  ...(d.reason === 'duplicate' && { deleteKey: d.deleteKey }),
  ...(withheld && { withheld }),
});

export const withheldChange = (count: number, why: string): ListingChange => ({
  op: 'withheld',
  count,
  reason: `deletes withheld: read not whole (${why})`,
});

export function rejectChange(r: RejectedRecord): ListingChange {
  const p = r.position;
  const place = formatPosition(p);
  return { op: 'reject', ...(r.key && { key: r.key }), place, reasons: r.reasons };
}

/** (entries logged before the reason was named off-market say `skipped`) */
const REASONS: Record<Exclude<DeleteReason, RuleReason>, string> & Record<string, string | undefined> = {
  absent: 'no longer in the feed',
  removed: 'the source marks it removed',
  'off-market': 'its last record is off the market (the mapping skips it)',
  skipped: 'its last record is off the market (the mapping skips it)',
  duplicate: 'an extra copy of the key',
  moved: "its record no longer matches this chatbot's where (routed elsewhere)",
  undone: 'feedsync undo: the undone run created it',
};

/** Why a listing went, for a person: "no longer in the feed", "display rule: InternetEntireListingDisplayYN false". */
export function deleteReasonText(reason: string): string {
  const rule = ruleOf(reason);
  if (rule) return `display rule: ${ruleLabel(rule)}`;
  return REASONS[reason] ?? reason;
}

/** One line for a person: `~ ATX1 SalePrice 450000 → 465000`. */
export function describeChange(c: ListingChange, planned = false): string {
  const would = planned ? 'would ' : '';
  switch (c.op) {
    case 'create': {
      const h = c.headline;
      const price = h.SalePrice ?? h.RentPrice;
      const what = [
        h.Address && h.City ? `${h.Address}, ${h.City}` : (h.Address ?? h.City),
        price !== undefined ? `price ${price}` : undefined,
        h.Status,
      ].filter(Boolean);
      return `+ ${c.key} ${would}create${what.length ? `: ${what.join(', ')}` : ''}`;
    }
    case 'update':
      return c.reason === 'unlisted'
        ? `~ ${c.key} ${would}update: a field the list does not return (Location, AreaUnit, …) changed since the last write`
        : `~ ${c.key} ${would}update: ${c.changes.map((ch) => `${ch.field} ${describeFieldChange(ch.old, ch.new, ch.oldWithheld ? 'withheld' : ch.oldNotKept, ch.newWithheld)}`).join('; ')}`;
    case 'delete':
      return `- ${c.key} ${c.withheld ? 'delete held back by the guard' : `${would}delete`} (${deleteReasonText(c.reason)}${c.deleteKey ? `, ID ${c.deleteKey}` : ''})`;
    case 'reject':
      return `! ${c.key ?? '(no key)'} rejected at ${c.place}: ${c.reasons.join('; ')}`;
    case 'fail':
      return `x ${c.key} ${c.attempted} failed: ${c.reason}${c.retryable ? ' (transient)' : ''}`;
    case 'withheld':
      return `- ${c.count} listing(s) absent from the feed kept: ${c.reason}`;
  }
}
