// `feedsync feed drift --feed NAME`: the feed's mapping against its RESO source's dictionary
// ($metadata, and the Lookup resource where the server offers one), read now (src/drift/drift-check.ts:
// a vendor whose documentation limits Lookup reads keeps that limit, and the last Lookup values stand
// meanwhile); `--stored` compares the last read kept and sends nothing. Reads no listing record,
// writes nothing to a chatbot, sends no alert (the worker's daily check does). Exit status: 0 no
// drift, 5 drift found, 1 the server could not be read, 2 usage (or --stored with no read kept).
import { loadConfig } from '../config/load.js';
import { selectFeeds } from '../config/select.js';
import { checkDrift, liveResoSource, type DriftReport } from '../drift/drift-check.js';
import { ConfigError } from '../errors.js';
import { printJson } from './exit.js';
import { withRuntime } from './with-runtime.js';

/** The exit status of a check that found drift: apart from the sync's statuses, for a cron to act on. */
export const DRIFT_FOUND = 5;

export function driftLines(r: DriftReport): string[] {
  const values =
    r.checked.values === 'Lookup'
      ? '$metadata and the Lookup resource'
      : r.checked.values === 'enums'
        ? "$metadata (the server offers no Lookup resource: lookup values from $metadata's enum types)"
        : '$metadata only (the server offers no Lookup resource and no enum types: lookup values not checked)';
  const when = r.read
    ? `read now (${r.requests} requests)`
    : r.how === 'stored'
      ? `as read at ${r.readAt} (--stored: no request sent; without it feed drift reads the server now)`
      : `as read at ${r.readAt} (read at most once a day; next read after ${r.nextReadAfter})`;
  return [
    `feed ${r.feed}: ${r.source}`,
    `  checked ${values}, ${when}`,
    ...(r.lookups
      ? [
          `  lookup values as read at ${r.lookups.readAt}: ${r.lookups.limit} (next read after ${r.lookups.nextReadAfter})`,
        ]
      : []),
    ...(r.firstRead
      ? [
          '  first read of this source: a removed field shows from the next read on (a field whose lookup values a map covers names a likely rename now)',
        ]
      : []),
    ...(r.notOffered.length
      ? [`  mapped fields this server does not offer (not drift): ${r.notOffered.join(', ')}`]
      : []),
    ...r.capped.map(
      (c) =>
        `  lookup ${c.lookup} lists ${c.values} values: its first ${c.compared} compared with the mapping, ${c.values - c.compared} more counted (a change among them is found by the list's digest)`,
    ),
    '',
    r.findings.length ? `drift found (${r.findings.length}):` : 'no drift: the mapping matches what the source says',
    ...r.findings.map((f) => `  ${f.kind}: ${f.message}`),
  ];
}

export async function run(opts: {
  config: string;
  feed: string;
  json?: boolean;
  redis?: boolean;
  stored?: boolean;
}): Promise<number> {
  const loaded = await loadConfig(opts.config);
  const [feed] = selectFeeds(loaded.config.feeds, [opts.feed], loaded.file);
  if (!feed) throw new ConfigError(`no feed to check in ${loaded.file}`, loaded.file);
  if (!liveResoSource(feed)) {
    throw new ConfigError(
      `feed ${feed.name} is not read from a RESO server (source.kind reso with a url): feed drift reads a server's $metadata`,
      loaded.file,
    );
  }
  const report = await withRuntime(
    loaded,
    (runtime, logger) =>
      checkDrift(
        feed,
        {
          store: runtime.store,
          ctx: { baseDir: loaded.dir, logger, budgets: runtime.budgets },
          siblings: loaded.config.feeds,
        },
        opts.stored ? 'stored' : 'now',
      ),
    { noRedis: opts.redis === false },
  );
  if (opts.json) printJson(report);
  else for (const line of driftLines(report)) process.stdout.write(`${line}\n`);
  return report.findings.length ? DRIFT_FOUND : 0;
}
