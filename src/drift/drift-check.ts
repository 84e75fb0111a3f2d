// `feed drift` and the worker's daily check: a RESO feed's mapping against its source's dictionary
// ($metadata, and the Lookup resource where offered), before a sync rejects anything. The server
// is read at most once in READ_EVERY per source (MLS Grid asks that its Lookup resource be read at
// most once a day; the docs of src/feeds/reso/reso-lookups.ts): when it was read, with what it
// said then and the read before, is kept in the state store (namespace `drift`, keyed by
// snapshot.ts sourceId), and a check within the day compares what is kept, sending nothing. A
// check reads no listing record and writes nothing to a chatbot; what the feed's last records
// carried (their OriginatingSystemName) it takes from the sync's stored marks.
import { z } from 'zod';
import type { FeedConfig } from '../config/schema.js';
import { ConfigError } from '../errors.js';
import type { ResoSource } from '../feeds/config-schema.js';
import { displayUrl } from '../feeds/source/http.js';
import type { FeedContext } from '../feeds/types.js';
import { mappedFields } from '../mapping/mapped-fields.js';
import type { KvStore } from '../state/kv-store.js';
import { lanesOf, MARK_NAMESPACE } from '../sync/index.js';
import { compareDictionary, type DriftFinding } from './compare.js';
import { readSnapshot, sourceId, type DictionarySnapshot } from './snapshot.js';

export const DRIFT_NAMESPACE = 'drift';
/** how long a read of a source's dictionary stands before the next check reads it again */
export const READ_EVERY_MS = 24 * 3_600_000;
/** a check that began reading this long ago and never stored its read is taken as dead */
const CLAIM_MS = 10 * 60_000;

export interface DriftReport {
  feed: string;
  /** the source's $metadata URL (credentials masked) */
  source: string;
  /** whether this check read the server, or compared what the read of `readAt` kept */
  read: boolean;
  readAt: string;
  /** the next check after this time reads the server again */
  nextReadAfter: string;
  /** what was compared: `$metadata` alone, or with the Lookup resource's (or $metadata's enum) values */
  checked: { metadata: true; values: DictionarySnapshot['valuesFrom'] };
  /** requests this check sent (0 within the day) */
  requests: number;
  findings: DriftFinding[];
  notOffered: string[];
  /** lookup lists longer than the values kept: the first `compared` were compared with the mapping, the rest counted (and digested) */
  capped: Array<{ lookup: string; values: number; compared: number }>;
  /** no read before this one to compare with: renames and removals are found from the next read on */
  firstRead: boolean;
}

const Kept = z.object({
  current: z.custom<DictionarySnapshot>((v) => typeof v === 'object' && v !== null && 'readAt' in v && 'fields' in v),
  previous: z.custom<DictionarySnapshot>((v) => typeof v === 'object' && v !== null && 'readAt' in v).optional(),
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
    return {};
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

/** Whether the kept read is due again, or another check is reading now. */
const due = (kept: Partial<Kept>, at: number) =>
  (!kept.current || at - Date.parse(kept.current.readAt) >= READ_EVERY_MS) &&
  !(kept.claimedAt && at - Date.parse(kept.claimedAt) < CLAIM_MS);

/** Reads the server when due, claiming the read first so two checks of one source read it once. */
async function freshRead(
  source: ResoSource,
  feed: FeedConfig,
  deps: DriftDeps,
  records: string | undefined,
): Promise<{ kept: Partial<Kept>; read: boolean }> {
  const id = sourceId(source);
  const now = (deps.now ?? (() => new Date()))();
  for (;;) {
    const raw = await deps.store.get(DRIFT_NAMESPACE, id);
    const kept = parseKept(raw);
    if (!due(kept, now.getTime())) return { kept, read: false };
    const claim = JSON.stringify({ ...kept, claimedAt: now.toISOString() });
    if (!(await deps.store.swap(DRIFT_NAMESPACE, id, raw, claim))) continue;
    let snapshot: DictionarySnapshot;
    try {
      const sameSource = (deps.siblings ?? []).filter(
        (f) => f !== feed && f.name !== feed.name && liveResoSource(f) && sourceId(liveResoSource(f)!) === id,
      );
      snapshot = await readSnapshot(source, deps.ctx, [feed, ...sameSource].flatMap(valueFields), now);
    } catch (err) {
      await deps.store.swap(DRIFT_NAMESPACE, id, claim, raw ?? JSON.stringify({ ...kept, claimedAt: undefined }));
      throw err;
    }
    const next: Kept = {
      current: snapshot,
      // (the read before is compared by its fields, lists' names and sizes, and systems: its values are not kept)
      ...(kept.current && { previous: { ...kept.current, lookups: {} } }),
      records: { ...kept.records, ...(records !== undefined && { [feed.name]: records }) },
    };
    // (the entry of the same source kept under its URL with credentials, before they were left out of it, goes)
    const former = sourceId(source, source.url!);
    await deps.store.apply([
      { ns: DRIFT_NAMESPACE, set: [[id, JSON.stringify(next)]], delete: former === id ? [] : [former] },
    ]);
    return { kept: { ...next, records: kept.records ?? {} }, read: true };
  }
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

export async function checkDrift(feed: FeedConfig, deps: DriftDeps): Promise<DriftReport> {
  const source = liveResoSource(feed);
  if (!source)
    throw new ConfigError(
      `feed ${feed.name} is not read from a RESO server (source.kind reso with a url): feed drift reads a server's $metadata`,
    );
  const records = await recordSystem(deps.store, feed);
  const { kept, read } = await freshRead(source, feed, deps, records);
  const current = kept.current!;
  const { findings, notOffered, capped } = compareDictionary({
    mapped: mappedFields(feed.mapping),
    current,
    previous: kept.previous,
    systems: { configured: source.originatingSystem, records, before: kept.records?.[feed.name] },
  });
  return {
    feed: feed.name,
    source: displayUrl(source.url!),
    read,
    readAt: current.readAt,
    nextReadAfter: new Date(Date.parse(current.readAt) + READ_EVERY_MS).toISOString(),
    checked: { metadata: true, values: current.valuesFrom },
    requests: read ? current.requests : 0,
    findings,
    notOffered,
    capped,
    firstRead: kept.previous === undefined,
  };
}
