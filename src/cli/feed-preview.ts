// `feedsync feed preview --feed NAME`: read and map one feed with no API and no state read or
// written (a RESO feed is pulled whole: no mark is handed in, and readers never write state).
// Prints the first mapped listings, every rejected record with its place and reasons, counts, and
// what to fix before a sync: keys seen twice, rejections by reason, lookup values no map covers.
// Exit status as a sync's: 1 when the read failed before a record (a 401, a 5xx), 4 when it broke
// off after some (partial), 0 when the feed was read whole.
import { loadConfig } from '../config/load.js';
import { selectFeeds } from '../config/select.js';
import { ConfigError, formatIssue, type FeedReadError } from '../errors.js';
import { formatPosition } from '../feeds/position.js';
import { openFeed } from '../feeds/index.js';
import { describeVendor } from '../feeds/vendors/describe.js';
import { createLogger } from '../log.js';
import { compileMapping, mapFeed, type MappedItem } from '../mapping/index.js';
import { createFindings } from '../mapping/feed-findings.js';
import { chatbotsOf } from '../config/feed-chatbots.js';
import type { FeedConfig } from '../config/schema.js';
import type { FeedItem } from '../feeds/types.js';
import { lanesOf } from '../sync/lanes.js';
import { EXIT, printJson } from './exit.js';

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
  const limit = opts.limit ?? 10;
  const logger = createLogger({ level: process.env.LOG_LEVEL ?? 'warn' });
  const opened = openFeed(feed.name, feed.source, { baseDir: loaded.dir, logger, full: true });
  const routing = routingTally(feed, opts.chatbot);
  const counts = { records: 0, valid: 0, rejected: 0, skipped: 0, removed: 0, parseErrors: 0 };
  const listings: Array<{ key: string; position: string; listing: unknown }> = [];
  const rejected: Array<{ position: string; key?: string; issues: string[] }> = [];
  const skipped: Array<{ position: string; key?: string; reason: string }> = [];
  const removed: Array<{ position: string; key?: string }> = [];
  const parseErrors: Array<{ position: string; message: string }> = [];
  const replacedValues = new Map<string, number>();
  let incomplete: FeedReadError | undefined;
  const findings = createFindings();
  const mapping = compileMapping(feed.mapping, { onUnmapped: findings.onUnmapped });

  try {
    for await (const item of mapFeed(routing.tally(opened.items), mapping, { serialNumber: chatbotsOf(feed)[0]!, keyBy: feed.keyBy })) {
      counts.records++;
      tally(item);
    }
  } catch (err) {
    if ((err as { code?: string }).code !== 'FEED_READ') throw err;
    incomplete = err as FeedReadError;
  }

  function tally(item: MappedItem) {
    const position = place(item.position);
    findings.add(item, position);
    switch (item.kind) {
      case 'listing':
        counts.valid++;
        for (const f of item.replaced ?? []) replacedValues.set(f, (replacedValues.get(f) ?? 0) + 1);
        if (listings.length < limit) listings.push({ key: item.key, position, listing: item.listing });
        break;
      case 'rejected':
        counts.rejected++;
        rejected.push({ position, key: item.key, issues: item.issues.map(formatIssue) });
        break;
      case 'skipped':
        counts.skipped++;
        skipped.push({ position, key: item.key, reason: item.reason });
        break;
      case 'removed':
        counts.removed++;
        removed.push({ position, key: item.key });
        break;
      case 'error':
        // as the sync counts it: a record that cannot be read is a rejected record (parseErrors says how many of them)
        counts.rejected++;
        counts.parseErrors++;
        parseErrors.push({ position, message: item.error.message });
        rejected.push({ position, key: item.key, issues: [item.error.reason] });
        break;
    }
  }

  const source = feed.source.path ?? feed.source.url;
  const vendor = feed.source.kind === 'reso' ? describeVendor(feed.source) : undefined;
  const found = findings.result();
  if (opts.json) {
    printJson({
      feed: feed.name,
      chatbot: feed.chatbot,
      kind: feed.source.kind,
      source,
      keyBy: feed.keyBy,
      mode: opened.mode,
      ...(vendor && { vendor }),
      valuesReplaced: Object.fromEntries(replacedValues),
      ...(opened.stats && { requests: opened.stats.requests, pages: opened.stats.pages, warnings: opened.stats.warnings }),
      complete: !incomplete,
      ...(incomplete && { error: incomplete.message }),
      counts,
      listings,
      rejected,
      skipped,
      removed,
      parseErrors,
      ...found,
      ...(feed.chatbots && { routing: routing.result() }),
    });
    return exit();
  }
  const out = (s = '') => process.stdout.write(`${s}\n`);
  out(`feed ${feed.name} (${feed.source.kind}, ${source}) → ${chatbotsOf(feed).join(', ')}, key ${feed.keyBy}`);
  if (feed.chatbots) {
    const r = routing.result();
    out('routing (records each chatbot takes by its where):');
    for (const c of r.chatbots) out(`  ${c.serialNumber.padEnd(24)}${String(c.records).padStart(8)}`);
    out(`  ${'routed nowhere'.padEnd(24)}${String(r.routedNowhere).padStart(8)}`);
  }
  if (vendor) out(vendor);
  if (opened.stats) out(`read: ${opened.stats.pages} pages, ${opened.stats.requests} requests`);
  for (const w of opened.stats?.warnings ?? []) out(`warning: ${w}`);
  out();
  out(`first ${listings.length} of ${counts.valid} mapped listing(s):`);
  for (const l of listings) out(`  ${l.position}  ${l.key}\n    ${JSON.stringify(l.listing)}`);
  section(
    'rejected',
    rejected.map((r) => `  ${r.position}${r.key ? `  ${r.key}` : ''}\n${r.issues.map((i) => `    - ${i}`).join('\n')}`),
  );
  section(
    'skipped',
    skipped.map((s) => `  ${s.position}${s.key ? `  ${s.key}` : ''}: ${s.reason}`),
  );
  section(
    'removed',
    removed.map((r) => `  ${r.position}${r.key ? `  ${r.key}` : ''}`),
  );
  section('keys seen more than once (a sync keeps the later record)', [
    ...found.keysSeenTwice.keys.map((k) => `  ${k.key} ×${k.times}: ${k.places.join(', ')}`),
    ...(found.keysSeenTwice.count > found.keysSeenTwice.keys.length ? [`  … and ${found.keysSeenTwice.count - found.keysSeenTwice.keys.length} more key(s)`] : []),
  ]);
  section(
    "values replaced by their rule's default (onInvalid: default)",
    [...replacedValues].map(([f, n]) => `  ${f} × ${n}`),
  );
  section(
    'rejections by reason',
    found.rejectionReasons.map((r) => `  ${String(r.records).padStart(6)}  ${r.reason}`),
  );
  section(
    'lookup values no map covers (add them to the field\'s map, or "*")',
    found.unmapped.map((u) => `  ${String(u.count).padStart(6)}  ${u.field}: ${JSON.stringify(u.value)}`),
  );
  out();
  const rows: [string, number][] = [
    ['records', counts.records],
    ['valid', counts.valid],
    ['rejected', counts.rejected],
    ['skipped', counts.skipped],
    ['removed', counts.removed],
    ['of which unreadable', counts.parseErrors],
  ];
  out('counts');
  for (const [name, n] of rows) out(`  ${name.padEnd(20)}${String(n).padStart(8)}`);
  if (incomplete) out(`\nthe feed could not be read whole: ${incomplete.message}`);
  return exit();

  function exit(): number {
    if (!incomplete) return EXIT.ok;
    return counts.records > 0 ? EXIT.partial : EXIT.failed;
  }

  function section(title: string, lines: string[]) {
    if (!lines.length) return;
    out();
    out(`${title} (${lines.length}):`);
    for (const l of lines) out(l);
  }
}

const place = formatPosition;

/**
 * The records each chatbot of a routed feed takes (lanes.ts: its where), counted as they are read;
 * `only`: that chatbot alone is shown (a serial number the feed does not route to is a usage error).
 */
function routingTally(feed: FeedConfig, only: string | undefined) {
  const lanes = lanesOf(feed);
  if (only !== undefined && !lanes.some((l) => l.chatbot === only))
    throw new ConfigError(`feed ${feed.name} does not write into chatbot ${only}: it writes into ${chatbotsOf(feed).join(', ')}`);
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
      chatbots: [...counts].filter(([sn]) => only === undefined || sn === only).map(([serialNumber, records]) => ({ serialNumber, records })),
      routedNowhere: nowhere,
    }),
  };
}
