// `feedsync feed preview --feed NAME`: read and map one feed with no API and no state read or
// written (a RESO feed is pulled whole: no mark is handed in, and readers never write state).
// Prints the first mapped listings (each with the display rules that shaped it), every rejected
// record with its place and reasons, every record a display rule hides and by which rule, counts,
// and what to fix before a sync: keys seen twice, rejections by reason, lookup values no map covers.
// Exit status as a sync's: 6 (rejected) when the file is not the feed (a CSV header without a column
// the mapping reads, an HTML page) or no record of it is valid, said on the first line, so a CI job
// can gate on it; 1 when the read failed before a record (a 401, a 5xx), 4 when it broke off after
// some (partial), 0 when the feed was read whole with a valid record.
import { loadConfig } from '../config/load.js';
import { selectFeeds } from '../config/select.js';
import { ConfigError, formatIssue, type FeedReadError } from '../errors.js';
import { formatPosition } from '../feeds/position.js';
import { countInvalidText, encodingOf, invalidTextWarning, type InvalidText } from '../mapping/invalid-text.js';
import { openFeed } from '../feeds/index.js';
import { describeVendor } from '../feeds/vendors/describe.js';
import { displayUrl } from '../feeds/source/http.js';
import { createLogger } from '../log.js';
import { compileMapping, mapFeed, type MappedItem } from '../mapping/index.js';
import { ATTRIBUTION_KEY, DISCLAIMER_KEY, type HideRule, type Purpose } from '../mapping/display-config.js';
import { displayLine, lanesOf, requestsLine } from '../sync/index.js';
import { createFindings } from '../mapping/feed-findings.js';
import { chatbotsOf } from '../config/feed-chatbots.js';
import type { FeedConfig } from '../config/schema.js';
import type { FeedItem, SourceReadStats } from '../feeds/types.js';
import { EXIT, printJson } from './exit.js';
import { openHouseMapping } from '../feeds/reso/reso-related.js';
import { columnsNeeded } from '../mapping/columns-needed.js';
import { countDisplay } from '../mapping/display-tally.js';

interface Options {
  config: string;
  feed: string;
  limit?: number;
  json?: boolean;
  /** a routed feed (feeds[].chatbots): the routing of this chatbot only */
  chatbot?: string;
}

export async function run(opts: Options): Promise<number> {
  const loaded = await loadConfig(opts.config);
  const [feed] = selectFeeds(loaded.config.feeds, [opts.feed], loaded.file);
  if (!feed) throw new ConfigError(`no feed to preview in ${loaded.file}`, loaded.file);
  const logger = createLogger({ level: process.env.LOG_LEVEL ?? 'warn' });
  const opened = openFeed(feed.name, feed.source, {
    baseDir: loaded.dir,
    logger,
    full: true,
    columns: columnsNeeded(feed.mapping),
  });
  const routing = routingTally(feed, opts.chatbot);
  const preview = await readPreview(feed, opened, routing, opts.limit ?? 10);
  const rejected = rejectedWhy(preview);
  if (opts.json)
    printJson({ ...(rejected && { rejected }), ...(previewJson(feed, opened, routing, preview) as object) });
  else {
    if (rejected) out(`rejected: ${rejected}`);
    // as sync's first line says it: else the reason came last, below an empty listing and zero counts
    else if (preview.incomplete && preview.counts.records === 0)
      out(`failed: not one record was read: ${preview.incomplete.message}`);
    printPreview(feed, opened, routing, preview);
  }
  if (rejected) return EXIT.rejected;
  if (!preview.incomplete) return EXIT.ok;
  return preview.counts.records > 0 ? EXIT.partial : EXIT.failed;
}

/** Why a sync of the feed as it is would be rejected (sync/settle/rejection.ts): the file is not the feed, or no record of it is valid. */
function rejectedWhy(p: Preview): string | undefined {
  if (p.incomplete?.refused) return p.incomplete.message;
  const { records, valid, rejected } = p.counts;
  if (records === 0 || valid > 0 || rejected === 0) return undefined;
  const reasons = p.found.rejectionReasons.slice(0, 3).map((r) => `${r.reason} × ${r.records}`);
  return `none of the feed's ${records} record(s) is valid${reasons.length ? `: ${reasons.join('; ')}` : ''}`;
}

/** What reading and mapping the feed found: counts, the first listings, every record not taken, and what to fix. */
interface Preview {
  counts: { records: number; valid: number; rejected: number; skipped: number; removed: number; parseErrors: number };
  /** `rules`: what the display rules did to the listing (docs/display-rules.md) */
  listings: Array<{ key: string; position: string; join?: string; listing: unknown; rules?: string[] }>;
  /** `held`: the display rules held it back (its attribution names a field it lacks) */
  rejected: Array<{ position: string; key?: string; join?: string; issues: string[]; held?: true }>;
  /** `rule`: the display rule that hides it (a sync removes it from the chatbot by that rule) */
  skipped: Array<{ position: string; key?: string; join?: string; reason: string; rule?: HideRule }>;
  /** the feed's display rules and what they did to every record (not only the listings shown above) */
  display: {
    purpose: Purpose;
    soldDays: number;
    hidden: Partial<Record<HideRule, number>>;
    addressWithheld: number;
    held: number;
  };
  removed: Array<{ position: string; key?: string }>;
  parseErrors: Array<{ position: string; message: string }>;
  replacedValues: Map<string, number>;
  /** listings holding U+FFFD: bytes not valid in the encoding the feed was read with (a latin1 file read as utf8) */
  invalidText?: InvalidText;
  incomplete: FeedReadError | undefined;
  found: ReturnType<ReturnType<typeof createFindings>['result']>;
}

type Opened = ReturnType<typeof openFeed>;
type Routing = ReturnType<typeof routingTally>;

/** The feed read and mapped to its end (or to the read error that broke it off), each item tallied. */
async function readPreview(feed: FeedConfig, opened: Opened, routing: Routing, limit: number): Promise<Preview> {
  const rules = feed.displayRules;
  const p: Omit<Preview, 'found'> = {
    counts: { records: 0, valid: 0, rejected: 0, skipped: 0, removed: 0, parseErrors: 0 },
    listings: [],
    rejected: [],
    skipped: [],
    removed: [],
    parseErrors: [],
    replacedValues: new Map(),
    incomplete: undefined,
    display: { purpose: rules.purpose, soldDays: rules.soldDays, hidden: {}, addressWithheld: 0, held: 0 },
  };
  const findings = createFindings();
  const mapping = compileMapping(feed.mapping, {
    onUnmapped: findings.onUnmapped,
    display: rules,
    openHouses: openHouseMapping(feed.source),
  });
  try {
    for await (const item of mapFeed(routing.tally(opened.items), mapping, {
      serialNumber: chatbotsOf(feed)[0]!,
      keyBy: feed.keyBy,
    })) {
      p.counts.records++;
      const position = place(item.position);
      findings.add(item, position);
      tally(p, item, position, limit);
    }
  } catch (err) {
    if ((err as { code?: string }).code !== 'FEED_READ') throw err;
    p.incomplete = err as FeedReadError;
  }
  return { ...p, found: findings.result() };
}

function tally(p: Omit<Preview, 'found'>, item: MappedItem, position: string, limit: number): void {
  const { counts } = p;
  countDisplay(p.display, item);
  switch (item.kind) {
    case 'listing': {
      counts.valid++;
      p.invalidText = countInvalidText(p.invalidText, item.listing, () => position);
      for (const f of item.replaced ?? []) p.replacedValues.set(f, (p.replacedValues.get(f) ?? 0) + 1);
      const rules = shownRules(item);
      if (p.listings.length < limit)
        p.listings.push({
          key: item.key,
          position,
          ...joinOf(item),
          listing: item.listing,
          ...(rules.length && { rules }),
        });
      break;
    }
    case 'rejected':
      counts.rejected++;
      p.rejected.push({
        position,
        key: item.key,
        ...joinOf(item),
        issues: item.issues.map(formatIssue),
        ...(item.held && { held: item.held }),
      });
      break;
    case 'skipped':
      counts.skipped++;
      p.skipped.push({
        position,
        key: item.key,
        ...joinOf(item),
        reason: item.rule ? `${item.reason} (display rule ${item.rule})` : item.reason,
        ...(item.rule && { rule: item.rule }),
      });
      break;
    case 'removed':
      counts.removed++;
      p.removed.push({ position, key: item.key });
      break;
    case 'error':
      // as the sync counts it: a record that cannot be read is a rejected record (parseErrors says how many of them)
      counts.rejected++;
      counts.parseErrors++;
      p.parseErrors.push({ position, message: item.error.message });
      p.rejected.push({ position, key: item.key, ...joinOf(item), issues: [item.error.reason] });
      break;
  }
}

/** What the display rules did to a listing shown: its address withheld, its sold window, its attribution and disclaimer. */
function shownRules(item: Extract<MappedItem, { kind: 'listing' }>): string[] {
  const keys = new Set((item.listing.ExtensionColumn ?? []).map((e) => e.Key));
  return [
    ...(item.shown?.addressWithheld ? ['address withheld (InternetAddressDisplayYN)'] : []),
    ...(item.shown?.until ? [`sold window ends ${item.shown.until}`] : []),
    ...(keys.has(ATTRIBUTION_KEY) ? ['attribution'] : []),
    ...(keys.has(DISCLAIMER_KEY) ? ['disclaimer'] : []),
  ];
}

/** How a joining reader (MITS) made the record, when it says. */
const joinOf = (item: MappedItem) => (item.position.join === undefined ? {} : { join: item.position.join });

/** The join line under a record, when it has one. */
const joinLine = (r: { join?: string }) => (r.join === undefined ? '' : `\n    join: ${r.join}`);

/** The feed's file, or its URL as every place of a feed names it (displayUrl): origin and path, never its userinfo or query. */
const sourceShown = (feed: FeedConfig): string | undefined =>
  feed.source.path ?? (feed.source.url === undefined ? undefined : displayUrl(feed.source.url));

function previewJson(feed: FeedConfig, opened: Opened, routing: Routing, p: Preview): unknown {
  const vendor = feed.source.kind === 'reso' ? describeVendor(feed.source) : undefined;
  return {
    feed: feed.name,
    chatbot: feed.chatbot,
    kind: feed.source.kind,
    source: sourceShown(feed),
    keyBy: feed.keyBy,
    mode: opened.mode,
    ...(vendor && { vendor }),
    valuesReplaced: Object.fromEntries(p.replacedValues),
    ...(p.invalidText && { invalidText: p.invalidText }),
    ...(opened.stats && {
      requests: opened.stats.requests,
      ...tallyOf(opened.stats),
      pages: opened.stats.pages,
      warnings: opened.stats.warnings,
    }),
    complete: !p.incomplete,
    ...(p.incomplete && { error: p.incomplete.message }),
    counts: p.counts,
    display: p.display,
    listings: p.listings,
    rejected: p.rejected,
    skipped: p.skipped,
    removed: p.removed,
    parseErrors: p.parseErrors,
    ...p.found,
    ...(feed.chatbots && { routing: routing.result() }),
  };
}

const out = (s = '') => process.stdout.write(`${s}\n`);

function section(title: string, lines: string[]): void {
  if (!lines.length) return;
  out();
  out(`${title} (${lines.length}):`);
  for (const l of lines) out(l);
}

/** The source's warnings, and text read in another encoding than the feed's. */
function warningsOf(feed: FeedConfig, opened: Opened, p: Preview): string[] {
  const warnings = [...(opened.stats?.warnings ?? [])];
  if (p.invalidText) warnings.push(invalidTextWarning(p.invalidText, encodingOf(feed.source)));
  return warnings;
}

function printPreview(feed: FeedConfig, opened: Opened, routing: Routing, p: Preview): void {
  const { counts, found } = p;
  const vendor = feed.source.kind === 'reso' ? describeVendor(feed.source) : undefined;
  out(
    `feed ${feed.name} (${feed.source.kind}, ${sourceShown(feed)}) → ${chatbotsOf(feed).join(', ')}, key ${feed.keyBy}`,
  );
  if (feed.chatbots) {
    const r = routing.result();
    out('routing (records each chatbot takes by its where):');
    for (const c of r.chatbots) out(`  ${c.serialNumber.padEnd(24)}${String(c.records).padStart(8)}`);
    out(`  ${'routed nowhere'.padEnd(24)}${String(r.routedNowhere).padStart(8)}`);
  }
  if (vendor) out(vendor);
  if (opened.stats)
    out(
      `read: ${opened.stats.pages} pages, ${requestsLine({ requests: opened.stats.requests, ...tallyOf(opened.stats) })}`,
    );
  for (const w of warningsOf(feed, opened, p)) out(`warning: ${w}`);
  out();
  out(`first ${p.listings.length} of ${counts.valid} mapped listing(s):`);
  for (const l of p.listings)
    out(
      `  ${l.position}  ${l.key}${joinLine(l)}${l.rules ? `\n    display rules: ${l.rules.join('; ')}` : ''}\n    ${JSON.stringify(l.listing)}`,
    );
  section(
    'rejected',
    p.rejected.map(
      (r) =>
        `  ${r.position}${r.key ? `  ${r.key}` : ''}${joinLine(r)}\n${r.issues.map((i) => `    - ${i}`).join('\n')}`,
    ),
  );
  section(
    'skipped',
    p.skipped.map((s) => `  ${s.position}${s.key ? `  ${s.key}` : ''}: ${s.reason}${joinLine(s)}`),
  );
  section(
    'removed',
    p.removed.map((r) => `  ${r.position}${r.key ? `  ${r.key}` : ''}`),
  );
  section('keys seen more than once (a sync keeps the later record)', [
    ...found.keysSeenTwice.keys.map((k) => `  ${k.key} ×${k.times}: ${k.places.join(', ')}`),
    ...(found.keysSeenTwice.count > found.keysSeenTwice.keys.length
      ? [`  … and ${found.keysSeenTwice.count - found.keysSeenTwice.keys.length} more key(s)`]
      : []),
  ]);
  section(
    "values replaced by their rule's default (onInvalid: default)",
    [...p.replacedValues].map(([f, n]) => `  ${f} × ${n}`),
  );
  section(
    'rejections by reason',
    found.rejectionReasons.map((r) => `  ${String(r.records).padStart(6)}  ${r.reason}`),
  );
  section(
    'lookup values no map covers (add them to the field\'s map, or "*")',
    found.unmapped.map((u) => `  ${String(u.count).padStart(6)}  ${u.field}: ${JSON.stringify(u.value)}`),
  );
  const d = p.display;
  out();
  out(
    `display rules (${d.purpose}, docs/display-rules.md): ${displayLine(d) || (d.purpose === 'internal' ? 'none apply' : 'every listing shown as it is')}`,
  );
  out();
  const rows: [string, number][] = [
    ['records', counts.records],
    ['valid', counts.valid],
    ['rejected', counts.rejected],
    // (a part of `rejected`, indented under it: below `removed` it read as some of the removed)
    ['  of which unreadable', counts.parseErrors],
    ['skipped', counts.skipped],
    ['removed', counts.removed],
  ];
  out('counts');
  for (const [name, n] of rows) out(`  ${name.padEnd(22)}${String(n).padStart(8)}`);
  if (p.incomplete) out(`\nthe feed could not be read whole: ${p.incomplete.message}`);
}

const place = formatPosition;

/**
 * The records each chatbot of a routed feed takes (lanes.ts: its where), counted as they are read;
 * `only`: that chatbot alone is shown (a serial number the feed does not route to is a usage error).
 */
function routingTally(feed: FeedConfig, only: string | undefined) {
  const lanes = lanesOf(feed);
  if (only !== undefined && !lanes.some((l) => l.chatbot === only))
    throw new ConfigError(
      `feed ${feed.name} does not write into chatbot ${only}: it writes into ${chatbotsOf(feed).join(', ')}`,
    );
  const counts = new Map(lanes.map((l) => [l.chatbot, 0]));
  let nowhere = 0;
  return {
    async *tally(items: AsyncIterable<FeedItem>): AsyncGenerator<FeedItem> {
      for await (const item of items) {
        if (feed.chatbots && item.kind === 'record') {
          const to = lanes.filter((l) => !l.route || l.route(item.data));
          for (const l of to) counts.set(l.chatbot, counts.get(l.chatbot)! + 1);
          if (to.length === 0) nowhere++;
        }
        yield item;
      }
    },
    result: () => ({
      chatbots: [...counts]
        .filter(([sn]) => only === undefined || sn === only)
        .map(([serialNumber, records]) => ({ serialNumber, records })),
      routedNowhere: nowhere,
    }),
  };
}

/** A read's requests by what for, and its token calls (RESO), as the sync report has them. */
function tallyOf(stats: SourceReadStats): { requestsBy?: Partial<Record<string, number>>; tokenCalls?: number } {
  return stats.tally ? { requestsBy: { ...stats.tally.by }, tokenCalls: stats.tally.tokenCalls } : {};
}
