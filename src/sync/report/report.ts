// The report of one feed sync: plain JSON, the job's return value, the CLI's --json output and
// what report-format.ts prints for people.
import type { InvalidText } from '../../mapping/invalid-text.js';
import type { CallCounts } from '../../api/call-counter.js';
import type { SourceSections } from '../../feeds/types.js';
import type { EndpointName } from '../../api/schemas.js';
import type { ItemFailure } from '../model/execution.js';
import type { GuardDecision, PlanView, SyncOutcome } from '../model/outcome.js';
import type { MediaReport } from '../../media/report.js';
import type { DeleteReason, FeedDuplicate, RejectedRecord } from '../model/plan-types.js';
import { HIDE_RULES, type HideRule, type Purpose } from '../../mapping/display-config.js';
import { ruleLabel } from '../../mapping/display-rules.js';

export type { PlanView, SyncOutcome } from '../model/outcome.js';

export interface SyncCounts {
  feedRecords: number;
  valid: number;
  rejected: number;
  skipped: number;
  removed: number;
  feedDuplicates: number;
  remote: number;
  created: number;
  updated: number;
  deleted: number;
  unchanged: number;
  /** of the unchanged: records whose stamp showed them in step, so they were not mapped (record-stamp.ts) */
  unchangedByStamp: number;
  /** of those: records taken while the chatbot was still being paged (the feed read beside the paging: read-feed.ts); set when not 0 */
  besidePaging?: number;
  /**
   * of those: listings the lane's seal showed in step (settle/seal.ts): the feed's file, config and
   * stored state and the chatbot's listings were as the last run left them, so no record was read;
   * set when not 0
   */
  unchangedBySeal?: number;
  duplicatesRemoved: number;
  failed: number;
  /** remote listings kept as they are because their feed record was rejected */
  protected: number;
  /** remote listings absent from this feed that another feed of the chatbot wrote: left alone */
  otherFeeds: number;
  /** absent listings waiting out deletes.graceHours */
  waitingGrace: number;
  /** a routed feed (feeds[].chatbots): records whose fields matched no chatbot's where (not rejected) */
  routedNowhere?: number;
  /**
   * The rest of `valid = created + updated + unchanged + unwritten + unplanned − rewritten −
   * writtenThenGone` (validCounts checks it): writes planned but not made (failed, or the writes
   * stopped); valid listings never planned (the run stopped first); second writes of one key (a
   * record of it came again after the first was planned); keys written before a later record of
   * theirs took the listing away (deleted, off-market or removed, in the same run). Set when not 0.
   */
  unwritten?: number;
  unplanned?: number;
  rewritten?: number;
  writtenThenGone?: number;
}

/** What `valid` should be, from the write counts and the others (SyncCounts): every report's valid equals it. */
export function validFromWrites(c: SyncCounts): number {
  return (
    c.created +
    c.updated +
    c.unchanged +
    (c.unwritten ?? 0) +
    (c.unplanned ?? 0) -
    (c.rewritten ?? 0) -
    (c.writtenThenGone ?? 0)
  );
}

export interface DisplaySummary {
  purpose: Purpose;
  soldDays: number;
  hidden: Partial<Record<HideRule, number>>;
  addressWithheld: number;
  held: number;
}

/** "not shown: InternetEntireListingDisplayYN false × 12, sold past 30 days × 4; address withheld × 30" (empty when nothing) */
export function displayLine(
  d: Pick<DisplaySummary, 'hidden' | 'addressWithheld' | 'held'> & { soldDays?: number },
): string {
  const hidden = Object.entries(d.hidden).flatMap(([rule, n]) => {
    const r = HIDE_RULES.find((x) => x === rule);
    if (!r || !n) return [];
    return [
      `${r === 'sold-window' && d.soldDays === 0 ? 'sold (display.soldDays 0)' : ruleLabel(r, d.soldDays)} × ${n}`,
    ];
  });
  const parts = [
    ...(hidden.length ? [`not shown: ${hidden.join(', ')}`] : []),
    ...(d.addressWithheld ? [`address withheld × ${d.addressWithheld}`] : []),
    ...(d.held ? [`held back without their attribution × ${d.held}`] : []),
  ];
  return parts.join('; ');
}

/** The display counts as flat run counts (the change log's RunEntry.counts, the status page): `notShown:<rule>`, `addressWithheld`, `heldBack`; none when all are 0. */
export function displayCounts(d: DisplaySummary): Record<string, number> {
  const out: Record<string, number> = {};
  for (const [rule, n] of Object.entries(d.hidden)) if (n) out[`notShown:${rule}`] = n;
  if (d.addressWithheld) out.addressWithheld = d.addressWithheld;
  if (d.held) out.heldBack = d.held;
  return out;
}

/** The display counts of a run entry (displayCounts) read back, for a person: "not shown: InternetEntireListingDisplayYN false × 3; address withheld × 1". */
export function displayCountsLine(counts: Readonly<Record<string, number | undefined>>): string {
  const hidden: DisplaySummary['hidden'] = {};
  for (const r of HIDE_RULES) if (counts[`notShown:${r}`]) hidden[r] = counts[`notShown:${r}`];
  return displayLine({ hidden, addressWithheld: counts.addressWithheld ?? 0, held: counts.heldBack ?? 0 });
}

/**
 * How the feed was read. `since`: an incremental pull asked only for what changed after this time.
 * `pages`, `requests`, `bytes`: what reading a remote source took (RESO): `requests` every request
 * sent to it for this run (each retry and redirect hop; the confirmation's, the proof's too),
 * `requestsBy` the same by what they were for, `tokenCalls` the OAuth2 token endpoint's calls apart;
 * `warnings`: what it did differently from the config. Beside them, each section the source filled
 * (feeds/types.ts SourceSections: a RESO feed's `events`, `reconcile`), its fields under its name.
 */
export type SourceReport = SourceRead & Partial<SourceSections>;

export interface SourceRead {
  /** how the feed was read: everything, what changed (a pull or a change log), or a keys-only reconcile */
  mode: 'full' | 'incremental' | 'reconcile';
  since?: string;
  complete: boolean;
  error?: string;
  /** the HTTP status the feed server answered with, when that stopped the read */
  status?: number;
  pages?: number;
  requests?: number;
  /** pages, byKey (confirmation, reconcile and EntityEvent fetches), keys (keys-only reads), proof, metadata, events (the EntityEvent log), a related resource's name: kinds sent only */
  requestsBy?: Partial<Record<string, number>>;
  tokenCalls?: number;
  /** bytes of the source's answers (after gunzip) */
  bytes?: number;
  /** the sections the source filled, in its order, as the text report prints them (their fields: under their names) */
  sections?: SectionText[];
  warnings?: string[];
}

/** What the text report prints of a source's section (feeds/types.ts SourceSection). */
export interface SectionText {
  name: string;
  lines: string[];
  /** the section says which records were read (pushed events): the text report says nothing of an incremental pull */
  tellsTheRead?: true;
}

export interface SyncReport {
  feed: string;
  chatbot: string;
  outcome: SyncOutcome;
  /** a rerun (a job retry) may succeed where this run did not */
  retryable: boolean;
  /** ISO time before which a rerun cannot succeed: the feed source's request budget resets then */
  retryAt?: string;
  dryRun: boolean;
  /** what went wrong as a whole, for a person: guard message, service down, feed unreadable */
  message?: string;
  counts: SyncCounts;
  /** counts.deleted (duplicates aside) by why they went: absent from a full pull, off-market, removed by the source, moved; a dry run: would go */
  deletedByReason?: Partial<Record<DeleteReason, number>>;
  /**
   * the calls this lane made: its writes, the read-backs before them (undo), and its chatbot's
   * paging when it is the first lane of that chatbot in the run (the others name that lane:
   * remote.pagingCountedIn), so the lanes' reports add up to the run's calls
   */
  calls: { byEndpoint: Record<EndpointName, number>; total: number };
  retries: number;
  failures: ItemFailure[];
  /** the first rejected records; `omitted.rejected` counts the rest (the change log has each) */
  rejected: RejectedRecord[];
  /** how many items of a list were left out (a stored or printed report is bounded: queue/report-size.ts adds to it) */
  omitted?: Record<string, number>;
  feedDuplicates: FeedDuplicate[];
  /**
   * what the feed's display rules did (docs/display-rules.md): records each rule kept off the chatbot
   * (removed from it when it held them: deletedByReason `rule:<name>`), listings shown with their
   * address withheld and records held back for want of their attribution (these two of the records
   * mapped this run: one in step by its stamp is not mapped again). Set for an idx or vow feed, or
   * when a count is not 0.
   */
  display?: DisplaySummary;
  /** lookup values that no `map` of the mapping covers (they passed through as they were), most seen first */
  unmapped: Array<{ field: string; value: string; count: number }>;
  /** values that broke a rule with `onInvalid: default` and were replaced by its default, per listing field, most first */
  valuesReplaced?: Array<{ field: string; count: number }>;
  /** mapped listings holding U+FFFD (bytes not valid in the encoding the feed was read with): how many, the first one's place and field (mapping/invalid-text.ts) */
  invalidText?: InvalidText & { encoding: string };
  /** `ruleChange`: the display rules changed since the lane's last run applied them, and what their removals took (docs/display-rules.md) */
  guard: {
    outcome: GuardDecision['outcome'];
    reasons: string[];
    message?: string;
    withheld: number;
    waiting: number;
    ruleChange?: GuardDecision['ruleChange'];
  };
  source: SourceReport;
  /** `recalled`: listings whose rows came from the last paging's memory: this process's, or its echo file (page-echo.ts) */
  /** `pagingCountedIn`: the lane whose report counts the calls of this chatbot's paging, shared with it (not this one) */
  remote: {
    complete: boolean;
    pages: number;
    rounds: number;
    virtualCount: number;
    problem?: string;
    recalled?: number;
    pagingCountedIn?: string;
  };
  plan?: PlanView;
  /** the media mirror (media.mirror): photos downloaded, reused, failed, objects deleted */
  media?: MediaReport;
  stateLocation: string;
  /** when the remote side was paged, the feed read (and its writes sent), the deletes planned and sent (ms from the start) */
  timings: { remoteMs: number; feedMs: number; planMs: number; executeMs: number };
  durationMs: number;
  summary: string;
  startedAt: string;
  finishedAt: string;
}

export function callsBetween(
  before: CallCounts | undefined,
  after: CallCounts | undefined,
): { calls: SyncReport['calls']; retries: number } {
  const byEndpoint = { edit: 0, ask: 0, create: 0, update: 0, list: 0, delete: 0 } as Record<EndpointName, number>;
  if (!after) return { calls: { byEndpoint, total: 0 }, retries: 0 };
  for (const k of Object.keys(byEndpoint) as EndpointName[])
    byEndpoint[k] = after.byEndpoint[k] - (before?.byEndpoint[k] ?? 0);
  return {
    calls: { byEndpoint, total: after.total - (before?.total ?? 0) },
    retries: after.retries - (before?.retries ?? 0),
  };
}

export function summaryLine(r: Omit<SyncReport, 'summary'>, attempt?: { made: number; max: number }): string {
  const c = r.counts;
  const m = r.media;
  const photos = !m
    ? ''
    : m.dry
      ? `; photos: would download ${m.dry.download}, delete ${m.dry.delete}`
      : `; photos: ${m.downloaded} downloaded, ${m.reused} reused, ${m.failed} failed${m.storageError ? ' (storage could not be used)' : ''}`;
  const tail = `in ${r.durationMs} ms${attempt ? ` (attempt ${attempt.made}/${attempt.max})` : ''}`;
  if (r.dryRun) {
    // a plan whose run would not end ok says so before its counts: read alone, they look like a run that would succeed
    const end = r.outcome === 'ok' ? '' : ` (a real run would end "${outcomeHeadline(r.outcome, r.feed, r.chatbot)}")`;
    return `dry run ${r.feed} → ${r.chatbot}${end}: would create ${c.created}, update ${c.updated}, delete ${c.deleted + c.duplicatesRemoved}; ${c.unchanged} unchanged, ${c.rejected} rejected${photos}; nothing written ${tail}`;
  }
  const dup = c.duplicatesRemoved ? `, ${c.duplicatesRemoved} duplicates removed` : '';
  const headline = outcomeHeadline(r.outcome, r.feed, r.chatbot);
  const why = r.outcome === 'partial' ? ` (${partialWhy(r)})` : '';
  // (a run its seal stood for says so where `runs` and the alerts show it: its counts were not read from the feed)
  const sealed = c.unchangedBySeal ? `; feed not read (sealed: as the last run left it)` : '';
  return `${headline}${why}: ${c.created} created, ${c.updated} updated, ${c.deleted} deleted${dup}, ${c.failed} failed${photos}${sealed} ${tail}`;
}

/**
 * Why a run synced only in part (lane-report.ts laneOutcome): a feed not read whole, writes that
 * failed, or else absences the source could not confirm; each withholds the deletes.
 */
function partialWhy(r: Pick<SyncReport, 'source' | 'counts'>): string {
  const why = [
    ...(r.source.complete ? [] : ['the feed was not read whole']),
    ...(r.counts.failed > 0 ? ['some writes failed'] : []),
  ];
  return why.length ? why.join('; ') : 'deletes withheld';
}

/**
 * The first words of a run's summary line (the log's, the alert's, `runs`'): what the run came to.
 * Only a run that synced says "synced"; the one place the verb is chosen from the outcome.
 */
export function outcomeHeadline(outcome: SyncOutcome, feed: string, chatbot: string): string {
  const pair = `${feed} → ${chatbot}`;
  switch (outcome) {
    case 'ok':
      return `synced ${pair}`;
    case 'partial':
      return `synced ${pair} in part`;
    case 'guard':
      return `synced ${pair}, deletes held by the delete guard`;
    case 'rejected':
      return `rejected: ${pair} not synced, the feed cannot be used`;
    case 'unavailable':
      // (which one, the chatbot API or Redis, its report's message says)
      return `sync of ${pair} broke off: a service it needs was unavailable`;
    case 'aborted':
    case 'cancelled':
    case 'failed':
      return `sync of ${pair} ${outcome}`;
    case 'taken-over':
      return `sync of ${pair} taken over by another attempt of its job (its job lock or a chatbot lock was lost)`;
    case 'handed-back':
      return `sync of ${pair} handed back to the queue (its worker shut down; another worker runs it)`;
  }
}

/**
 * The report of a feed whose run could not start or broke off with an error the sync does not
 * know (a lock held elsewhere, a bug): outcome `failed`, nothing counted. The other feeds go on.
 * A dry run's caller marks it so (run/write-side.ts: the recording side's).
 */
export function failedReport(r: {
  feed: string;
  chatbot: string;
  message: string;
  stateLocation: string;
  retryable?: boolean;
}): SyncReport {
  const now = new Date().toISOString();
  const zero = {
    feedRecords: 0,
    valid: 0,
    rejected: 0,
    skipped: 0,
    removed: 0,
    feedDuplicates: 0,
    remote: 0,
    created: 0,
    updated: 0,
    deleted: 0,
    unchanged: 0,
    unchangedByStamp: 0,
    duplicatesRemoved: 0,
    failed: 0,
    protected: 0,
    otherFeeds: 0,
    waitingGrace: 0,
  };
  const { calls } = callsBetween(undefined, undefined);
  return {
    feed: r.feed,
    chatbot: r.chatbot,
    outcome: 'failed',
    retryable: Boolean(r.retryable),
    dryRun: false,
    message: r.message,
    counts: zero,
    calls,
    retries: 0,
    failures: [],
    rejected: [],
    feedDuplicates: [],
    unmapped: [],
    guard: { outcome: 'none', reasons: [], withheld: 0, waiting: 0 },
    source: { mode: 'full', complete: false, error: r.message },
    remote: { complete: false, pages: 0, rounds: 0, virtualCount: 0 },
    stateLocation: r.stateLocation,
    timings: { remoteMs: 0, feedMs: 0, planMs: 0, executeMs: 0 },
    durationMs: 0,
    summary: `${outcomeHeadline('failed', r.feed, r.chatbot)}: ${r.message}`,
    startedAt: now,
    finishedAt: now,
  };
}
