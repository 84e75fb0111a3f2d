// Steps "read" and "route" of a feed (docs/design.md): the feed is read once, whatever the number
// of its lanes, and each record goes to the lanes whose `where` it matches (all of them for a
// feed with one chatbot). A record is mapped at most once, the first time a lane needs it; a
// lane whose stamp shows the record in step never asks. The lanes' jobs come out as one stream
// for the write pool (execute.ts, runPool). A record no lane takes is counted "routed nowhere";
// a lane whose chatbot holds a record that now goes elsewhere deletes its copy (an agent change).
import { inBatches } from '../../feeds/item-batches.js';
import type { FeedItem } from '../../feeds/types.js';
import type { KeyedItem, MappedItem } from '../../mapping/types.js';
import { routeIndex } from '../../mapping/where.js';
import { refusalOf, type Refusal } from '../model/refusal.js';
import type { Executor, Job, LaneJob } from '../model/execution.js';
import type { Lane } from './lanes.js';
import type { PlannerSteps } from '../model/lane-planner.js';
import type { Mapped } from '../model/lane-tally.js';
import { readBesidePaging, type Early } from './beside-paging.js';
import type { MediaStep, MirrorEntry } from '../../media/index.js';
import type { DesiredListing, RememberedListing } from '../model/plan-types.js';
import type { PagingSoFar } from './beside-paging.js';
import type { KeyedFeed } from './keyed-feed.js';

const mirrorEntry = (entry: DesiredListing, item: FeedItem): MirrorEntry => ({
  key: entry.key,
  listing: entry.listing,
  record: item.kind === 'record' ? item.data : undefined,
});

/** A lane as the read step feeds it. */
export interface ReadingLane {
  lane: Lane;
  /** its planner, as the run hands it: a record planned comes to its write job */
  planner: PlannerSteps<Job>;
  executor: Executor;
  /** the chatbot's copies: whether it holds a key (a record routed elsewhere takes it away) */
  remote: { has(key: string): boolean; keys(): Iterable<string> };
}

export interface FeedRead {
  /**
   * Reads the feed while its lane's chatbot is still paged (a feed of one lane, every record
   * stamped): a record in step by its stamp with the one copy of its key paged so far is taken
   * there and then (remembered, not mapped: the planner's readEarly); any other waits, in its key's
   * order, for `jobs`, which plans it against the finished paging. Nothing is mapped, planned
   * against the paging or written before `paging.done`; at most WHILE_PAGING_HELD records wait
   * (the read pauses until pages come): beside-paging.ts. Returns once paging is done.
   */
  whilePaging(paging: PagingSoFar): Promise<void>;
  /** the read is not wanted after whilePaging (the lane's paging failed): the reader lets go of its source */
  close(): Promise<void>;
  /** the write jobs of every lane, in the order the records came (those whilePaging left first) */
  jobs: AsyncGenerator<LaneJob>;
  /** records read again after the feed ended (absences confirmed with the source), each carrying the key its confirmation read, through the lane alone */
  again(lane: ReadingLane, items: readonly KeyedItem[]): AsyncGenerator<LaneJob>;
  /** read to its end (known once `jobs` ended) */
  readonly done: boolean;
  /** the feed server refused our credentials: every lane fails, nothing more is asked of anyone (the run words it) */
  readonly auth: Refusal | undefined;
  readonly routedNowhere: number;
  readonly records: number;
}

export interface ReadFeedInput {
  feedName: string;
  /** the feed, its items carrying their keys */
  opened: KeyedFeed;
  lanes: readonly ReadingLane[];
  /** how many unmapped values the mapping met so far (a record that meets one gets no stamp) */
  unmappedSeen(): number;
  onRecords?(records: number): void;
  /** the feed was read to its end and every record planned (writes may still be in flight) */
  onEnd?(): void;
  /** maps a record (the feed's compiled mapping, counting what it replaced) */
  map(item: FeedItem): MappedItem;
  /** the media mirror (src/media/), between mapping and planning: listings wait in batches for their photos */
  media?: MediaStep;
  signal: AbortSignal;
}

/** Mapped listings whose photos are mirrored together (media mirror), before they are planned in feed order. */
const MEDIA_BATCH = 64;

/** A read entry of a lane waiting for the media step. */
interface Awaiting {
  lane: ReadingLane;
  entry: DesiredListing | RememberedListing;
  item: FeedItem;
}

/** How often, at most, the records read are reported between thousands (a small feed read while its writes are sent is slow). */
const PROGRESS_MS = 1000;

/**
 * Counts a record read, reporting the first (so a run's first write is never shown before any record
 * read), every thousandth, and the count once PROGRESS_MS has passed since the last report, looked at
 * every 16 records (a clock read a record costs a 100k feed a few ms).
 */
function countedEvery(ms: number, report: (records: number) => void, state: { records: number }) {
  let last = 0;
  let reported = 0;
  const tell = (n: number) => {
    last = Date.now();
    reported = n;
    report(n);
  };
  return {
    counted() {
      const n = ++state.records;
      if (n === 1 || n % 1000 === 0 || ((n & 15) === 0 && Date.now() - last >= ms)) tell(n);
    },
    /** the count read, whole, unless it was the last told */
    whole() {
      if (state.records !== reported) tell(state.records);
    },
  };
}

export function readFeed(input: ReadFeedInput): FeedRead {
  const { opened, lanes, media } = input;
  const state = { done: false, auth: undefined as Refusal | undefined, routedNowhere: 0, records: 0 };
  const mapOnce = mapperOf(input);
  const routes = routesOf(lanes);
  const waiting: Awaiting[] = [];
  const router: Router = { input, routes, mapOnce, waiting, state };
  // (a batch at a time where the reader has them: no promise per record)
  const batches = inBatches(opened.items)[Symbol.asyncIterator]();
  const early: Early = { held: [], failed: undefined };
  const { counted, whole } = countedEvery(PROGRESS_MS, (n) => input.onRecords?.(n), state);
  async function* jobs(): AsyncGenerator<LaneJob> {
    const routed: LaneJob[] = [];
    try {
      yield* routedJobs(router, { early, batches, counted }, routed);
    } catch (err) {
      // (a lane that failed a record: the jobs the lanes before it made of the record go first, as they came)
      while (routed.length) yield routed.shift()!;
      state.auth = refusalOf(err, input.feedName);
      for (const l of lanes) l.planner.collector.fail(err);
      if (state.auth) return;
      if (media && !input.signal.aborted) yield* salvage(media, waiting.splice(0));
    }
    // (the read has ended: its count told now, not after the window's last writes, which a small feed's all are)
    whole();
    for (const l of lanes) yield* drained(l);
    state.done = true;
    input.onEnd?.();
  }
  return {
    whilePaging: async (paging) => {
      if (lanes.length !== 1 || media) throw new Error('whilePaging: a feed of one lane without the media mirror');
      const lane = lanes[0]!;
      await readBesidePaging(
        lane,
        { ...input, batches, routes: (item) => routes.takes(lane, item), counted },
        paging,
        early,
      );
    },
    close: async () => {
      await batches.return?.();
    },
    jobs: jobs(),
    again: (l, items) => readAgain(l, items, routes, mapOnce, media),
    get done() {
      return state.done;
    },
    get auth() {
      return state.auth;
    },
    get routedNowhere() {
      return state.routedNowhere;
    },
    get records() {
      return state.records;
    },
  };
}

/**
 * Every record routed, in the order read (those the read beside the paging left first), and the
 * jobs they make, as they come; with the media step, a batch of entries waits for its photos.
 * `routed` is the caller's: what a record made before a lane failed on it is still there to yield.
 */
async function* routedJobs(
  r: Router,
  read: { early: Early; batches: AsyncIterator<KeyedItem[]>; counted(): void },
  routed: LaneJob[],
): AsyncGenerator<LaneJob> {
  const { media } = r.input;
  const { early, batches } = read;
  for (const item of early.held.splice(0)) {
    route(r, item, routed);
    while (routed.length) yield routed.shift()!;
  }
  if (early.failed) throw early.failed.err;
  for (let next = await batches.next(); !next.done; next = await batches.next()) {
    for (const item of next.value) {
      read.counted();
      route(r, item, routed);
      while (routed.length) yield routed.shift()!;
      if (media && r.waiting.length >= MEDIA_BATCH) yield* withPhotos(media, r.waiting.splice(0));
    }
  }
  if (media && r.waiting.length) yield* withPhotos(media, r.waiting.splice(0));
}

type MapOnce = (item: FeedItem) => Mapped;

/** What routing a record reads and counts. */
interface Router {
  input: ReadFeedInput;
  routes: ReturnType<typeof routesOf>;
  mapOnce: MapOnce;
  /** with the media step: the entries that wait for their photos */
  waiting: Awaiting[];
  state: { routedNowhere: number };
}

/**
 * One record to each lane it goes to: the jobs that come of it into `out` (with the media step its
 * entries wait instead). A function, not a generator: a rerun routes every record and most give no
 * job, and jobs()'s yield* of a generator costs promises and turns of the loop a record.
 */
function route(r: Router, item: KeyedItem, out: LaneJob[]): void {
  const { input, routes, waiting } = r;
  const map = once(r.mapOnce, item);
  let taken = false;
  for (const l of routes.lanesFor(item)) {
    // records only are routed: a removal or a broken record goes to every lane (each acts on its own copy)
    if (!routes.takes(l, item)) {
      if (item.kind === 'record') movedAway(l, item.key);
      continue;
    }
    taken = true;
    if (!input.media) {
      const job = l.planner.take(item, map);
      if (job) out.push({ executor: l.executor, job });
    } else {
      const entry = l.planner.read(item, map);
      if (entry) waiting.push({ lane: l, entry, item });
    }
  }
  if (!taken) r.state.routedNowhere++;
}

/** A record mapped (for the first lane's chatbot by input.map; each lane's planner sets its own SerialNumber), and whether it met no unmapped value. */
function mapperOf(input: ReadFeedInput): MapOnce {
  return (item) => {
    const before = input.unmappedSeen();
    const mapped: MappedItem = input.map(item);
    return { item: mapped, clean: input.unmappedSeen() === before };
  };
}

/** The record's mapping, done the first time a lane asks for it. */
function once(mapOnce: MapOnce, item: FeedItem): () => Mapped {
  let memo: Mapped | undefined;
  return () => (memo ??= mapOnce(item));
}

/** Where a feed's items go (routesOf). */
export interface Routes {
  /** whether lane `l` takes the item: a record goes where its lane's `where` matches, anything else everywhere */
  takes(l: ReadingLane, item: FeedItem): boolean;
  /**
   * the lanes an item concerns, in order: every lane, but of a feed routed to several, a record's
   * are those that take it and those whose chatbot holds its key (a copy moved away); to any other
   * lane the record is nothing
   */
  lanesFor(item: KeyedItem): readonly ReadingLane[];
}

/**
 * Routes of the read's lanes. A record's lanes are found once, for all of them (routeIndex), and
 * kept while the same item is asked about; of a feed routed to several lanes, the lanes whose
 * chatbot holds a key are looked up by the key (an index of the chatbots' keys, made at the first
 * record: the lanes of such a read are paged before it begins, feed-run.ts) rather than by asking
 * each lane's chatbot about every record.
 */
export function routesOf(lanes: readonly ReadingLane[]): Routes {
  if (!lanes.some((l) => l.lane.route !== undefined)) return { takes: () => true, lanesFor: () => lanes };
  const taking = routeIndex(lanes.map((l) => l.lane.route));
  const at = new Map(lanes.map((l, i) => [l, i]));
  let last: FeedItem | undefined;
  let took: readonly number[] = [];
  const takingNow = (item: FeedItem & { kind: 'record' }) => {
    if (item !== last) {
      last = item;
      took = taking(item.data);
    }
    return took;
  };
  let holders: Map<string, number[]> | undefined;
  const holding = (key: string): readonly number[] => {
    holders ??= keyHolders(lanes);
    return holders.get(key) ?? [];
  };
  return {
    takes(l, item) {
      if (item.kind !== 'record' || !l.lane.route) return true;
      const i = at.get(l);
      // (a lane not of this read: its own where)
      return i === undefined ? l.lane.route(item.data) : takingNow(item).includes(i);
    },
    lanesFor(item) {
      if (item.kind !== 'record' || lanes.length === 1) return lanes;
      const these = new Set(takingNow(item));
      for (const i of item.key === undefined ? [] : holding(item.key)) these.add(i);
      return [...these].sort((a, b) => a - b).map((i) => lanes[i]!);
    },
  };
}

/** Each key some lane's chatbot holds: the lanes (their indexes, in order) that hold it. */
function keyHolders(lanes: readonly ReadingLane[]): Map<string, number[]> {
  const out = new Map<string, number[]>();
  lanes.forEach((l, i) => {
    for (const key of l.remote.keys()) {
      const at = out.get(key);
      if (at) at.push(i);
      else out.set(key, [i]);
    }
  });
  return out;
}

/** A record this lane does not take: a copy its chatbot holds went elsewhere. */
function movedAway(l: ReadingLane, key: string | undefined): void {
  if (key !== undefined && l.remote.has(key)) l.planner.collector.movedAway(key);
}

function* jobOf(l: ReadingLane, job: LaneJob['job'] | undefined): Generator<LaneJob> {
  if (job) yield { executor: l.executor, job };
}

function* pushed(l: ReadingLane, entry: DesiredListing | RememberedListing): Generator<LaneJob> {
  yield* jobOf(l, l.planner.push(entry));
}

/** The lane's planned jobs still in its window. */
function* drained(l: ReadingLane): Generator<LaneJob> {
  for (const job of l.planner.drain()) yield { executor: l.executor, job };
}

/** The waiting entries' photos mirrored, then each planned. */
async function* withPhotos(step: MediaStep, batch: readonly Awaiting[]): AsyncGenerator<LaneJob> {
  await mirrorPhotos(step, batch);
  for (const { lane, entry } of batch) yield* pushed(lane, entry);
}

/** The photos of mapped entries mirrored (a listing whose photos were not all mirrored is not stamped). */
async function mirrorPhotos(step: MediaStep, batch: readonly Awaiting[]): Promise<void> {
  const mapped = batch.filter((b): b is Awaiting & { entry: DesiredListing } => 'listing' in b.entry);
  const complete = await step.mirror(mapped.map(({ entry, item }) => mirrorEntry(entry, item)));
  complete.forEach((ok, i) => {
    if (!ok) mapped[i]!.lane.planner.unstamp(mapped[i]!.entry);
  });
}

/** What was read before a failure is still written, with the photos the mirror knows. */
function* salvage(media: MediaStep, batch: readonly Awaiting[]): Generator<LaneJob> {
  for (const { lane, entry, item } of batch) {
    if ('listing' in entry && !media.rewriteKnown(mirrorEntry(entry, item))) lane.planner.unstamp(entry);
    yield* pushed(lane, entry);
  }
}

/** Records read again after the feed ended, through one lane: planned at once, not left waiting in the window (the feed's end has passed). */
async function* readAgain(
  l: ReadingLane,
  items: readonly KeyedItem[],
  routes: ReturnType<typeof routesOf>,
  mapOnce: MapOnce,
  media: MediaStep | undefined,
): AsyncGenerator<LaneJob> {
  const entries = items.flatMap((item) => {
    if (!routes.takes(l, item)) return [];
    const entry = l.planner.read(item, once(mapOnce, item));
    return entry ? [{ lane: l, entry, item }] : [];
  });
  // (the media mirror's photos first, as for any record read)
  if (media) await mirrorPhotos(media, entries);
  for (const { entry } of entries) yield* pushed(l, entry);
  yield* drained(l);
  for (const job of l.planner.held()) yield { executor: l.executor, job };
}

/** The lanes' held records (keys that recur), once every earlier write has finished. */
export function* heldJobs(lanes: readonly ReadingLane[]): Generator<LaneJob> {
  for (const l of lanes) {
    if (l.executor.result.stopped) continue;
    for (const job of l.planner.held()) yield { executor: l.executor, job };
  }
}
