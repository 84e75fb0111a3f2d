// Steps "read" and "route" of a feed (docs/design.md): the feed is read once, whatever the number
// of its lanes, and each record goes to the lanes whose `where` it matches (all of them for a
// feed with one chatbot). A record is mapped at most once, the first time a lane needs it; a
// lane whose stamp shows the record in step never asks. The lanes' jobs come out as one stream
// for the write pool (execute.ts, runPool). A record no lane takes is counted "routed nowhere";
// a lane whose chatbot holds a record that now goes elsewhere deletes its copy (an agent change).
import { inBatches } from '../feeds/item-batches.js';
import type { FeedItem, OpenedFeed } from '../feeds/types.js';
import type { CompiledMapping } from '../mapping/compile.js';
import { mapItem } from '../mapping/map-feed.js';
import type { MappedItem } from '../mapping/types.js';
import { authFailure } from './auth.js';
import type { Executor, LaneJob } from './execute.js';
import type { Lane } from './lanes.js';
import type { LanePlanner, Mapped } from './lane-plan.js';
import type { RemoteIndex } from './remote-index.js';

/** A lane as the read step feeds it. */
export interface ReadingLane {
  lane: Lane;
  planner: LanePlanner;
  executor: Executor;
  remote: RemoteIndex;
}

export interface FeedRead {
  /** the write jobs of every lane, in the order the records came */
  jobs: AsyncGenerator<LaneJob>;
  /** read to its end (known once `jobs` ended) */
  readonly done: boolean;
  /** the feed server refused our credentials: every lane fails, nothing more is asked of anyone */
  readonly auth: string | undefined;
  readonly routedNowhere: number;
  readonly records: number;
}

export interface ReadFeedInput {
  feedName: string;
  opened: OpenedFeed;
  lanes: readonly ReadingLane[];
  compiled: CompiledMapping;
  keyBy: 'MLSNumber' | 'URL';
  /** how many unmapped values the mapping met so far (a record that meets one gets no stamp) */
  unmappedSeen(): number;
  onRecords?(records: number): void;
  /** the feed was read to its end and every record planned (writes may still be in flight) */
  onEnd?(): void;
}

export function readFeed(input: ReadFeedInput): FeedRead {
  const { opened, lanes, compiled, keyBy } = input;
  const routed = lanes.some((l) => l.lane.route !== undefined);
  const state = { done: false, auth: undefined as string | undefined, routedNowhere: 0, records: 0 };
  // mapped for the first lane's chatbot; each lane's planner sets its own SerialNumber
  const ctx = { serialNumber: lanes[0]?.lane.chatbot ?? '', keyBy };
  const mapOnce = (item: FeedItem): Mapped => {
    const before = input.unmappedSeen();
    const mapped: MappedItem = mapItem(item, compiled, ctx);
    return { item: mapped, clean: input.unmappedSeen() === before };
  };
  /** one record to each lane it goes to: the jobs that come of it */
  function* route(item: FeedItem): Generator<LaneJob> {
    let memo: Mapped | undefined;
    const map = () => (memo ??= mapOnce(item));
    let taken = false;
    for (const l of lanes) {
      // records only are routed: a removal or a broken record goes to every lane (each acts on its own copy)
      if (routed && item.kind === 'record' && l.lane.route && !l.lane.route(item.data)) {
        movedAway(l, item);
        continue;
      }
      taken = true;
      const job = l.planner.take(item, map);
      if (job) yield { executor: l.executor, job };
    }
    if (!taken) state.routedNowhere++;
  }
  /** a record this lane does not take: a copy its chatbot holds went elsewhere */
  const movedAway = (l: ReadingLane, item: FeedItem & { kind: 'record' }) => {
    const key = compiled.keyOf(item.data, keyBy);
    if (key !== undefined && l.remote.has(key)) l.planner.collector.movedAway(key);
  };
  async function* jobs(): AsyncGenerator<LaneJob> {
    try {
      // (a batch at a time where the reader has them: no promise per record)
      for await (const batch of inBatches(opened.items)) {
        for (const item of batch) {
          if (++state.records % 1000 === 0) input.onRecords?.(state.records);
          yield* route(item);
        }
      }
    } catch (err) {
      state.auth = authFailure(err, input.feedName);
      for (const l of lanes) l.planner.collector.fail(err);
      if (state.auth) return;
    }
    for (const l of lanes) for (const job of l.planner.drain()) yield { executor: l.executor, job };
    state.done = true;
    input.onEnd?.();
  }
  return {
    jobs: jobs(),
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

/** The lanes' held records (keys that recur), once every earlier write has finished. */
export function* heldJobs(lanes: readonly ReadingLane[]): Generator<LaneJob> {
  for (const l of lanes) {
    if (l.executor.result.stopped) continue;
    for (const job of l.planner.held()) yield { executor: l.executor, job };
  }
}
