// A field's change as a person reads it, old → new, on one line. A long value is cut to an excerpt,
// and when both sides are long the excerpts start just before the first character that differs:
// a description whose last sentence changed would otherwise show the same first 60 characters twice.

/** Longest rendering of one side before it is cut. */
const MAX_CHARS = 60;
/** Characters of common text kept before the first difference, for context. */
const CONTEXT = 20;

/** A value as it is shown: text and other JSON values quoted as JSON, unset as "(unset)". */
function renderValue(v: unknown): string {
  if (v === undefined || v === '') return '(unset)';
  return JSON.stringify(v) ?? String(v);
}

/**
 * `old → new`, each side at most about 60 characters, cut around where they differ. `oldNotKept`:
 * the old value was long and not kept; 'withheld': the display rules withhold it (an address the
 * seller does not allow shown), so it is never printed; `newWithheld` the same of the new value.
 */
export function describeFieldChange(
  old: unknown,
  now: unknown,
  oldNotKept: boolean | 'withheld' = false,
  newWithheld = false,
): string {
  const after = newWithheld ? '(withheld)' : renderValue(now);
  if (oldNotKept === 'withheld') return `(withheld) → ${excerpt(after, 0)}`;
  if (oldNotKept) return `(long value, not kept) → ${excerpt(after, 0)}`;
  const before = renderValue(old);
  if (before.length <= MAX_CHARS && after.length <= MAX_CHARS) return `${before} → ${after}`;
  const from = Math.max(0, firstDifference(before, after) - CONTEXT);
  return `${excerpt(before, from)} → ${excerpt(after, from)}`;
}

/** What describing a field's change reads of it: a FieldChange (listing/canonical.ts), or a report's copy of one. */
export interface ChangeView {
  field: string;
  old: unknown;
  new: unknown;
  oldNotKept?: true;
  oldWithheld?: true;
  newWithheld?: true;
}

/** `field old → new` (describeFieldChange), its withheld and not-kept sides said as such. */
export function describeChange(c: ChangeView): string {
  return `${c.field} ${describeFieldChange(c.old, c.new, c.oldWithheld ? 'withheld' : c.oldNotKept, c.newWithheld)}`;
}

function firstDifference(a: string, b: string): number {
  let i = 0;
  while (i < a.length && i < b.length && a.charCodeAt(i) === b.charCodeAt(i)) i++;
  return i;
}

/** `s` from `from`, at most MAX_CHARS long with its marks: "…" where text was left out. */
function excerpt(s: string, from: number): string {
  if (from === 0 && s.length <= MAX_CHARS) return s;
  const start = Math.min(from, Math.max(0, s.length - (MAX_CHARS - 1)));
  const head = start > 0 ? '…' : '';
  // the rest fits whole: no closing mark (a lone quote cut for a "…" would say nothing)
  if (s.length - start <= MAX_CHARS - head.length) return `${head}${s.slice(start)}`;
  return `${head}${s.slice(start, start + MAX_CHARS - head.length - 1)}…`;
}
