// The MLS roster beside a RESO feed (source.related: Member, Office; docs/configuration.md):
// - each resource is pulled as Property is (reso-reader.ts: the vendor profile's rules, MLS Grid's
//   OriginatingSystemName term and `MlgCanView eq true` on the first pull, its paging and page size),
//   incrementally by ModificationTimestamp from its own mark, before the Property records are read;
//   its pages are counted as `Member` / `Office` in the read's tally, in the source's shared budget.
//   A no-change pull is one request; the first pull pages the resource once. Its filter and select
//   are not the feed's (they name Property fields); a record with MlgCanView false goes from the store;
// - the records kept are their contact fields only (roster-contacts.ts), in the state store, a copy
//   per lane (FeedContext.roster: each lane's, handed in by the sync); the reader hands back what it
//   pulled (OpenedFeed.roster) and the marks inside the feed's own mark (`related`), and the sync
//   commits each lane's difference with that lane's mark: a lane's copy and its roster marks move
//   together, so a lane whose run failed reads the changes again from its old marks, and its
//   listings are asked for again. A full roster pull drops every stored key it did not read;
// - every Property record read is given the current contact of the agents and offices it names;
// - the listings naming a roster record that changed (its contact differs from a lane's copy) or went,
//   in an incremental run, are asked for
//   by ListAgentKey / CoListAgentKey / ListOfficeKey / CoListOfficeKey (the feed's lookup,
//   reso-confirm.ts: batched within the URL and `or` limits, within source.maxPages and the budget;
//   where the vendor cannot filter on those fields — MLS Grid — through one keys-only read of the
//   feed and its searchable ListingId), and read again like changed records, so the new contact
//   reaches them with no Property change. A listing read in the pull already is not asked for;
// - a run with no roster mark stored for a resource (the first, or `related` just set) reads the
//   Property feed whole, so every listing gets its roster contact.
// A reconcile (keys only) and a read with no store handed in (feed preview) pull no roster; the
// marks stored go on unchanged.
import type { ResoSource } from '../config-schema.js';
import { overlayFeed } from '../feed-overlay.js';
import type { FeedContext, FeedItem, KeyAsk, OpenedFeed, RosterPull, RosterStore } from '../types.js';
import { openReso } from './reso-reader.js';
import type { RequestTally } from './reso-requests.js';
import { contactOf, ROSTER_KEY, ROSTER_RESOURCES, ROSTER_ROLES, withContacts, type Contact, type RosterResource } from './roster-contacts.js';

/** The mark of a roster pull that read no record: the next one asks from the start again (cheap while the resource is empty). */
const FROM_START = { ts: '1970-01-01T00:00:00.000Z' };

type RelatedMarks = Partial<Record<RosterResource, unknown>>;

/** The roster resources a source replicates (source.related), in order. */
export function rosterResources(source: ResoSource): RosterResource[] {
  return ROSTER_RESOURCES.filter((r) => source.related.includes(r));
}

/** A feed opened with its roster pulled first, its records given their roster contacts, and the listings of changed roster records read again. */
export function openWithRoster(feedName: string, source: ResoSource, ctx: FeedContext, open: (ctx: FeedContext) => OpenedFeed, tally: RequestTally): OpenedFeed {
  const resources = rosterResources(source);
  const stored = storedMarks(ctx.mark);
  const stores = ctx.roster;
  if (!stores || resources.length === 0 || !source.url || ctx.reconcile) return keepingMarks(open(ctx), stored);
  const copies: readonly RosterStore[] = stores;
  const wholeFeed = !ctx.full && resources.some((r) => stored[r] === undefined);
  const inner = open(wholeFeed ? { ...ctx, full: true } : ctx);
  const learned: RosterPull[] = [];
  const marks: RelatedMarks = { ...stored };
  let done = false;

  async function* items(): AsyncIterable<FeedItem> {
    for (const resource of resources) {
      const pulled = await pullRoster(feedName, source, ctx, { resource, mark: stored[resource], tally });
      learned.push(pulled.pull);
      marks[resource] = pulled.mark;
    }
    const contact = rosterView(copies, learned);
    const named = new Set(resources);
    const enrich = (item: FeedItem): FeedItem => (item.kind === 'record' ? { ...item, data: withContacts(item.data, named, contact) } : item);
    const asks = namingAsks(changedKeys(copies, learned));
    // the keys read, to ask for no listing twice: only where listings will be asked for (an incremental pull; a full one holds every listing)
    const read = new Set<string>();
    for await (const item of inner.items) {
      if (asks.length && inner.mode === 'incremental' && item.position.id !== undefined) read.add(item.position.id);
      yield enrich(item);
    }
    if (inner.mode === 'incremental' && inner.lookup && asks.length) {
      let again = 0;
      for await (const batch of inner.lookup.find(asks)) {
        for (const item of batch) {
          const id = item.position.id;
          if (id !== undefined && read.has(id)) continue;
          if (id !== undefined) read.add(id);
          again++;
          yield enrich(item);
        }
      }
      ctx.logger.info({ feed: feedName, listings: again }, `${again} listings read again: an agent or office they name changed`);
    }
    done = true;
  }

  return overlayFeed(inner, {
    items: items(),
    get mark() {
      const m = inner.mark;
      return m === undefined || !done ? undefined : withRelated(m, marks);
    },
    get roster() {
      return done ? learned : undefined;
    },
  });
}

/** One roster resource pulled from its mark: each record read (its contact), the keys to remove, and the mark reached. */
async function pullRoster(
  feedName: string,
  source: ResoSource,
  ctx: FeedContext,
  pull: { resource: RosterResource; mark: unknown; tally: RequestTally },
): Promise<{ pull: RosterPull; mark: unknown }> {
  const { resource } = pull;
  const mark = pull.mark === undefined ? undefined : JSON.stringify(pull.mark);
  const opened = openReso(feedName, rosterSource(source, resource), { ...ctx, mark }, { tally: pull.tally, kind: resource });
  const read = new Map<string, string>();
  const removed = new Set<string>();
  for await (const item of opened.items) {
    const key = item.position.id;
    if (key === undefined || item.kind === 'error') continue;
    if (item.kind === 'removed') {
      read.delete(key);
      removed.add(key);
    } else {
      removed.delete(key);
      read.set(key, JSON.stringify(contactOf(resource, item.data)));
    }
  }
  const reached = opened.mark === undefined ? (pull.mark ?? FROM_START) : (JSON.parse(opened.mark) as unknown);
  return { pull: { resource, read, removed, full: opened.mode === 'full' }, mark: reached };
}

/**
 * The keys of each resource whose contact the lanes' copies do not all hold: read with another
 * contact than a copy's, removed while a copy holds it, or (a full pull) held by a copy and not read.
 * A record read again unchanged (the mark's margin, a change to a field not kept) is none of them.
 */
function changedKeys(stores: readonly RosterStore[], learned: readonly RosterPull[]): Map<RosterResource, Set<string>> {
  const out = new Map<RosterResource, Set<string>>();
  for (const p of learned) {
    const keys = new Set<string>();
    const copies = stores.map((s) => s[p.resource]);
    for (const [key, contact] of p.read) if (copies.some((c) => c.get(key) !== contact)) keys.add(key);
    for (const key of p.removed) if (copies.some((c) => c.has(key))) keys.add(key);
    if (p.full) for (const c of copies) for (const key of c.keys()) if (!p.read.has(key)) keys.add(key);
    out.set(p.resource, keys);
  }
  return out;
}

/** The source as a roster resource is pulled: its resource and key, at the service root, without the feed's Property filter, select and expands. */
function rosterSource(source: ResoSource, resource: RosterResource): ResoSource {
  const root = source.url!.replace(/\/+$/, '');
  const url = root.endsWith(`/${source.resource}`) ? root.slice(0, -source.resource.length - 1) : root;
  const { filter: _f, select: _s, top: _t, ...rest } = source;
  return {
    ...rest,
    url,
    resource,
    keyField: ROSTER_KEY[resource],
    incremental: true,
    changes: 'timestamps',
    expandMedia: false,
    expandOpenHouse: false,
    photosTimestampField: null,
    related: [],
  };
}

/** A roster record's contact now: this run's pull first, then the first lane's copy that holds it (a record not read is unchanged since the oldest mark). */
function rosterView(stores: readonly RosterStore[], learned: readonly RosterPull[]): (resource: RosterResource, key: string) => Contact | undefined {
  return (resource, key) => {
    const p = learned.find((l) => l.resource === resource);
    if (p?.removed.has(key)) return undefined;
    let text = p?.read.get(key);
    for (let i = 0; text === undefined && i < stores.length; i++) text = stores[i]![resource].get(key);
    return text === undefined ? undefined : (JSON.parse(text) as Contact);
  };
}

/** The Property fields to ask for the listings naming a changed roster record, and the keys. */
function namingAsks(changed: ReadonlyMap<RosterResource, ReadonlySet<string>>): KeyAsk[] {
  const asks: KeyAsk[] = [];
  for (const role of ROSTER_ROLES) {
    const values = [...(changed.get(role.resource) ?? [])];
    if (values.length) asks.push({ field: role.keyField, values, optional: true });
  }
  return asks;
}

/** The roster marks a feed mark holds (`related`), by resource. */
function storedMarks(mark: string | undefined): RelatedMarks {
  if (mark === undefined) return {};
  try {
    const parsed: unknown = JSON.parse(mark);
    const related = typeof parsed === 'object' && parsed !== null && 'related' in parsed ? parsed.related : undefined;
    if (typeof related !== 'object' || related === null) return {};
    const out: RelatedMarks = {};
    for (const r of ROSTER_RESOURCES) if (r in related) out[r] = (related as Record<string, unknown>)[r];
    return out;
  } catch {
    return {};
  }
}

function withRelated(mark: string, related: RelatedMarks): string {
  if (Object.keys(related).length === 0) return mark;
  return JSON.stringify({ ...(JSON.parse(mark) as object), related });
}

/** A feed read without its roster: the roster marks stored go on in its mark. */
function keepingMarks(inner: OpenedFeed, stored: RelatedMarks): OpenedFeed {
  if (Object.keys(stored).length === 0) return inner;
  return overlayFeed(inner, {
    get mark() {
      const m = inner.mark;
      return m === undefined ? undefined : withRelated(m, stored);
    },
  });
}
