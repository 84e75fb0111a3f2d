// The sync's own state of one chatbot: for each feed writing to it (from the config, not from
// state, so a feed removed from the config stops shielding its listings), the fingerprints of
// what it last wrote, the first-missing marks of the grace period, the end of each shown sold
// listing's window, and its feed mark (RESO high-water mark). Loaded once at the start of a run, under the chatbot's lock; the run's changes
// are committed once, atomically, after the writes they describe (KvStore.apply). Readers never
// touch it: they take the mark in and hand the new one back.
import { laneNamespace } from '../../feeds/source-state.js';
import type { SourceState, SourceStateChange } from '../../feeds/types.js';
import type { KvStore, StateChange } from '../../state/kv-store.js';
import type { RemoteListing } from '../model/plan-types.js';
import {
  fingerprintNamespace,
  GOOD_VALID_NAMESPACE,
  MARK_NAMESPACE,
  missingNamespace,
  RULES_NAMESPACE,
  SEAL_NAMESPACE,
  soldWindowNamespace,
  stampNamespace,
  SYNCED_NAMESPACE,
  unlistedNamespace,
  type ChatbotFeed,
  type ChatbotState,
  type ChatbotStateRead,
} from '../model/state-names.js';

/** keys the feed listed more than once in its last full read: held to its end on the next run */
export const recurringNamespace = (feed: string) => `recur:${feed}`;

/** key → value pairs to set: an array of them, or the run's columns of them (Entries) */
export type Pairs = Iterable<readonly [string, string]> & { readonly length: number };

/** What one run changes in its feed's state; committed in one apply. */
export interface FeedStateChanges {
  feed: string;
  fingerprints: { set: Pairs; delete: string[] };
  stamps: { set: Pairs; delete: string[] };
  missingSince: { set: Pairs; delete: string[] };
  /** the unlisted fields of each listing written (unlistedNamespace) */
  unlisted?: { set: Pairs; delete: string[] };
  /** the new mark, when the run earned it (read whole, outcome ok) */
  mark?: string;
  /** the valid records of a full run that ended ok: the next runs are judged against it */
  goodValid?: number;
  /** the display rules the run applied (rule-change.ts), when they differ from those stored */
  rules?: string;
  /** when each Closed listing shown now stops being shown (soldWindowNamespace) */
  soldUntil?: { set: Pairs; delete: string[] };
  /** keys repeated in this run's read (set), and those that no longer are (delete) */
  recurring?: { set: string[]; delete: string[] };
  /** state of a step of the run kept beside the sync's (the media mirror's), committed in the same apply */
  extra?: StateChange[];
  /** '1': the lane, which had no committed state, read both sides whole (SYNCED_NAMESPACE) */
  synced?: string;
  /** the lane's seal (SEAL_NAMESPACE, settle/seal.ts): stored anew, or the stored one deleted */
  seal?: { set: string } | { delete: true };
}

export async function loadChatbotState(
  store: KvStore,
  chatbot: string,
  feeds: readonly ChatbotFeed[],
): Promise<ChatbotState> {
  const state: ChatbotState = { chatbot, location: store.location, feeds: new Map() };
  // the namespaces every lane shares (one entry a lane: thousands in a fleet): this chatbot's feeds' entries only,
  // each read by its key, and every read of the chatbot at once, not one after another
  const names = feeds.map((f) => f.name);
  const [marks, goods, rules, synced, seals, own] = await Promise.all([
    entriesOf(store, MARK_NAMESPACE, names),
    entriesOf(store, GOOD_VALID_NAMESPACE, names),
    entriesOf(store, RULES_NAMESPACE, names),
    entriesOf(store, SYNCED_NAMESPACE, names),
    entriesOf(store, SEAL_NAMESPACE, names),
    Promise.all(
      feeds.map((f) =>
        Promise.all([
          store.getAll(fingerprintNamespace(f.name)),
          store.getAll(missingNamespace(f.name)),
          store.getAll(recurringNamespace(f.name)),
          store.getAll(soldWindowNamespace(f.name)),
        ]),
      ),
    ),
  ]);
  for (const [i, f] of feeds.entries()) {
    const good = Number(goods.get(f.name));
    const [fingerprints, missingSince, recurring, soldUntil] = own[i]!;
    state.feeds.set(f.name, {
      name: f.name,
      keyBy: f.keyBy,
      // a run read both sides whole since the state began (state-names.ts SYNCED_NAMESPACE)
      committed: synced.has(f.name) || goods.has(f.name),
      fingerprints,
      missingSince,
      recurring: new Set(recurring.keys()),
      soldUntil,
      ...(marks.has(f.name) && { mark: marks.get(f.name) }),
      ...(Number.isSafeInteger(good) && good >= 0 && { lastGoodValid: good }),
      ...(rules.has(f.name) && { rules: rules.get(f.name) }),
      ...(seals.has(f.name) && { seal: seals.get(f.name) }),
    });
  }
  return state;
}

/** The entries of `keys` a namespace holds (those it lacks left out), each read by its key. */
async function entriesOf(store: KvStore, ns: string, keys: readonly string[]): Promise<Map<string, string>> {
  const values = await Promise.all(keys.map((k) => store.get(ns, k)));
  return new Map(keys.flatMap((k, i) => (values[i] === undefined ? [] : [[k, values[i]] as [string, string]])));
}

export function emptyChanges(feed: string): FeedStateChanges {
  return {
    feed,
    fingerprints: { set: [], delete: [] },
    stamps: { set: [], delete: [] },
    missingSince: { set: [], delete: [] },
  };
}

/**
 * The source's own state (feeds/types.ts SourceState) of a feed's lanes, as views of the store: a
 * namespace is read when the source asks for it, once. Its changes go with each lane's mark
 * (sourceStateChanges).
 */
export function sourceStateOf(store: KvStore, lanes: readonly string[]): SourceState {
  const loaded = new Map<string, Promise<ReadonlyArray<ReadonlyMap<string, string>>>>();
  const load = (ns: string) => Promise.all(lanes.map((lane) => store.getAll(laneNamespace(ns, lane))));
  return {
    lanes,
    copies: (ns) => loaded.get(ns) ?? loaded.set(ns, load(ns)).get(ns)!,
    lookup: (ns, keys) =>
      Promise.all(lanes.map((lane) => Promise.all(keys.map((key) => store.get(laneNamespace(ns, lane), key))))),
  };
}

/** What the source learned of a lane's copy of its state (OpenedFeed.state), as changes of the lane's commit. */
export function sourceStateChanges(lane: string, changes: readonly SourceStateChange[] | undefined): StateChange[] {
  return (changes ?? []).map((c) => ({ ns: laneNamespace(c.ns, lane), set: c.set, delete: c.delete }));
}

/**
 * Chatbots whose state a run reads at once (sync-run.ts startPagings), in the run's order. Each
 * read is a few Redis commands (8 for a chatbot of one lane); all of a routed feed's 100 chatbots
 * at once queued 800 of them on the worker's connection ahead of the first page's budget ask (0.1
 * to 0.35 s, traced), while a paging needs its state only once its pages are in.
 */
export const STATE_READS_AT_ONCE = 16;

/**
 * A chatbot's state for the lanes of one paging, read while it pages (remote/page-chatbot.ts): the
 * chatbot's state, and the stored stamps of the lanes whose records are stamped (`stamped`).
 */
export function readChatbotState(
  store: KvStore,
  chatbot: string,
  writers: readonly ChatbotFeed[],
  lanes: ReadonlyArray<{ id: string }>,
  stamped: ReadonlySet<string>,
): Promise<ChatbotStateRead> {
  const read = Promise.all([
    loadChatbotState(store, chatbot, writers),
    Promise.all(
      lanes.map(
        async (l) => [l.id, stamped.has(l.id) ? await loadStamps(store, l.id) : new Map<string, string>()] as const,
      ),
    ),
  ]).then(([state, stamps]) => ({ state, stamps: new Map(stamps) }));
  // a run whose paging fails ends with that failure, so a read failure then has nothing to add
  read.catch(() => undefined);
  return read;
}

/** The stamps of a feed's records (only the running feed reads them). */
export function loadStamps(store: KvStore, feed: string): Promise<ReadonlyMap<string, string>> {
  return store.getAll(stampNamespace(feed));
}

/** The run's changes, all or nothing; a run that changed nothing (a no-change rerun) writes nothing. */
export function commitChanges(store: KvStore, changes: FeedStateChanges): Promise<void> {
  return applyOps(store, stateOps(changes));
}

/** The store's changes applied at once, all or nothing; none: no write. */
export async function applyOps(store: KvStore, ops: readonly StateChange[]): Promise<void> {
  if (ops.length) await store.apply(ops);
}

/** A run's changes as the store's changes, each namespace's with something to set or delete (none: nothing to write). */
export function stateOps(changes: FeedStateChanges): Array<StateChange & { set: Pairs; delete: readonly string[] }> {
  const ops: Array<StateChange & { set: Pairs; delete: readonly string[] }> = [
    { ns: fingerprintNamespace(changes.feed), set: changes.fingerprints.set, delete: changes.fingerprints.delete },
    { ns: stampNamespace(changes.feed), set: changes.stamps.set, delete: changes.stamps.delete },
    { ns: missingNamespace(changes.feed), set: changes.missingSince.set, delete: changes.missingSince.delete },
  ];
  if (changes.unlisted)
    ops.push({ ns: unlistedNamespace(changes.feed), set: changes.unlisted.set, delete: changes.unlisted.delete });
  if (changes.soldUntil)
    ops.push({ ns: soldWindowNamespace(changes.feed), set: changes.soldUntil.set, delete: changes.soldUntil.delete });
  if (changes.mark !== undefined) ops.push({ ns: MARK_NAMESPACE, set: [[changes.feed, changes.mark]], delete: [] });
  if (changes.goodValid !== undefined)
    ops.push({ ns: GOOD_VALID_NAMESPACE, set: [[changes.feed, String(changes.goodValid)]], delete: [] });
  if (changes.rules !== undefined) ops.push({ ns: RULES_NAMESPACE, set: [[changes.feed, changes.rules]], delete: [] });
  if (changes.synced !== undefined)
    ops.push({ ns: SYNCED_NAMESPACE, set: [[changes.feed, changes.synced]], delete: [] });
  if (changes.seal)
    ops.push(
      'set' in changes.seal
        ? { ns: SEAL_NAMESPACE, set: [[changes.feed, changes.seal.set]], delete: [] }
        : { ns: SEAL_NAMESPACE, set: [], delete: [changes.feed] },
    );
  if (changes.recurring)
    ops.push({
      ns: recurringNamespace(changes.feed),
      set: changes.recurring.set.map((k) => [k, '1'] as [string, string]),
      delete: changes.recurring.delete,
    });
  for (const op of changes.extra ?? [])
    ops.push({ ns: op.ns, set: [...(op.set ?? [])], delete: [...(op.delete ?? [])] });
  return ops.filter((op) => op.set.length > 0 || op.delete.length > 0);
}

/**
 * Answers whether a remote listing belongs to another feed of the chatbot (that feed's
 * fingerprints hold its key); undefined when the feed has the chatbot to itself.
 */
export function ownedByOtherFeeds(state: ChatbotState, feed: string): ((r: RemoteListing) => boolean) | undefined {
  const keyBy = state.feeds.get(feed)?.keyBy;
  const others = [...state.feeds.values()].filter((f) => f.name !== feed);
  if (others.length === 0) return undefined;
  return (r) => others.some((o) => o.fingerprints.has((o.keyBy === keyBy ? r.key : r.otherKey) ?? ''));
}

/**
 * The other feeds of the chatbot (per the config) with no committed state: they never ran, or their
 * state was lost (a Redis restarted without persistence, a FLUSHALL, a deleted state file). Their
 * listings cannot be told from those this feed no longer has, so this feed's deletes of absent keys
 * are held until they have run (guards.ts). A feed with the chatbot to itself has none.
 */
export function unsyncedWriters(state: ChatbotState, feed: string): string[] {
  return [...state.feeds.values()].filter((f) => f.name !== feed && !f.committed).map((f) => f.name);
}
