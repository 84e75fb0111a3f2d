// A stored mark a RESO read cannot use is said, never passed over: the feed's high-water mark, the
// roster's marks inside it, the open houses' mark, a listing's kept open houses. Each reader that
// finds one warns once, in one form — which mark, which feed, what was wrong, and the whole pull
// that follows — in its log and in the read's warnings (SourceReadStats.warnings: the run's report).
import { causeMessage } from '../../errors.js';
import type { FeedContext } from '../types.js';

export interface UnusableMark {
  /** which mark, as a person names it: "RESO high-water mark", "roster marks (related)" */
  which: string;
  /** what was wrong with it: an error, or words */
  why: unknown;
  /** the whole pull that follows instead: "every record is pulled (a full pull)" */
  instead: string;
}

/** The warning of a stored mark that cannot be used, logged and added to `warnings` (the read's, when it has them). */
export function warnUnusableMark(
  ctx: Pick<FeedContext, 'logger'>,
  feed: string,
  warnings: string[] | undefined,
  mark: UnusableMark,
): string {
  const why = typeof mark.why === 'string' ? mark.why : causeMessage(mark.why);
  const warning = `feed ${feed}: the stored ${mark.which} cannot be used (${why}): ${mark.instead}; the mark this run reaches is stored in its place`;
  warnings?.push(warning);
  ctx.logger.warn({ feed, mark: mark.which }, warning);
  return warning;
}
