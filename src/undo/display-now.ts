// A listing put back by undo, as the feed's display rules let it be shown now (docs/undo.md,
// docs/display-rules.md): pure. Undo reads no feed, so what the rules say of a key's record is what
// its last write (in the undone run, or any run after it) says:
// - a key a display rule removed last (a delete `rule:<name>`) is not written back at all;
// - a key whose last write withheld fields (its address: `withheldFields`) is put back without them,
//   on an idx or vow feed (an `internal` feed applies no rule);
// - an ExtensionColumn entry named for a field the feed restricts now (the built-in list on idx and
//   vow, `display.withhold`) is left out: a listing written under an older config may carry one.
import type { ListingCreate } from '../listing/schema.js';
import type { DisplayRules } from '../mapping/display-config.js';
import { ADDRESS_FIELDS, type WithheldField } from '../mapping/display-rules.js';
import { restrictedOf } from '../mapping/restricted-fields.js';
import { ruleOf, type ListingChange } from '../sync/index.js';

type Write = Extract<ListingChange, { op: 'create' | 'update' | 'delete' }>;

/** What undo may write back of a key's listing before the run. */
export type ShownNow = { hidden: string } | { listing: ListingCreate; withheld?: readonly WithheldField[] };

export interface DisplayNow {
  /** each key's last write so far, in the order they were made (the undone run's, then later runs') */
  note(change: ListingChange): void;
  /** the listing before the run as it may be shown now, or why it is not shown at all */
  shown(key: string, before: ListingCreate): ShownNow;
}

export function displayNow(rules: Pick<DisplayRules, 'purpose' | 'withhold'>): DisplayNow {
  const last = new Map<string, Write>();
  const restricted = restrictedOf(rules);
  return {
    note(c) {
      // (a delete the guard held back deleted nothing: it says nothing of the key)
      if ((c.op === 'create' || c.op === 'update' || c.op === 'delete') && !(c.op === 'delete' && c.withheld))
        last.set(c.key, c);
    },
    shown(key, before) {
      const w = last.get(key);
      const rule = w?.op === 'delete' ? ruleOf(w.reason) : undefined;
      if (rule) return { hidden: `a later run removed it by display rule ${rule}` };
      const withheld = rules.purpose !== 'internal' && w && w.op !== 'delete' ? withheldFields(w.withheldFields) : [];
      const listing: ListingCreate = { ...before };
      for (const f of withheld) delete listing[f];
      const extension = before.ExtensionColumn?.filter((e) => !restricted.has(e.Key.trim().toLowerCase()));
      if (extension && extension.length !== before.ExtensionColumn?.length) listing.ExtensionColumn = extension;
      return { listing, ...(withheld.length && { withheld }) };
    },
  };
}

/** The fields a change names withheld that the rules may withhold (a change log from another version may name others). */
function withheldFields(names: readonly string[] | undefined): WithheldField[] {
  return ADDRESS_FIELDS.filter((f) => names?.includes(f));
}
