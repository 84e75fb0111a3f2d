// The MLS roster beside a RESO feed (source.related: Member, Office; docs/configuration.md):
// - each resource is pulled as Property is (reso-reader.ts: the vendor profile's rules, MLS Grid's
//   OriginatingSystemName term and `MlgCanView eq true` on the first pull, its paging and page size),
//   incrementally by ModificationTimestamp from its own mark, before the Property records are read;
//   its pages are counted as `Member` / `Office` in the read's tally, in the source's shared budget.
//   A no-change pull is one request; the first pull pages the resource once. Its filter and select
//   are not the feed's (they name Property fields); a record with MlgCanView false goes from the store;
// - the records kept are their contact fields only (roster-contacts.ts), in the source's state, a copy
//   per lane (FeedContext.state, namespaces roster:Member and roster:Office); the reader hands back
//   each lane's difference (OpenedFeed.state) and the marks inside the feed's own mark (`related`), and
//   the sync commits a lane's difference with that lane's mark: a lane's copy and its roster marks move
//   together, so a lane whose run failed reads the changes again from its old marks, and its
//   listings are asked for again. A full roster pull drops every stored key it did not read;
// - every Property record read is given the current contact of the agents and offices it names;
// - the listings naming a roster record that changed (its contact differs from a lane's copy) or went,
//   in an incremental run, are asked for
//   by ListAgentKey / CoListAgentKey / ListOfficeKey / CoListOfficeKey (the feed's lookup,
//   reso-confirm.ts: batched within the URL and `or` limits, within source.maxPages and the budget;
//   where the vendor cannot filter on those fields — MLS Grid — through one keys-only read of the
//   feed and its searchable ListingId), and read again like changed records, so the new contact
//   reaches them with no Property change. A listing read in the pull already is not asked for.
//   The asking is bounded per run: ASK_CHUNK roster records a lookup, lookups while their requests
//   stay within source.maxPages; the records not reached wait in the feed's mark (`related.waiting`,
//   at most MAX_WAITING a resource; past that the next run reads the Property feed whole) and are
//   asked for first next run, and the run's source warnings say so, naming the roster;
// - a run with no roster mark stored for a resource (the first, or `related` just set) reads the
//   Property feed whole, so every listing gets its roster contact.
// - every record that reaches the mapping gets them, however it was read: a pull's, an EntityEvent
//   poll's or a push's fetch by key, a listing asked again here, one fetched by key through the
//   feed's lookup (an open-house re-fetch, the sync's confirmation: joinedLookup), a reconcile's.
// A reconcile (keys only) and a push pull no roster: the records they fetch get the lanes' copies'
// contacts, and the marks stored go on unchanged. A read with no store handed in (`feed preview`) pulls the
// roster whole.
import { FeedReadError } from '../../errors.js';
import type { ResoSource } from '../config-schema.js';
import { joinedLookup, overlayFeed } from '../feed-overlay.js';
import { byLane, laneNamespace, withInnerState } from '../source-state.js';
import type { FeedContext, FeedItem, KeyAsk, OpenedFeed, SourceState } from '../types.js';
import { openReso } from './reso-reader.js';
import { warnUnusableMark } from './stored-mark.js';
import type { RequestTally } from './reso-requests.js';
import {
  contactOf,
  ROSTER_KEY,
  ROSTER_RESOURCES,
  ROSTER_ROLES,
  rosterDifference,
  withContacts,
  type Contact,
  type RosterPull,
  type RosterResource,
  type RosterStore,
} from './roster-contacts.js';

/** The source state namespace a lane's copy of a roster resource is kept in (FeedContext.state). */
const rosterState = (resource: RosterResource) => `roster:${resource}`;

/** Where the sync keeps a lane's copy of a roster resource (a person opening the store looks there). */
export const rosterNamespace = (lane: string, resource: RosterResource) => laneNamespace(rosterState(resource), lane);

/** The mark of a roster pull that read no record: the next one asks from the start again (cheap while the resource is empty). */
const FROM_START = { ts: '1970-01-01T00:00:00.000Z' };

/** Roster records whose listings one lookup asks for: a few requests each (a batch per role's field), so a run's asking stops near source.maxPages. */
const ASK_CHUNK = 20;
/** Roster records a resource may have waiting for their listings to be asked; past it the next run reads the Property feed whole. */
export const MAX_WAITING = 10_000;

/** the roster marks by resource, and `waiting`: the records whose listings are still to be asked for */
type RelatedMarks = Partial<Record<RosterResource, unknown>> & { waiting?: Partial<Record<RosterResource, string[]>> };

/** The state of a read with no store (`feed preview`, `feed explain`): no lane, so no copy to start from and nothing handed back. */
const NO_STORE: SourceState = { lanes: [], copies: () => Promise.resolve([]), lookup: () => Promise.resolve([]) };

/** The roster resources a source replicates (source.related), in order. */
export function rosterResources(source: ResoSource): RosterResource[] {
  return ROSTER_RESOURCES.filter((r) => source.related.includes(r));
}

/** A feed opened with its roster pulled first, its records given their roster contacts, and the listings of changed roster records read again. */
export function openWithRoster(
  feedName: string,
  source: ResoSource,
  ctx: FeedContext,
  open: (ctx: FeedContext) => OpenedFeed,
  tally: RequestTally,
): OpenedFeed {
  const resources = rosterResources(source);
  const { marks: stored, why, whole } = storedMarks(ctx.mark);
  if (resources.length === 0 || !source.url) return keepingMarks(open(ctx), stored);
  /** `opened`, its read's warnings saying the roster marks stored could not be used, if so */
  const said = <F extends OpenedFeed>(opened: F): F => {
    if (why !== undefined)
      warnUnusableMark(ctx, feedName, opened.stats?.warnings, {
        which: whole ? 'RESO high-water mark' : `roster marks (related: ${resources.join(', ')})`,
        why,
        instead: ctx.ask
          ? 'this read pulls no roster: its records get the contacts the lanes stored'
          : `${resources.join(' and ')} ${resources.length > 1 ? 'are' : 'is'} pulled whole, and the feed with ${resources.length > 1 ? 'them' : 'it'} (a full pull)`,
      });
    return opened;
  };
  // (a read with no store handed in, `feed preview`, pulls the roster whole, so it maps as a sync does)
  const own: SourceState = ctx.state ?? NO_STORE;
  const named = new Set(resources);
  // (a reconcile or a push pulls no roster: the records it fetches by key get the lanes' copies'
  // contacts; a push has no mark to pull from, so it would pull the roster whole for a few keys)
  if (ctx.ask) return withStoredRoster(said(open(ctx)), own, named, stored);
  let copies: readonly RosterStore[] | undefined;
  const loaded = async () => (copies ??= await rosterCopies(own));
  // the contacts the records get: the copies' until this run's pull is read, then the pull's first
  let view: ContactView | undefined;
  let learnedState: OpenedFeed['state'];
  const wholeFeed = !ctx.full && resources.some((r) => stored[r] === undefined);
  const { waiting: _waiting, ...kept } = stored;
  const inner = said(open(wholeFeed ? { ...ctx, full: true } : ctx));
  const learned: RosterPull[] = [];
  const marks: RelatedMarks = kept;
  let done = false;

  async function* items(): AsyncIterable<FeedItem> {
    const held = await loaded();
    for (const resource of resources) {
      const pulled = await pullRoster(feedName, source, ctx, { resource, mark: stored[resource], tally });
      learned.push(pulled.pull);
      marks[resource] = pulled.mark;
    }
    const contact = (view = rosterView(held, learned));
    const enrich = (item: FeedItem): FeedItem => withRoster(item, named, contact);
    // the records whose listings wait to be asked for: those left from the last run first
    const queue = waitingFirst(stored.waiting ?? {}, changedKeys(held, learned));
    // the keys read, to ask for no listing twice: only where listings will be asked for (an incremental pull; a full one holds every listing)
    const read = new Set<string>();
    for await (const item of inner.items) {
      if (queue.length && inner.mode === 'incremental' && item.position.id !== undefined) read.add(item.position.id);
      yield enrich(item);
    }
    const lookup = inner.mode === 'incremental' && queue.length ? inner.lookup : undefined;
    if (lookup) {
      const warnings = inner.stats?.warnings;
      for await (const item of askAgain(feedName, source, ctx, { lookup, queue, read, marks, tally, warnings }))
        yield enrich(item);
    }
    done = true;
  }

  return overlayFeed(inner, {
    items: items(),
    // a record fetched by key (an open-house re-fetch over this layer, the sync's confirmation) gets its roster contacts too
    lookup: joinedLookup(inner.lookup, async (item) =>
      withRoster(item, named, (view ??= rosterView(await loaded(), []))),
    ),
    get mark() {
      const m = inner.mark;
      return m === undefined || !done ? undefined : withRelated(m, marks);
    },
    get state() {
      // (each lane's difference, worked out once: the sync asks lane by lane)
      learnedState ??= done
        ? byLane(own.lanes, (i) =>
            rosterDifference(copies![i]!, learned).map((d) => ({
              ns: rosterState(d.resource),
              set: d.set,
              delete: d.delete,
            })),
          )
        : undefined;
      return withInnerState(inner, learnedState);
    },
  });
}

type ContactView = (resource: RosterResource, key: string) => Contact | undefined;

/**
 * The one place a record read or fetched gets its roster contacts (roster-contacts.ts withContacts):
 * a pull's records, the listings asked again, those fetched by key through the feed's lookup, a
 * reconcile's. Not a record: as it is.
 */
function withRoster(item: FeedItem, named: ReadonlySet<RosterResource>, contact: ContactView): FeedItem {
  return item.kind === 'record' ? { ...item, data: withContacts(item.data, named, contact) } : item;
}

/** The listings of the queued roster records read again, within source.maxPages; those not reached wait in `marks`. */
async function* askAgain(
  feedName: string,
  source: ResoSource,
  ctx: FeedContext,
  run: {
    lookup: NonNullable<OpenedFeed['lookup']>;
    queue: ReadonlyArray<[RosterResource, string]>;
    read: Set<string>;
    marks: RelatedMarks;
    tally: RequestTally;
    warnings: string[] | undefined;
  },
): AsyncGenerator<FeedItem> {
  const { read, queue, marks } = run;
  const asked = { records: 0, listings: 0 };
  for await (const item of askInChunks(run.lookup, queue, { maxRequests: source.maxPages, tally: run.tally, asked })) {
    const id = item.position.id;
    if (id !== undefined && read.has(id)) continue;
    if (id !== undefined) read.add(id);
    asked.listings++;
    yield item;
  }
  const left = queue.slice(asked.records);
  const waiting = keepWaiting(left, marks, source.maxPages, run.warnings);
  if (waiting) marks.waiting = waiting;
  ctx.logger.info(
    { feed: feedName, listings: asked.listings },
    `${asked.listings} listings read again: an agent or office they name changed`,
  );
}

/** A reconcile's or a push's feed: no roster pulled, its records (those fetched by key) given the lanes' copies' contacts, the roster marks stored kept. */
function withStoredRoster(
  inner: OpenedFeed,
  state: SourceState,
  named: ReadonlySet<RosterResource>,
  stored: RelatedMarks,
): OpenedFeed {
  let view: ContactView | undefined;
  const contacts = async () => (view ??= rosterView(await rosterCopies(state), []));
  async function* items(): AsyncIterable<FeedItem> {
    for await (const item of inner.items) yield withRoster(item, named, await contacts());
  }
  return keepingMarks(
    overlayFeed(inner, {
      items: items(),
      lookup: joinedLookup(inner.lookup, async (item) => withRoster(item, named, await contacts())),
    }),
    stored,
  );
}

/** Each lane's copy of the roster, as its last successful run left it. */
async function rosterCopies(state: SourceState): Promise<RosterStore[]> {
  const member = await state.copies(rosterState('Member'));
  const office = await state.copies(rosterState('Office'));
  return state.lanes.map((_, i) => ({ Member: member[i]!, Office: office[i]! }));
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
  const opened = openReso(
    feedName,
    rosterSource(source, resource),
    { ...ctx, mark },
    { tally: pull.tally, kind: resource },
  );
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
function rosterView(stores: readonly RosterStore[], learned: readonly RosterPull[]): ContactView {
  return (resource, key) => {
    const p = learned.find((l) => l.resource === resource);
    if (p?.removed.has(key)) return undefined;
    let text = p?.read.get(key);
    for (let i = 0; text === undefined && i < stores.length; i++) text = stores[i]![resource].get(key);
    return text === undefined ? undefined : (JSON.parse(text) as Contact);
  };
}

/** Each resource's records whose listings are to be asked for, the waiting ones first, once each. */
function waitingFirst(
  waiting: NonNullable<RelatedMarks['waiting']>,
  changed: ReadonlyMap<RosterResource, ReadonlySet<string>>,
): Array<[RosterResource, string]> {
  const out: Array<[RosterResource, string]> = [];
  for (const resource of ROSTER_RESOURCES) {
    for (const key of new Set([...(waiting[resource] ?? []), ...(changed.get(resource) ?? [])]))
      out.push([resource, key]);
  }
  return out;
}

/**
 * The listings naming the queued roster records, ASK_CHUNK records a lookup, lookup after lookup
 * while the requests they take (by key, and keys-only reads) stay within `maxRequests` (the next one
 * is not started when it would likely pass it; the first always is). `asked.records`: how many of
 * the queue were asked for.
 */
async function* askInChunks(
  lookup: NonNullable<OpenedFeed['lookup']>,
  queue: ReadonlyArray<[RosterResource, string]>,
  opts: { maxRequests: number; tally: RequestTally; asked: { records: number } },
): AsyncGenerator<FeedItem> {
  const used = () => (opts.tally.by.byKey ?? 0) + (opts.tally.by.keys ?? 0);
  const start = used();
  let last = 0;
  for (let at = 0; at < queue.length; at += ASK_CHUNK) {
    const spent = used() - start;
    if (at > 0 && spent + last > opts.maxRequests) return;
    const chunk = queue.slice(at, at + ASK_CHUNK);
    const keys = new Map<RosterResource, Set<string>>();
    for (const [resource, key] of chunk) keys.set(resource, (keys.get(resource) ?? new Set()).add(key));
    try {
      for await (const batch of lookup.find(namingAsks(keys))) yield* batch;
    } catch (err) {
      if (!(err instanceof FeedReadError)) throw err;
      const resources = [...keys.keys()].join(' and ');
      throw new FeedReadError(
        `${resources} roster: asking for the listings of ${chunk.length} changed records failed: ${err.message}`,
        err.place,
        err.retryable,
        {
          cause: err,
        },
      );
    }
    last = used() - start - spent;
    opts.asked.records = at + chunk.length;
  }
}

/**
 * The records whose listings were not asked for this run, to wait in the mark; a warning per
 * resource naming the roster. Past MAX_WAITING, the resource's roster mark is dropped instead: the
 * next run reads the Property feed whole, which gives every listing its contact.
 */
function keepWaiting(
  left: ReadonlyArray<[RosterResource, string]>,
  marks: RelatedMarks,
  maxPages: number,
  warnings: string[] | undefined,
): RelatedMarks['waiting'] | undefined {
  if (!left.length) return undefined;
  const waiting: NonNullable<RelatedMarks['waiting']> = {};
  for (const [resource, key] of left) (waiting[resource] ??= []).push(key);
  for (const resource of ROSTER_RESOURCES) {
    const keys = waiting[resource];
    if (!keys) continue;
    if (keys.length > MAX_WAITING) {
      delete waiting[resource];
      delete marks[resource];
      warnings?.push(
        `${resource} roster: ${keys.length} changed records still have listings to be read again, more than ${MAX_WAITING}: the next run reads the feed whole`,
      );
    } else {
      warnings?.push(
        `${resource} roster: asking for the listings of its changed records takes more than source.maxPages (${maxPages}) requests a run: ${keys.length} records' listings are read again next run`,
      );
    }
  }
  return Object.keys(waiting).length ? waiting : undefined;
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
/** The roster marks stored in the feed's mark (`related`); `why` one stored cannot be used (none stored yet is not a fault). */
function storedMarks(mark: string | undefined): { marks: RelatedMarks; why?: unknown; whole?: boolean } {
  if (mark === undefined) return { marks: {} };
  let parsed: unknown;
  try {
    parsed = JSON.parse(mark);
  } catch (err) {
    // (the feed's mark as a whole: said here, as the read it forces whole does not read it)
    return { marks: {}, why: err, whole: true };
  }
  const related = typeof parsed === 'object' && parsed !== null && 'related' in parsed ? parsed.related : undefined;
  if (related === undefined) return { marks: {} };
  if (typeof related !== 'object' || related === null)
    return { marks: {}, why: `\`related\` is ${JSON.stringify(related)}, not an object of marks by resource` };
  const out: RelatedMarks = {};
  for (const r of ROSTER_RESOURCES) if (r in related) out[r] = (related as Record<string, unknown>)[r];
  const waiting = 'waiting' in related ? waitingOf(related.waiting) : undefined;
  if (waiting) out.waiting = waiting;
  return { marks: out };
}

/** `related.waiting` as stored: each resource's keys, strings only, at most MAX_WAITING */
function waitingOf(v: unknown): RelatedMarks['waiting'] | undefined {
  if (typeof v !== 'object' || v === null) return undefined;
  const out: NonNullable<RelatedMarks['waiting']> = {};
  for (const r of ROSTER_RESOURCES) {
    const keys: unknown = (v as Record<string, unknown>)[r];
    if (Array.isArray(keys)) out[r] = keys.filter((k): k is string => typeof k === 'string').slice(0, MAX_WAITING);
  }
  return Object.keys(out).length ? out : undefined;
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
