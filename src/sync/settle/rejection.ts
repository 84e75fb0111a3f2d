// Whether a lane's run achieved what it set out to (docs/contracts.md, exit status 6): a read that
// yielded records but no valid one, or (a full read) whose rejected records brought its valid ones
// below feeds[].minValidFraction of the lane's last good full run, is rejected, as is a source whose answer is not the feed at all
// (FeedReadError.refused: a CSV header without a mapped column, an HTML page). A feed that only
// shrank (few records, none rejected) is the delete guard's to judge, not this. A rejected run
// deletes nothing by absence (guards.ts holds every such delete, --force or not; a record's own
// display rule still removes its listing, as after any read), keeps its mark, and does not
// count as a good sync (last_success, "last good sync", the next run's reference stay). Pure.
import type { RejectedRecord } from '../model/plan-types.js';

export interface RejectionInput {
  counts: { records: number; valid: number; rejected: number };
  mode: 'full' | 'incremental';
  /** the read was whole: one that was not says nothing about how many records are valid */
  complete: boolean;
  /** the source's answer is not the feed (FeedSide.refused) */
  refused?: string;
  /** the first rejected records (FeedSide.rejected): the message names their commonest reasons */
  rejectedRecords: readonly RejectedRecord[];
  /** valid records of the lane's last full run that ended ok */
  lastGoodValid?: number;
  minValidFraction: number;
  /** --force accepts a run that only fell below minValidFraction (a feed that really shrank) */
  force: boolean;
}

const SHOWN_REASONS = 3;

/** Why the run is rejected, said first in its report and its alert; undefined when it is not. */
export function rejectionOf(r: RejectionInput): string | undefined {
  if (r.refused) return r.refused;
  const { records, valid, rejected } = r.counts;
  if (records === 0) return undefined;
  // judged whole or not: a record rejected without its key makes the read not whole, and every record
  // rejected so (a mapping that is not the feed's: no key read) is the mapping's fault, not a partial read
  if (valid === 0 && rejected > 0)
    return `none of the feed's ${records} record(s) is valid: ${commonReasons(r.rejectedRecords, rejected)}`;
  if (!r.complete) return undefined;
  const good = r.lastGoodValid;
  const floor = r.minValidFraction * (good ?? 0);
  // the rejections are why the valid records fell short: without them the run would have passed
  if (
    r.mode !== 'full' ||
    r.force ||
    !good ||
    r.minValidFraction === 0 ||
    valid >= floor ||
    rejected === 0 ||
    valid + rejected < floor
  )
    return undefined;
  return `only ${valid} of the feed's ${records} record(s) are valid, fewer than feeds[].minValidFraction ${r.minValidFraction} of the ${good} of the last good full run; ${rejected} rejected: ${commonReasons(r.rejectedRecords, rejected)} (--force accepts the run)`;
}

/** "Bedrooms is missing × 49 (first: feeds/austin.csv:2), ..." over the records kept. */
function commonReasons(kept: readonly RejectedRecord[], total: number): string {
  const tally = new Map<string, { n: number; first: RejectedRecord }>();
  for (const rec of kept) {
    for (const reason of rec.reasons) {
      const t = tally.get(reason);
      if (t) t.n++;
      else tally.set(reason, { n: 1, first: rec });
    }
  }
  const top = [...tally].sort((a, b) => b[1].n - a[1].n).slice(0, SHOWN_REASONS);
  if (!top.length) return `${total} rejected`;
  const where = (rec: RejectedRecord) =>
    rec.position.line !== undefined
      ? `${rec.position.file}:${rec.position.line}`
      : `${rec.position.file}, record ${rec.position.index}`;
  const of = kept.length < total ? ` (of the first ${kept.length} rejected)` : '';
  return (
    top.map(([reason, t]) => `${reason} × ${t.n} (first: ${where(t.first)})`).join('; ') +
    (tally.size > top.length ? `; and ${tally.size - top.length} other reason(s)` : '') +
    of
  );
}
