// Step "plan" of a lane (docs/design.md): each record routed to the lane comes to a decision
// (model/lane-planner.ts PlanDecision: create, update, or nothing to write), or to nothing yet. A
// record whose stamp shows it in step since the last run is not mapped at all (record-stamp.ts); any
// other is mapped (once for all the feed's lanes: read-feed.ts), waits in the pending window (one
// write per key), and is planned against the chatbot's copies (plan.ts). The planner writes nothing
// and logs no change: sync/run/ makes its decisions into write jobs (a dry run: into the plan view)
// and change-log entries. What the lane learns here (counts, fingerprints to record, stamps,
// duplicate deletes) is read by the guard, commit and report steps.
import type { FeedItem } from '../../feeds/types.js';
import type { KeyedItem, MappedItem } from '../../mapping/types.js';
import { unlistedTexts } from '../../listing/whole.js';
import { Entries } from '../model/entries.js';
import type { FeedCollector, NewCollector } from '../model/feed-side.js';
import { UNCHANGED, type PlanDecision, type PlannerSteps } from '../model/lane-planner.js';
import type { LaneTally, Mapped } from '../model/lane-tally.js';
import {
  withheldOf,
  type DesiredListing,
  type PlannedCopies,
  type PlanOptions,
  type RememberedListing,
  type RemoteListing,
} from '../model/plan-types.js';
import { createPendingWindow, type PendingWindow } from './pending.js';
import { duplicatesOf, planAgain, planListing, type ListingDecision } from './plan.js';
import { recordText, stampOf } from './record-stamp.js';
import { isEmpty } from '../util/collections.js';

export type { LaneTally, Mapped } from '../model/lane-tally.js';

/** Listings read but not yet planned: a key repeated within this many records is written once. */
export const PENDING_WINDOW = 1000;
/** Records of recurring keys held until the feed ends (past it they are planned at once). */
export const MAX_HELD = 10_000;

export interface LanePlannerInput {
  chatbot: string;
  keyBy: PlanOptions['keyBy'];
  remote: PlannedCopies;
  planOptions: PlanOptions;
  /** the lane's record stamp seed; undefined: no stamps (a compared field reads the clock) */
  seed: string | undefined;
  stamps: ReadonlyMap<string, string>;
  /** key → when its sold window ends (display.soldDays), as the last run stored it */
  soldUntil?: ReadonlyMap<string, string>;
  /** the run's clock: a record whose sold window has ended is mapped (judged again), whatever its stamp */
  now?: () => Date;
  knownRecurring: ReadonlySet<string>;
  /** maps a record again (a remembered one that must be planned after all) */
  map(item: FeedItem): MappedItem;
  /** the lane's feed side (read/desired.ts createFeedCollector; the run adds the change log's sink of rejected records) */
  newCollector: NewCollector;
  /** the pull's mode once known: a record listed twice is a shift in a full pull, a later version in an incremental one */
  pullMode(): 'full' | 'incremental';
  /** the fingerprint this lane stored for a key, as the state holds it (a record read while the chatbot is paged: readEarly) */
  storedFingerprint?(key: string): string | undefined;
  /**
   * the media mirror (src/media/): a remembered record planned after all gets its photos' mirrored
   * URLs from what the mirror knows; false when it does not know them all
   */
  rewriteKnown?(entry: DesiredListing, item: FeedItem): boolean;
}

/** A lane's planner: the read's calls (PlannerSteps), answered with decisions, and what it learns for the steps after it. */
export interface LanePlanner extends PlannerSteps<PlanDecision> {
  tally: LaneTally;
  pending: PendingWindow<DesiredListing | RememberedListing>;
  /** keys whose photos were not all mirrored this run: not stamped, so the next run maps them (and retries the photos) */
  photosMissing: string[];
  /**
   * Paging is over: a key remembered by readEarly that a later page showed held more than once is
   * judged by the duplicate rule (plan.ts duplicatesOf) against the copy its stamp matched, as
   * planning it after the paging would have (its other copies deleted in mirror mode).
   */
  pagedAfterEarly(): void;
  /** planning is over: what it held for it is let go */
  done(): void;
  /** keys this run planned a create or update for (a later record of one may still take it away: planDeletes) */
  readonly written: ReadonlySet<string>;
}

export function createLanePlanner(given: LanePlannerInput): LanePlanner {
  const input = withSoldWindows(given);
  const st: PlanState = {
    input,
    stamps: input.stamps,
    collector: input.newCollector('full', {
      repeatIsShift: () => input.pullMode() === 'full',
      ...(input.soldUntil && { soldUntil: input.soldUntil }),
    }),
    tally: {
      creates: 0,
      updates: 0,
      unchanged: 0,
      unchangedByStamp: 0,
      besidePaging: 0,
      duplicates: 0,
      rewritten: 0,
      unplanned: 0,
      recordFingerprints: new Entries({ digests: true }),
      recordUnlisted: new Entries(),
      recordStamps: new Entries({ digests: true }),
      duplicateDeletes: [],
    },
    sent: new Set(),
    judgedEarly: new Map(),
    photosMissing: [],
    pending: createPendingWindow<DesiredListing | RememberedListing>({
      size: PENDING_WINDOW,
      maxHeld: MAX_HELD,
      knownRecurring: input.knownRecurring,
    }),
  };
  const pending = st.pending;
  /** what left the window (or was held) and waits to be planned */
  const queue: Array<DesiredListing | RememberedListing> = [];
  const { read, readEarly, unstamp, expand } = readStep(st);
  const plan = diffStep(st, expand);
  return {
    collector: st.collector,
    tally: st.tally,
    pending,
    photosMissing: st.photosMissing,
    read,
    readEarly,
    pagedAfterEarly: () => duplicatesAfterEarly(st),
    unstamp,
    push(entry) {
      const ready = pending.push(entry);
      return ready && plan(ready, false);
    },
    take(item, map) {
      const entry = read(item, map);
      return entry && this.push(entry);
    },
    *drain() {
      // (taken from the queue one at a time: a run that stops pulling jobs leaves the rest there, counted unplanned)
      queue.push(...pending.drain());
      for (let ready = queue.shift(); ready; ready = queue.shift()) {
        const decided = plan(ready, false);
        if (decided) yield decided;
      }
    },
    *held() {
      queue.push(...pending.held());
      for (let entry = queue.shift(); entry; entry = queue.shift()) {
        const decided = plan(entry, pending.planned(entry.key));
        if (decided) yield decided;
      }
    },
    done() {
      st.stamps = new Map();
      // what still waits was never planned (the run stopped first): counted, then let go
      const left = new Set([...queue.splice(0), ...pending.drain(), ...pending.held()].map((e) => e.key));
      for (const key of left) if (st.collector.side.listings.has(key)) st.tally.unplanned++;
    },
    written: st.sent,
  };
}

/**
 * The sold windows as the last run stored them (the only ones a planner reads: this run's go in at its
 * commit, once planning is over). None stored, as for a feed without display.soldDays: none to ask
 * for each record (a state store's read costs about a microsecond a record), the same answer as
 * asking an empty store, by the property test.
 */
export function withSoldWindows(input: LanePlannerInput): LanePlannerInput {
  if (!input.soldUntil || !isEmpty(input.soldUntil)) return input;
  const { soldUntil: _none, ...rest } = input;
  return rest;
}

/** pagedAfterEarly: each key remembered early that the finished paging holds more than once, by the duplicate rule. */
function duplicatesAfterEarly(st: PlanState): void {
  const { remote, planOptions } = st.input;
  for (const key of remote.severalCopies()) {
    const id = remote.takenCopy(key);
    if (id === undefined) continue;
    const copies = remote.get(key)!;
    const matched = copies.find((c) => c.id === id);
    if (!matched) continue;
    const d = duplicatesOf(key, copies, matched.hash, planOptions);
    if (!d.duplicates) continue;
    // judged once: a later record of the key, planned after this, sees the kept copy alone (diffStep)
    st.judgedEarly.set(key, new Set(d.duplicates.extraIds));
    st.tally.duplicates++;
    st.tally.duplicateDeletes.push(...d.duplicateDeletes);
  }
}

/** A key's copies less those duplicatesAfterEarly found extra (and planned to delete, in mirror mode). */
function unjudged(
  st: PlanState,
  key: string,
  copies: readonly RemoteListing[] | undefined,
): readonly RemoteListing[] | undefined {
  const extra = st.judgedEarly.get(key);
  return extra && copies ? copies.filter((c) => !extra.has(c.id)) : copies;
}

/** What a lane's reading and diffing share. */
interface PlanState {
  input: LanePlannerInput;
  /** the stamps stored by the last run (let go when planning is over) */
  stamps: ReadonlyMap<string, string>;
  collector: FeedCollector;
  tally: LaneTally;
  /** keys this run planned a create or update for: a later record of one of them is an update, never a second create */
  sent: Set<string>;
  /**
   * keys whose copies duplicatesAfterEarly judged (the record taken while paging matched one), with
   * the copies it found extra: a later record of such a key is planned against the kept copy alone,
   * so its copies are judged once (judged again by the newest ID, the later record deleted the kept copy too)
   */
  judgedEarly: Map<string, ReadonlySet<number>>;
  photosMissing: string[];
  pending: PendingWindow<DesiredListing | RememberedListing>;
}

/** Reading a record: mapped, unless its stamp shows it in step (then remembered, not mapped). */
function readStep(st: PlanState) {
  const { input, collector } = st;
  const { remote, seed } = input;
  const now = input.now ?? (() => new Date());
  /** a Closed listing whose sold window has ended since it was stamped: its record is judged again */
  const windowEnded = (key: string): boolean => {
    const until = input.soldUntil?.get(key);
    return until !== undefined && Date.parse(until) <= now().getTime();
  };
  /** the stored stamp a record of `key` is checked against; undefined when none may be (none stored, written this run, a sold window ended) */
  const storedStamp = (key: string): string | undefined => {
    const stored = st.stamps.get(key);
    return stored === undefined || st.sent.has(key) || windowEnded(key) ? undefined : stored;
  };
  /** whether a record's stamp, taken against the copy and fingerprint the chatbot holds now, is the one stored */
  const inStepSince = (seed: string, key: string, text: string): boolean => {
    // (the chatbot's copy first: it is in memory, and a key it does not hold, each of a first
    // sync's, then costs no read of the state file for its stamp)
    const copy = remote.stampInputs(key);
    if (copy === undefined) return false;
    const stored = storedStamp(key);
    return stored !== undefined && stampOf(seed, text, copy.hash, copy.fingerprint) === stored;
  };
  const remembered = (item: FeedItem, key: string, text: string): RememberedListing => {
    const entry: RememberedListing = { key, position: item.position, item, text };
    collector.addRemembered(entry);
    return entry;
  };
  /** the feed's mapping of the record, as this lane's chatbot receives it */
  const ours = (m: MappedItem): MappedItem =>
    m.kind === 'listing' && m.listing.SerialNumber !== input.chatbot
      ? { ...m, listing: { ...m.listing, SerialNumber: input.chatbot } }
      : m;
  /** a mapped item counted; a record of a key that is no listing withdraws what waits of the key (the later record decides) */
  const added = (m: MappedItem): DesiredListing | undefined => {
    const entry = collector.add(ours(m));
    if (!entry && m.key !== undefined) st.pending.withdraw(m.key);
    return entry;
  };
  const unstamp = (entry: DesiredListing) => {
    entry.text = undefined;
    st.photosMissing.push(entry.key);
  };
  return {
    unstamp,
    readEarly(item: FeedItem, key: string): RememberedListing | 'not yet' | 'later' {
      if (seed === undefined || item.kind !== 'record' || !input.storedFingerprint) return 'later';
      // (the paging first: a record read ahead of its key's page is asked again, and only the paging's answer is cheap)
      const copy = remote.pagedCopy(key);
      if (copy === 'not yet' || copy === 'not one') return copy === 'not yet' ? 'not yet' : 'later';
      const stored = storedStamp(key);
      if (stored === undefined) return 'later';
      const fingerprint = input.storedFingerprint(key);
      const text = recordText(item);
      if (fingerprint === undefined || stampOf(seed, text, copy.hash, fingerprint) !== stored) return 'later';
      remote.takeEarly(copy.row);
      st.tally.besidePaging++;
      return remembered(item, key, text);
    },
    /** one feed item, mapped unless its stamp shows it in step; what is valid comes back to be planned */
    read(item: KeyedItem, map: () => Mapped): DesiredListing | RememberedListing | undefined {
      if (seed === undefined || item.kind !== 'record') return added(map().item);
      const text = recordText(item);
      const key = item.key;
      if (key !== undefined && inStepSince(seed, key, text)) return remembered(item, key, text);
      const mapped = map();
      const entry = added(mapped.item);
      if (entry && mapped.clean) entry.text = text;
      return entry;
    },
    /** a remembered record planned after all (an earlier record of its key was written in this run) */
    expand(item: FeedItem, text: string): DesiredListing {
      const mapped = ours(input.map(item));
      // the same record under the same mapping, valid when its stamp was stored
      if (mapped.kind !== 'listing')
        throw new Error(
          `${mapped.position.file} record ${mapped.position.index} matched its stamp but maps to ${mapped.kind} now`,
        );
      const entry: DesiredListing = {
        key: mapped.key,
        listing: mapped.listing,
        position: mapped.position,
        text,
        ...withheldOf(mapped),
      };
      // its photos were mirrored when its stamp was stored: rewritten from what the mirror knows
      if (input.rewriteKnown && !input.rewriteKnown(entry, item)) unstamp(entry);
      return entry;
    },
  };
}

/** Diffing a listing out of the pending window against the chatbot's copies (plan.ts): what it comes to, if anything. */
function diffStep(st: PlanState, expand: (item: FeedItem, text: string) => DesiredListing) {
  const { input, tally, sent } = st;
  const { remote, planOptions } = input;
  const { side } = st.collector;
  const unlistedText = unlistedTexts();
  return (next: DesiredListing | RememberedListing, late: boolean): PlanDecision | undefined => {
    // a later record of the key took the listing away (off the market, removed, rejected): the later record decides
    if (!side.listings.has(next.key)) return undefined;
    // in step since the last run: unchanged, unless an earlier record of its key was written in this run
    if ('item' in next && !sent.has(next.key)) {
      tally.unchanged++;
      tally.unchangedByStamp++;
      return UNCHANGED;
    }
    const entry = 'item' in next ? expand(next.item, next.text) : next;
    const copies = unjudged(st, entry.key, remote.get(entry.key));
    const again = sent.has(entry.key);
    const d = again ? planAgain(entry, copies, planOptions) : planListing(entry, copies, planOptions);
    if (again) tally.rewritten++;
    if (d.recordFingerprint) {
      tally.recordFingerprints.push(entry.key, d.recordFingerprint);
      // (the fingerprint says the chatbot holds this listing, the fields the list does not return too)
      tally.recordUnlisted.push(entry.key, unlistedText(entry.listing));
    }
    stampStep(st, entry, d);
    // a late record's key was planned already, its remote copies with it
    if (!late) {
      if (d.duplicates) tally.duplicates++;
      tally.duplicateDeletes.push(...d.duplicateDeletes);
    }
    return decided(st, d);
  };
}

/** The stamp of a listing planned from a record kept as read: on its write, or recorded when it is in step and its stored one differs. */
function stampStep(st: PlanState, entry: DesiredListing, d: ListingDecision): void {
  const { seed } = st.input;
  if (seed === undefined || entry.text === undefined) return;
  const stamp = stampOf(seed, entry.text, d.inStep.hash, d.inStep.fingerprint);
  if (d.create) d.create.stamp = stamp;
  else if (d.update) d.update.stamp = stamp;
  else if (st.stamps.get(entry.key) !== stamp) st.tally.recordStamps.push(entry.key, stamp);
}

/** The decision of a diff, counted; a key created or updated is one this run wrote. */
function decided(st: PlanState, d: ListingDecision): PlanDecision {
  const { tally, sent } = st;
  if (d.create) {
    tally.creates++;
    sent.add(d.create.key);
    return { kind: 'create', create: d.create };
  }
  if (d.update) {
    tally.updates++;
    sent.add(d.update.key);
    return { kind: 'update', update: d.update };
  }
  tally.unchanged++;
  return UNCHANGED;
}
