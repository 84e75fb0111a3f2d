// The sync report for people (stderr): counts, calls, failures, rejected records (the first few;
// --json keeps all), the guard, and for a dry run what would change per listing, old → new.
import { describeChange } from '../../format/change.js';
import { formatPosition } from '../../feeds/position.js';
import { table } from '../../format/table.js';
import { formatMediaReport } from '../../media/report.js';
import { displayLine } from './report.js';
import type { SourceView, SyncReportView } from './report-view.js';
import { invalidTextWarning } from '../../mapping/invalid-text.js';
import { refusalWords } from '../util/auth.js';

const SHOWN = 20;

export function formatSyncReport(r: SyncReportView): string {
  // a run that did not end ok says why on its first line, once: what is wrong with the feed
  // (sync/settle/rejection.ts), the credential to fix, what the guard held back
  // and whether running it again may help, as an error the CLI prints does (cli/exit.ts)
  const transient = r.outcome !== 'ok' && r.retryable ? ' (transient: a rerun may succeed)' : '';
  const why = r.outcome !== 'ok' && r.message ? ` — ${r.message}${transient}` : transient;
  const lines: string[] = [
    `${wordsOf(r).head}feed ${r.feed} → chatbot ${r.chatbot}: ${r.outcome}${why}`,
    ...countsTable(r),
    ...tallyLines(r),
    ...sourceLines(r.source),
    ...stateLines(r, why !== ''),
  ];
  failureLines(lines, r.failures);
  listLines(lines, r);
  if (r.plan) planLines(lines, r.plan, r.guard);
  lines.push(`  state: ${r.stateLocation}`);
  lines.push(r.summary);
  return lines.join('\n') + '\n';
}

/** A dry run's words: its first line says nothing was written, its counts before their verb what would be. */
const wordsOf = (r: SyncReportView): { head: string; wouldBe: string } =>
  r.dryRun ? { head: 'DRY RUN — nothing written. ', wouldBe: 'would be ' } : { head: '', wouldBe: '' };

/** The feed's side and the chatbot's side of the counts, side by side. */
function countsTable(r: SyncReportView): string[] {
  const c = r.counts;
  const verb = wordsOf(r).wouldBe;
  return table(
    ['feed', '', 'chatbot', ''],
    [
      ['records', String(c.feedRecords), 'remote listings', String(c.remote)],
      ['valid', String(c.valid), `${verb}created`, String(c.created)],
      ['rejected', String(c.rejected), `${verb}updated`, String(c.updated)],
      ['skipped', String(c.skipped), `${verb}deleted`, String(c.deleted)],
      ['removed', String(c.removed), `duplicates ${verb}removed`, String(c.duplicatesRemoved)],
      ['keys twice in feed', String(c.feedDuplicates), 'unchanged', String(c.unchanged)],
      ['kept (rejected)', String(c.protected), 'failed', String(c.failed)],
      ['waiting grace period', String(c.waitingGrace), "other feeds' listings", String(c.otherFeeds)],
    ],
  ).map((l) => `  ${l}`);
}

/** The deletes by reason, the rest of `valid`, and the API calls. */
function tallyLines(r: SyncReportView): string[] {
  const c = r.counts;
  const lines: string[] = [];
  const byReason = Object.entries(r.deletedByReason ?? {}).map(([k, n]) => `${k} ${n}`);
  if (byReason.length) lines.push(`  ${wordsOf(r).wouldBe}deleted by reason: ${byReason.join(', ')}`);
  const others = (
    [
      ['unwritten', c.unwritten],
      ['unplanned', c.unplanned],
      ['rewritten', c.rewritten],
      ['written then gone', c.writtenThenGone],
    ] as const
  ).filter(([, n]) => n);
  if (others.length)
    lines.push(
      `  valid ${c.valid} = created + updated + unchanged, with ${others.map(([k, n]) => `${k} ${n}`).join(', ')}`,
    );
  const calls = Object.entries(r.calls.byEndpoint)
    .filter(([, n]) => n > 0)
    .map(([k, n]) => `${k} ${n}`)
    .join(', ');
  const paging = r.remote.pagingCountedIn
    ? `; the chatbot's paging (shared) is counted in ${r.remote.pagingCountedIn}'s`
    : '';
  lines.push(`  API calls: ${r.calls.total}${calls ? ` (${calls})` : ''}, retries ${r.retries}${paging}`);
  return lines;
}

/** What the display rules did, values replaced, text in another encoding, what was not read whole, the guard overridden, the message, the photos. */
function stateLines(r: SyncReportView, saidFirst: boolean): string[] {
  const lines: string[] = [];
  const shown = r.display && displayLine(r.display);
  if (r.display) lines.push(`  display rules (${r.display.purpose}): ${shown || 'every listing shown as it is'}`);
  if (r.valuesReplaced?.length)
    lines.push(`  values replaced: ${r.valuesReplaced.map((v) => `${v.field} × ${v.count}`).join(', ')}`);
  if (r.invalidText) lines.push(`  warning: ${invalidTextWarning(r.invalidText, r.invalidText.encoding)}`);
  // the message says it already when the read is why nothing was deleted (or why the run failed: a refused credential)
  if (!r.source.complete && !saysTheRead(r.message, r.source))
    lines.push(`  feed not read whole: ${r.source.error ?? 'unknown error'}`);
  if (!r.remote.complete) lines.push(`  remote listings not all paged: ${r.remote.problem ?? 'unknown'}`);
  if (r.guard.outcome === 'forced') lines.push(`  guard overridden by --force: ${r.guard.reasons.join('; ')}`);
  if (r.message && !saidFirst) lines.push(`  ${r.message}`);
  if (r.media) lines.push(...formatMediaReport(r.media));
  return lines;
}

/** The message holds the read's error: whole, or the source's words of a refused credential (util/auth.ts). */
function saysTheRead(message: string | undefined, source: SourceView): boolean {
  const readError = source.error ?? 'unknown error';
  if (!message) return false;
  return message.includes(source.status === undefined ? readError : refusalWords(readError, source.status));
}

/** The rejected records, the lookup values no map covers, the keys twice in the feed. */
function listLines(lines: string[], r: SyncReportView): void {
  section(
    lines,
    'rejected records',
    r.rejected,
    (x) => {
      const where = place(x.position);
      // a RESO record's place names its ListingId already
      return `${where}${x.key && !where.includes(x.key) ? ` (${x.key})` : ''}: ${x.reasons.join('; ')}`;
    },
    Math.max(r.counts.rejected, r.rejected.length),
  );
  section(
    lines,
    'lookup values no map covers (passed through as they are)',
    r.unmapped ?? [],
    (u) => `${u.field}: ${JSON.stringify(u.value)} × ${u.count}`,
  );
  section(
    lines,
    'keys twice in the feed (the later record wins)',
    r.feedDuplicates,
    (d) => `${d.key} again at ${place(d.position)}`,
  );
}

/** A dry run: what would be created, updated (old → new) and deleted. */
function planLines(lines: string[], plan: NonNullable<SyncReportView['plan']>, guard: SyncReportView['guard']): void {
  section(lines, 'would create', plan.creates, (k) => `+ ${k}`);
  section(lines, 'would update', plan.updates, (u) =>
    u.reason === 'unlisted'
      ? `~ ${u.key}: a field the list does not return (Location, AreaUnit, …) changed since the last write`
      : `~ ${u.key}: ${u.changes.map(describeChange).join('; ')}`,
  );
  const held = guard.outcome === 'tripped' ? ' (held back by the guard)' : '';
  section(lines, `would delete${held}`, plan.deletes, (d) =>
    d.reason === 'duplicate' ? `- ${d.key} duplicate copy, ID ${d.deleteKey}` : `- ${d.key} (${d.reason})`,
  );
}

/** How the feed was read: the pull, each section its source filled (a change feed, a reconcile), what it cost, what the source did differently. */
function sourceLines(source: SourceView): string[] {
  const lines: string[] = [];
  const sections = source.sections ?? [];
  if (source.mode === 'incremental' && !sections.some((s) => s.tellsTheRead))
    lines.push(`  incremental pull: only what changed since ${source.since ?? 'the last successful sync'}`);
  for (const s of sections) for (const l of s.lines) lines.push(`  ${l}`);
  if (source.requests !== undefined)
    lines.push(
      `  source: ${firstRefused(source) ?? `${source.pages ?? 0} pages, ${requestsLine(source)}${source.bytes !== undefined ? `, ${source.bytes} bytes` : ''}`}`,
    );
  for (const w of source.warnings ?? []) lines.push(`  source warning: ${w}`);
  return lines;
}

/** A read the server stopped at its first request, in words: there are no paging counts to give ("0 pages, 1 requests (1 pages)"). */
function firstRefused(source: SourceView): string | undefined {
  if (source.complete || source.pages || source.requests !== 1 || source.status === undefined) return undefined;
  const how = source.status === 401 || source.status === 403 ? 'refused' : 'answered with an error';
  return `the first request was ${how} (HTTP ${source.status}); nothing read`;
}

/** What each kind of source request is called in the text report. */
const REQUEST_KINDS: Record<string, string> = {
  pages: 'pages',
  proof: 'proof',
  metadata: '$metadata',
  byKey: 'by key',
  keys: 'keys-only',
  events: 'EntityEvent log',
};

/**
 * "16 requests (3 pages, 1 $metadata, 12 by key), 1 token call": every request made for the feed, by
 * what for; token calls apart. A kind not named above (a related resource's pages: its resource's
 * name) comes after them, by name.
 */
export function requestsLine(source: Pick<SourceView, 'requests' | 'requestsBy' | 'tokenCalls'>): string {
  const order = Object.keys(REQUEST_KINDS);
  const rank = (kind: string) => (order.includes(kind) ? order.indexOf(kind) : order.length);
  const by = Object.entries(source.requestsBy ?? {})
    .filter((e): e is [string, number] => Boolean(e[1]))
    .sort((a, b) => rank(a[0]) - rank(b[0]) || (rank(a[0]) === order.length ? a[0].localeCompare(b[0], 'en') : 0));
  const parts = by.map(([kind, n]) => `${n} ${REQUEST_KINDS[kind] ?? kind}`);
  const tokens = source.tokenCalls ? `, ${source.tokenCalls} token call${source.tokenCalls === 1 ? '' : 's'}` : '';
  return `${source.requests ?? 0} requests${parts.length ? ` (${parts.join(', ')})` : ''}${tokens}`;
}

/** `total`: how many there were, when `items` holds the first of them only (rejected records) */
function section<T>(
  lines: string[],
  title: string,
  items: readonly T[],
  line: (item: T) => string,
  total = items.length,
): void {
  if (!items.length) return;
  lines.push(`  ${title} (${total}):`);
  for (const item of items.slice(0, SHOWN)) lines.push(`    ${line(item)}`);
  if (total > SHOWN)
    lines.push(
      `    … ${total - SHOWN} more (${total > items.length ? 'the change log has each: feedsync history' : '--json lists all'})`,
    );
}

const place = formatPosition;

/** Keys of a group shown before "and N more". */
const KEYS_SHOWN = 5;

/**
 * Failures of one reason together, in the order first seen: eight writes a refused credential
 * stopped are one line naming their keys, not eight lines of one error.
 */
function failureLines(lines: string[], failures: SyncReportView['failures']): void {
  const groups = failureGroups(failures);
  if (!groups.length) return;
  lines.push(`  failures (${failures.length}):`);
  for (const g of groups.slice(0, SHOWN)) lines.push(`    ${g.items}: ${g.reason}`);
  if (groups.length > SHOWN) lines.push(`    … ${groups.length - SHOWN} more reasons (--json lists all)`);
}

function failureGroups(failures: SyncReportView['failures']): Array<{ items: string; reason: string }> {
  const groups = new Map<string, string[]>();
  for (const f of failures) {
    const reason = `${f.reason}${f.retryable ? ' (transient)' : ''}`;
    const group = groups.get(reason) ?? groups.set(reason, []).get(reason)!;
    group.push(`${f.op} ${f.key}`);
  }
  return [...groups].map(([reason, items]) => ({
    reason,
    items:
      items.length <= KEYS_SHOWN
        ? items.join(', ')
        : `${items.slice(0, KEYS_SHOWN).join(', ')} and ${items.length - KEYS_SHOWN} more`,
  }));
}
