// `feed drift` and the worker's check: a RESO feed's mapping against its source's dictionary
// ($metadata, and the Lookup resource where offered), before a sync rejects anything. How the server
// is read (DriftRead): an operator's `feed drift` reads it now (`now`), so a change at the source
// shows minutes after it; `feed drift --stored` sends nothing and compares the last read kept
// (`stored`); the worker's scheduled check reads at most once in READ_EVERY per source (`due`) and
// compares what is kept within the day. A vendor whose documentation limits Lookup reads keeps that
// limit whoever reads (VendorProfile.lookupEveryMs; MLS Grid: once a day, src/feeds/vendors/mlsgrid.ts
// cites it): `$metadata` is read now, the Lookup values of the last read stand until the limit has
// passed, and the report says so. What was read, with the read before and the fields vanished since,
// is kept in the state store (namespace `drift`, keyed by a digest of snapshot.ts sourceId). A check reads no
// listing record and writes nothing to a chatbot; what the feed's last records carried (their
// OriginatingSystemName) it takes from the sync's stored marks.
import { createHash } from 'node:crypto';
import { z } from 'zod';
import type { FeedConfig } from '../config/schema.js';
import { ConfigError } from '../errors.js';
import type { ResoSource } from '../feeds/config-schema.js';
import { displayUrl } from '../feeds/source/http.js';
import type { FeedContext } from '../feeds/types.js';
import { mappedFields } from '../mapping/mapped-fields.js';
import { vendorProfile } from '../feeds/vendors/registry.js';
import type { KvStore } from '../state/kv-store.js';
import { lanesOf, MARK_NAMESPACE } from '../sync/index.js';
import {
  compareDictionary,
  coversList,
  renamesOf,
  vanishedAfter,
  type Comparison,
  type DriftFinding,
  type Vanished,
} from './compare.js';
import { readSnapshot, sourceId, type DictionarySnapshot, type SnapshotWants } from './snapshot.js';

export const DRIFT_NAMESPACE = 'drift';
/** how long a read of a source's dictionary stands before the worker's next check (how `due`) reads it again */
export const READ_EVERY_MS = 24 * 3_600_000;
/** a check that began reading this long ago and never stored its read is taken as dead */
const CLAIM_MS = 10 * 60_000;

export interface DriftReport {
  feed: string;
  /** the source's $metadata URL (credentials masked) */
  source: string;
  /** how the check was to read the server: now (`feed drift`), when the day is up (the worker), not at all (`--stored`) */
  how: DriftRead;
  /** whether this check read the server, or compared what the read of `readAt` kept */
  read: boolean;
  readAt: string;
  /** the worker's next check after this time reads the server again */
  nextReadAfter: string;
  /** what was compared: `$metadata` alone, or with the Lookup resource's (or $metadata's enum) values */
  checked: { metadata: true; values: DictionarySnapshot['valuesFrom'] };
  /** the Lookup values compared were read before `$metadata` was (the vendor limits Lookup reads): when, when next, and whose limit */
  lookups?: { readAt: string; nextReadAfter: string; limit: string };
  /** requests this check sent (0 within the day) */
  requests: number;
  findings: DriftFinding[];
  notOffered: string[];
  /** lookup lists longer than the values kept: the first `compared` were compared with the mapping, the rest counted (and digested) */
  capped: Array<{ lookup: string; values: number; compared: number }>;
  /** no read before this one to compare with: removals are found from the next read on (a likely rename by lookup values now) */
  firstRead: boolean;
}

const Kept = z.object({
  current: z.custom<DictionarySnapshot>((v) => typeof v === 'object' && v !== null && 'readAt' in v && 'fields' in v),
  previous: z.custom<DictionarySnapshot>((v) => typeof v === 'object' && v !== null && 'readAt' in v).optional(),
  /** fields offered at a read before `previous` and absent since (compare.ts vanishedAfter) */
  vanished: z
    .record(
      z.string(),
      z.custom<Vanished>((v) => typeof v === 'object' && v !== null && 'type' in v),
    )
    .optional(),
  /** the renames the comparison at the last read found */
  renamed: z.record(z.string(), z.object({ to: z.string(), why: z.string() })).optional(),
  /** the OriginatingSystemName the feed's records carried at the last read, by feed */
  records: z.record(z.string(), z.string()).default({}),
  /** a check reading the server now (since this ISO time) */
  claimedAt: z.string().optional(),
});
type Kept = z.infer<typeof Kept>;

function parseKept(raw: string | undefined): Partial<Kept> {
  if (raw === undefined) return {};
  try {
    const parsed = Kept.partial().safeParse(JSON.parse(raw));
    return parsed.success ? parsed.data : {};
  } catch {
    return {}; // (not JSON: as nothing kept; the next check keeps it anew)
  }
}

/** The OriginatingSystemName the feed's lanes' stored marks say their last records carried. */
async function recordSystem(store: KvStore, feed: FeedConfig): Promise<string | undefined> {
  const marks = await store.getAll(MARK_NAMESPACE);
  for (const lane of lanesOf(feed)) {
    try {
      const mark: unknown = JSON.parse(marks.get(lane.id) ?? 'null');
      if (mark && typeof mark === 'object' && 'osn' in mark && typeof mark.osn === 'string') return mark.osn;
    } catch {
      // an unreadable mark says nothing of the records
    }
  }
  return undefined;
}

export interface DriftDeps {
  store: KvStore;
  ctx: FeedContext;
  now?: () => Date;
  /** the config's feeds: the lookup values read are those every feed of the same source maps */
  siblings?: readonly FeedConfig[];
}

/**
 * The state key of a source's kept read: a digest of its sourceId. The id holds the service root's
 * path, where a feed's token may travel (a `${VAR}` there: secrets.ts registerEnvSecrets), and a key
 * is shown to whoever lists a Redis hash's fields or exports the state.
 */
export function keyOf(source: ResoSource): string {
  return `source-${createHash('sha256').update(sourceId(source)).digest('hex').slice(0, 32)}`;
}

/**
 * The read an earlier feedsync kept under the source's sourceId as text (or, before that, with the
 * URL's credentials in it) moved under `id`, and those keys deleted. Whether there was one.
 */
async function carryFormer(store: KvStore, source: ResoSource, id: string): Promise<boolean> {
  const formers = [...new Set([sourceId(source), sourceId(source, source.url!)])];
  const kept = await Promise.all(formers.map((k) => store.get(DRIFT_NAMESPACE, k)));
  const raw = kept.find((r) => r !== undefined);
  if (raw === undefined) return false;
  // (a check that kept a read under `id` meanwhile stands: its read is the newer)
  await store.swap(DRIFT_NAMESPACE, id, undefined, raw);
  await store.delete(DRIFT_NAMESPACE, formers);
  return true;
}

/** How a check reads the server: now (an operator), when the day is up (the worker), or not at all (the last read kept). */
export type DriftRead = 'now' | 'due' | 'stored';

/** Whether the kept read is due again, or another check is reading now. */
const due = (kept: Partial<Kept>, at: number) =>
  (!kept.current || at - Date.parse(kept.current.readAt) >= READ_EVERY_MS) && !claimed(kept, at);
const claimed = (kept: Partial<Kept>, at: number) =>
  kept.claimedAt !== undefined && at - Date.parse(kept.claimedAt) < CLAIM_MS;

/** When the kept read's lookup values were read from the Lookup resource (undefined: they were not). */
const lookupsReadAt = (s: DictionarySnapshot | undefined) =>
  s?.valuesFrom === 'Lookup' ? Date.parse(s.lookupsReadAt ?? s.readAt) : undefined;

/**
 * The read whose Lookup values stand, where the vendor limits Lookup reads and its limit has not
 * passed since they were read (or another check is reading now): the Lookup resource is not read.
 */
function lookupsStanding(source: ResoSource, kept: Partial<Kept>, at: number): DictionarySnapshot | undefined {
  const every = vendorProfile(source.vendor).lookupEveryMs;
  const readAt = lookupsReadAt(kept.current);
  if (every === undefined || readAt === undefined) return undefined;
  return at - readAt < every || claimed(kept, at) ? kept.current : undefined;
}

/** What a check compares: the last read (this one's, where it read) with the read before and the fields vanished before that. */
type Compared = Pick<Kept, 'current' | 'previous' | 'vanished' | 'renamed'>;

/**
 * Reads the server as `how` says, claiming the read first so two checks of one source read it once;
 * `judge` compares, and a read is kept with the renames it found. Returns what was compared.
 */
async function readAndJudge(
  source: ResoSource,
  feed: FeedConfig,
  deps: DriftDeps,
  how: DriftRead,
  records: string | undefined,
  judge: (compared: Compared, kept: Partial<Kept>) => Comparison,
): Promise<{ kept: Partial<Kept>; read: boolean; comparison: Comparison; current: DictionarySnapshot }> {
  const id = keyOf(source);
  const now = (deps.now ?? (() => new Date()))();
  for (;;) {
    const raw = await deps.store.get(DRIFT_NAMESPACE, id);
    if (raw === undefined && (await carryFormer(deps.store, source, id))) continue;
    const kept = parseKept(raw);
    if (how === 'stored' || (how === 'due' && !due(kept, now.getTime()))) {
      if (!kept.current) throw noRead(feed, source);
      const compared = {
        current: kept.current,
        previous: kept.previous,
        vanished: kept.vanished,
        renamed: kept.renamed,
      };
      return { kept, read: false, comparison: judge(compared, kept), current: kept.current };
    }
    const claim = JSON.stringify({ ...kept, claimedAt: now.toISOString() });
    if (!(await deps.store.swap(DRIFT_NAMESPACE, id, raw, claim))) continue;
    let snapshot: DictionarySnapshot;
    try {
      snapshot = await readSnapshot(source, deps.ctx, wantsOf(source, feed, deps, kept, now.getTime()), now);
    } catch (err) {
      await deps.store.swap(DRIFT_NAMESPACE, id, claim, raw ?? JSON.stringify({ ...kept, claimedAt: undefined }));
      throw err;
    }
    const current = keptLists(snapshot, feed, valueFieldsOf(source, feed, deps));
    const compared: Compared = {
      current,
      // (the read before is compared by its fields, lists' names and sizes, and systems: its values are not kept)
      ...(kept.current && { previous: { ...kept.current, lookups: {} } }),
      ...(kept.current && { vanished: vanishedAfter(kept.vanished, kept.previous, kept.current) }),
    };
    const comparison = judge(compared, kept);
    const next: Kept = {
      ...compared,
      renamed: renamesOf(comparison.findings),
      records: { ...kept.records, ...(records !== undefined && { [feed.name]: records }) },
    };
    await deps.store.set(DRIFT_NAMESPACE, [[id, JSON.stringify(next)]]);
    return { kept, read: true, comparison, current };
  }
}

const noRead = (feed: FeedConfig, source: ResoSource) =>
  new ConfigError(
    `feed ${feed.name}: no read of ${displayUrl(source.url!)} is kept yet (--stored compares the last one): run feed drift without --stored to read the server`,
  );

/** The lookup values every feed of the same source maps. */
function valueFieldsOf(source: ResoSource, feed: FeedConfig, deps: DriftDeps): string[] {
  const id = sourceId(source);
  const sameSource = (deps.siblings ?? []).filter(
    (f) => f !== feed && f.name !== feed.name && liveResoSource(f) && sourceId(liveResoSource(f)!) === id,
  );
  return [feed, ...sameSource].flatMap(valueFields);
}

/**
 * What a read asks: the values of the lists the feeds map; where a field the mapping reads through a
 * map is not offered, the lists of the fields it does not read too (one may be the field renamed:
 * compare.ts); the Lookup resource not at all while a vendor's limit stands.
 */
function wantsOf(
  source: ResoSource,
  feed: FeedConfig,
  deps: DriftDeps,
  kept: Partial<Kept>,
  at: number,
): SnapshotWants {
  const mapped = mappedFields(feed.mapping);
  const reads = new Set(mapped.map((m) => m.field));
  const lookupsFrom = lookupsStanding(source, kept, at);
  return {
    valueFields: valueFieldsOf(source, feed, deps),
    moreLists: (fields, lookupOf) =>
      mapped.some((m) => m.covers && !(m.field in fields))
        ? Object.keys(fields)
            .filter((f) => !reads.has(f) && lookupOf[f] !== undefined)
            .map((f) => lookupOf[f]!)
        : [],
    ...(lookupsFrom && { lookupsFrom }),
  };
}

/**
 * The read as kept: the lists of the fields the feeds map, and of the others only those whose values
 * a map of a field the server lacks covers, half of them at least (what a likely rename is found by:
 * compare.ts coversList); the rest go.
 */
function keptLists(snapshot: DictionarySnapshot, feed: FeedConfig, valueFields: readonly string[]): DictionarySnapshot {
  const keep = new Set(valueFields.map((f) => snapshot.lookupOf[f]));
  const missing = mappedFields(feed.mapping).filter((m) => m.covers && !(m.field in snapshot.fields));
  const kept = (name: string) =>
    keep.has(name) || missing.some((m) => coversList(snapshot.lookups[name] ?? [], m.covers!));
  const names = Object.keys(snapshot.lookups).filter(kept);
  return {
    ...snapshot,
    lookups: Object.fromEntries(names.map((n) => [n, snapshot.lookups[n]!])),
    ...(snapshot.lookupSizes && {
      lookupSizes: Object.fromEntries(
        Object.entries(snapshot.lookupSizes).filter(([n]) => keep.has(n) || names.includes(n)),
      ),
    }),
  };
}

/** Fields whose values the check needs: those the mapping reads through a map. */
function valueFields(feed: FeedConfig): string[] {
  return mappedFields(feed.mapping)
    .filter((m) => m.covers)
    .map((m) => m.field);
}

/** The feed's source when it is a live RESO server (the only kind with a dictionary to read). */
export function liveResoSource(feed: FeedConfig): ResoSource | undefined {
  return feed.source.kind === 'reso' && feed.source.url ? feed.source : undefined;
}

export async function checkDrift(feed: FeedConfig, deps: DriftDeps, how: DriftRead = 'due'): Promise<DriftReport> {
  const source = liveResoSource(feed);
  if (!source)
    throw new ConfigError(
      `feed ${feed.name} is not read from a RESO server (source.kind reso with a url): feed drift reads a server's $metadata`,
    );
  const records = await recordSystem(deps.store, feed);
  const { kept, read, comparison, current } = await readAndJudge(source, feed, deps, how, records, (compared, before) =>
    compareDictionary({
      mapped: mappedFields(feed.mapping),
      ...compared,
      systems: { configured: source.originatingSystem, records, before: before.records?.[feed.name] },
    }),
  );
  const { findings, notOffered, capped } = comparison;
  return {
    feed: feed.name,
    source: displayUrl(source.url!),
    how,
    read,
    readAt: current.readAt,
    nextReadAfter: new Date(Date.parse(current.readAt) + READ_EVERY_MS).toISOString(),
    checked: { metadata: true, values: current.valuesFrom },
    ...lookupLimit(source, current),
    requests: read ? current.requests : 0,
    findings,
    notOffered,
    capped,
    firstRead: (read ? kept.current : kept.previous) === undefined,
  };
}

/** Where the Lookup values compared were read before `$metadata` (a vendor's limit on Lookup reads): when, and when next. */
function lookupLimit(source: ResoSource, current: DictionarySnapshot): Pick<DriftReport, 'lookups'> {
  const every = vendorProfile(source.vendor).lookupEveryMs;
  if (every === undefined || current.lookupsReadAt === undefined) return {};
  const profile = vendorProfile(source.vendor);
  return {
    lookups: {
      readAt: current.lookupsReadAt,
      nextReadAfter: new Date(Date.parse(current.lookupsReadAt) + every).toISOString(),
      limit: `${profile.title} asks that its Lookup resource be read at most once in ${every / 3_600_000} h`,
    },
  };
}
