// `feedsync feed preview --feed F --key K`: the story of one listing, step by step — the source
// record as read, the listing the mapping makes of it (or why it is rejected or skipped), what the
// chatbot holds for that key now, and what a sync would therefore do. Reads the feed whole (no
// mark handed in; readers never write state) and pages the chatbot's listings; writes nothing.
// The source record is printed without its restricted fields, and, when its address is withheld,
// without the fields its street and pin come from, nor those in what the chatbot holds
// (mapping/withheld-values.ts); each one left out is named. --show-restricted prints them.
import { describeFieldChange } from '../format/change.js';
import { loadConfig } from '../config/load.js';
import { selectFeeds } from '../config/select.js';
import type { FeedConfig } from '../config/schema.js';
import { formatIssue } from '../errors.js';
import { formatPosition } from '../feeds/position.js';
import { openFeed, type FeedItem } from '../feeds/index.js';
import {
  ALL_FIELDS,
  canonicalFromListing,
  canonicalFromListItem,
  diffCanonical,
  type FieldChange,
} from '../listing/canonical.js';
import type { ListItem } from '../listing/schema.js';
import { compileMapping, type MappedItem } from '../mapping/index.js';
import type { HideRule } from '../mapping/display-config.js';
import { ADDRESS_FIELDS } from '../mapping/display-rules.js';
import { ADDRESS_WITHHELD, recordShown, type LeftOut } from '../mapping/withheld-values.js';
import { mapItem } from '../mapping/map-feed.js';
import type { Logger } from '../log.js';
import { remoteKey, remotePages } from '../sync/index.js';
import { EXIT, printJson } from './exit.js';
import { withRuntime } from './with-runtime.js';
import { chatbotsOf } from '../config/feed-chatbots.js';
import { openHouseMapping } from '../feeds/reso/reso-related.js';

interface Options {
  config: string;
  feed: string;
  key: string;
  json?: boolean;
  /** print the restricted and withheld values too */
  showRestricted?: boolean;
}

export interface Explanation {
  feed: string;
  chatbot: string;
  keyBy: FeedConfig['keyBy'];
  key: string;
  /** the last record of the feed with this key (a later record wins), undefined when the feed lacks it; `leftOut`: its fields not printed, and why */
  source?: { position: string; record?: Record<string, unknown>; recordsWithKey: number; leftOut?: LeftOut[] };
  mapped?:
    | { kind: 'listing'; listing: Record<string, unknown> }
    | { kind: 'rejected'; reasons: string[] }
    /** `rule`: a display rule hides it (docs/display-rules.md) */
    | { kind: 'skipped'; reason: string; rule?: HideRule }
    | { kind: 'removed' }
    | { kind: 'error'; reason: string };
  /** every copy the chatbot holds of this key */
  remote: ListItem[];
  changes: FieldChange[];
  verdict: string;
}

export async function run(opts: Options): Promise<number> {
  const loaded = await loadConfig(opts.config);
  const [feed] = selectFeeds(loaded.config.feeds, [opts.feed], loaded.file);
  const key = opts.key.trim();
  const explanation = await withRuntime(
    loaded,
    async ({ api }, logger) => {
      const found = await findInFeed(feed!, key, loaded.dir, logger);
      const remote: ListItem[] = [];
      for await (const page of remotePages(api, {
        serialNumber: chatbotsOf(feed!)[0]!,
        keyBy: feed!.keyBy,
        pageSize: loaded.config.api.pageSize,
        concurrency: loaded.config.api.concurrency,
        ignore: new Set(),
      })) {
        for (const item of page.items) if (remoteKey(item, feed!.keyBy) === key) remote.push(item);
      }
      return explain(feed!, key, found, remote, { showRestricted: Boolean(opts.showRestricted) });
    },
    { redisOptional: true },
  ); // reads only: it runs when Redis does not answer
  if (opts.json) printJson(explanation);
  else process.stdout.write(formatExplanation(explanation));
  return EXIT.ok;
}

interface Found {
  item: FeedItem;
  mapped: MappedItem;
  count: number;
}

/** The feed's last record with this key: by its mapped key, or (a record too broken to map) by its raw key column. */
async function findInFeed(feed: FeedConfig, key: string, baseDir: string, logger: Logger): Promise<Found | undefined> {
  const opened = openFeed(feed.name, feed.source, { baseDir, logger, full: true });
  const compiled = compileMapping(feed.mapping, {
    display: feed.displayRules,
    openHouses: openHouseMapping(feed.source),
  });
  const ctx = { serialNumber: chatbotsOf(feed)[0]!, keyBy: feed.keyBy };
  let found: Found | undefined;
  for await (const item of opened.items) {
    const mapped = mapItem(item, compiled, ctx);
    const rawKey = item.kind === 'error' ? undefined : compiled.keyOf(item.data, feed.keyBy);
    const itemKey = ('key' in mapped ? mapped.key : undefined) ?? rawKey;
    if (itemKey?.trim() === key) found = { item, mapped, count: (found?.count ?? 0) + 1 };
  }
  return found;
}

export function explain(
  feed: FeedConfig,
  key: string,
  found: Found | undefined,
  remote: ListItem[],
  opts: { showRestricted?: boolean } = {},
): Explanation {
  const ignore = new Set<string>(feed.ignore);
  const m = found?.mapped;
  const shown =
    found && found.item.kind !== 'error' && !opts.showRestricted
      ? recordShown(found.item.data, feed.mapping, feed.displayRules)
      : undefined;
  const leftOut = shown?.leftOut ?? [];
  // the address withheld: the chatbot's copy is not printed with it either (a sync takes it out)
  const addressOut = leftOut.some((l) => l.why === ADDRESS_WITHHELD);
  const mapped = mappedOf(m);
  const diff =
    m?.kind === 'listing' && remote[0]
      ? diffCanonical(canonicalFromListing(m.listing, ALL_FIELDS), canonicalFromListItem(remote[0]), ignore)
      : [];
  const changes = addressOut
    ? diff.map((c) => (isAddress(c.field) ? { ...c, old: undefined, oldWithheld: true as const } : c))
    : diff;
  return {
    feed: feed.name,
    chatbot: chatbotsOf(feed).join(', '),
    keyBy: feed.keyBy,
    key,
    ...(found && {
      source: {
        position: place(found.item.position),
        ...(found.item.kind !== 'error' && { record: shown?.record ?? found.item.data }),
        recordsWithKey: found.count,
        ...(leftOut.length && { leftOut }),
      },
    }),
    mapped,
    remote: addressOut ? remote.map(withoutAddress) : remote,
    changes,
    verdict: verdictOf(feed, mapped, remote, changes),
  };
}

/** What the mapping made of the record, as the explanation prints it. */
function mappedOf(m: MappedItem | undefined): Explanation['mapped'] {
  if (m === undefined) return undefined;
  switch (m.kind) {
    case 'listing':
      return { kind: 'listing', listing: m.listing };
    case 'rejected':
      return { kind: 'rejected', reasons: m.issues.map(formatIssue) };
    case 'skipped':
      return { kind: 'skipped', reason: m.reason, ...(m.rule && { rule: m.rule }) };
    case 'removed':
      return { kind: 'removed' };
    default:
      return { kind: 'error', reason: m.error.message };
  }
}

function verdictOf(
  feed: FeedConfig,
  mapped: Explanation['mapped'],
  remote: ListItem[],
  changes: FieldChange[],
): string {
  const held = remote.length > 0;
  const dup =
    remote.length > 1
      ? ` The chatbot holds ${remote.length} copies: ${feed.deletes.mode === 'mirror' ? 'a sync deletes the extra ones' : 'deletes.mode keep leaves them'}.`
      : '';
  const gone = (why: string) =>
    !held
      ? `${why}; the chatbot does not hold it either: nothing to do.`
      : feed.deletes.mode === 'mirror'
        ? `${why}; a sync deletes it from the chatbot (deletes.mode mirror, within the delete guards).`
        : `${why}; deletes.mode keep: the chatbot keeps it.`;
  if (!mapped) return gone('the feed has no record with this key');
  switch (mapped.kind) {
    case 'listing':
      if (!held) return 'the chatbot does not hold it: a sync creates it.' + dup;
      return (
        (changes.length
          ? `a sync updates it (${changes.length} field(s) differ).`
          : 'the chatbot holds it as the feed has it: a sync leaves it (a change to Location or AreaUnit alone shows only through the sync state).') +
        dup
      );
    case 'rejected':
    case 'error':
      return `the record is rejected, so it is never sent; ${held ? 'the chatbot keeps what it holds for this key' : 'the chatbot does not hold it'}. Fix the feed or the mapping.`;
    case 'skipped':
      if (mapped.rule)
        return `display rule ${mapped.rule} hides it (${mapped.reason}); ${held ? 'a sync removes it from the chatbot at once, whatever deletes.mode says (a removal by rule)' : 'the chatbot does not hold it: a sync does not create it'}.`;
      return gone(`the mapping skips it (${mapped.reason})`);
    case 'removed':
      return gone('the source marks it removed');
  }
}

function formatExplanation(e: Explanation): string {
  const out: string[] = [`listing ${e.keyBy} ${e.key} of feed ${e.feed} → chatbot ${e.chatbot}`, ''];
  out.push(`1. source record${e.source ? ` (${e.source.position})` : ''}:`);
  if (!e.source) out.push('   not in the feed');
  else {
    if (e.source.recordsWithKey > 1)
      out.push(`   ${e.source.recordsWithKey} records carry this key; the last one wins:`);
    out.push(...fields(e.source.record ?? {}));
    const width = Math.min(24, Math.max(0, ...(e.source.leftOut ?? []).map((l) => l.field.length)));
    for (const l of e.source.leftOut ?? [])
      out.push(`   ${l.field.padEnd(width)}  (left out: ${l.why}; --show-restricted prints it)`);
  }
  out.push('', '2. mapped listing:');
  if (!e.mapped) out.push('   (no record to map)');
  else if (e.mapped.kind === 'listing') out.push(...fields(e.mapped.listing));
  else if (e.mapped.kind === 'rejected') out.push('   rejected:', ...e.mapped.reasons.map((r) => `     - ${r}`));
  else if (e.mapped.kind === 'skipped')
    out.push(`   ${e.mapped.rule ? `not shown (display rule ${e.mapped.rule})` : 'skipped'}: ${e.mapped.reason}`);
  else if (e.mapped.kind === 'removed') out.push('   removed by the source');
  else out.push(`   unreadable: ${e.mapped.reason}`);
  out.push('', '3. what the chatbot holds:');
  if (!e.remote.length) out.push('   nothing under this key');
  for (const item of e.remote) out.push(`   ID ${item.ID}:`, ...fields(item, '     '));
  if (e.changes.length) {
    out.push('', 'differences (chatbot → feed):');
    for (const c of e.changes)
      out.push(
        `   ${c.field}: ${describeFieldChange(c.old, c.new, c.oldWithheld ? 'withheld' : c.oldNotKept, c.newWithheld)}`,
      );
  }
  out.push('', e.verdict, '');
  return out.join('\n');
}

function fields(record: object, indent = '   '): string[] {
  const all: Array<[string, unknown]> = Object.entries(record);
  const entries = all.filter(([, v]) => v !== undefined && v !== '');
  const width = Math.min(24, Math.max(0, ...entries.map(([k]) => k.length)));
  return entries.map(([k, v]) => `${indent}${k.padEnd(width)}  ${show(v)}`);
}

function show(v: unknown): string {
  if (v === undefined) return '(unset)';
  const s = typeof v === 'string' ? v : JSON.stringify(v);
  return s.length > 100 ? `${s.slice(0, 97)}…` : s;
}

const place = formatPosition;

const isAddress = (field: string) => (ADDRESS_FIELDS as readonly string[]).includes(field);

/** the chatbot's copy without its street address (the only address field the list returns), printed as unset */
const withoutAddress = (item: ListItem): ListItem => ({ ...item, Address: '' });
