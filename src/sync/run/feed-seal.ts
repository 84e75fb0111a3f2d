// A feed lane's seal in a run (settle/seal.ts): looked at before the feed is read, so that a feed
// whose file, config, code and stored state are as its last run sealed them is not read beside the
// paging, and, once the chatbot's list is paged as it was too, not read at all (feed-run.ts: every
// listing counted unchanged by the seal); and what the lane's commit does with it: a run that left
// every listing of the feed in step with its stamp stores its own once its commit is applied (with
// the digest of the fingerprints and stamps as committed, read back), any other run that commits the
// lane deletes the stored one. A seal holds only over a paging that was whole (remote.ts: a list
// whose VirtualCount moved, or that ended short, is not the list the seal was stored against).
import { createHash } from 'node:crypto';
import { fileIdentity, unchangedSince, type FileIdentity, type Look } from '../../feeds/source/file-identity.js';
import { feedPath } from '../../feeds/source/file-source.js';
import { mirrorOf } from '../../media/index.js';
import type { Lane } from '../read/lanes.js';
import type { LaneCommitInput } from '../settle/lane-commit.js';
import {
  listDigest,
  readSeal,
  sealBefore,
  sealDiffers,
  sealText,
  stateDigest,
  stateDigestSliced,
  type Seal,
  type SealBefore,
} from '../settle/seal.js';
import type { ChatbotRemote, PagingHandle } from '../remote/page-chatbot.js';
import { fingerprintNamespace, stampNamespace } from '../model/state-names.js';
import { commitChanges, emptyChanges } from '../settle/state.js';
import type { KvStore } from '../../state/kv-store.js';
import { codeIdentity } from '../util/code-identity.js';
import { isEmpty } from '../util/collections.js';
import type { AfterRead, FeedContext, LiveLane } from './context.js';
import { laneSeed } from './lane-setup.js';
import { stamped } from '../plan/record-stamp.js';

/** The code a seal's "every record in step" rests on besides the mapping's (in the stamp seed): reading, planning, settling. */
const SEAL_CODE = ['sync', 'feeds'];

/** What a run of a sealable lane learned of its seal before the feed was read. */
export interface LaneSeal {
  /** the file's path, as the seal's counted listings are placed */
  readonly file: string;
  /** the stored seal holds for all a run can look at before its chatbot is paged (then the feed is not read beside the paging) */
  holdsBeforePaging(): Promise<boolean>;
  /** ... and for the chatbot's list as paged (whole) and the stored state: the feed need not be read */
  holds(remote: ChatbotRemote): Promise<boolean>;
  /** what the commit of a run the seal did not stand for does with it, once the run is settled */
  toCommit(l: LiveLane, settled: SettledFacts): Promise<SealCommit>;
}

/** What a lane's commit does with its seal: `change` in its apply; `afterCommit`, once it is applied (the seal stored anew). */
export interface SealCommit {
  change: LaneCommitInput['seal'];
  afterCommit?: () => Promise<void>;
}

/** What the settled run says that a seal rests on. */
export interface SettledFacts {
  outcome: string;
  readWhole: boolean;
  after: AfterRead;
}

/** A lane's seal as its run settles it: `sealed`, the lane was counted by it (nothing was read, and the stored seal stays). */
export interface SealOfLane {
  seal: LaneSeal;
  sealed: boolean;
}

/**
 * What the lane's commit does with its seal: a lane that may have one asks it (LaneSeal.toCommit);
 * any other commit of a lane that has one stored deletes it (the run may have changed what it rests on).
 */
export async function sealChange(
  l: LiveLane,
  seal: SealOfLane | undefined,
  settled: SettledFacts,
): Promise<SealCommit> {
  if (seal) return seal.sealed ? { change: undefined } : seal.seal.toCommit(l, settled);
  return { change: l.own.seal === undefined ? undefined : { delete: true } };
}

/**
 * Whether the lane may have a seal: a file of one lane, its records stamped, read by this process (no
 * media mirror, no ask of the caller), in a run that writes (not a dry run). A `--full` run reads the
 * feed whatever its seal says, and stores its own (feed-run.ts).
 */
export function sealable(lanes: readonly Lane[], ctx: FeedContext): boolean {
  const { feed, deps, opts } = ctx;
  return (
    opts.seal !== false &&
    !opts.dryRun &&
    lanes.length === 1 &&
    fileOf(feed.source) !== undefined &&
    !mirrorOf(deps.media, feed) &&
    !opts.ask &&
    stamped(lanes[0]!, ctx.compiled)
  );
}

/** The lane's seal, looked at as the run starts: its file hashed and its stored state read while the chatbot is paged. */
export function openSeal(l: Lane, ctx: FeedContext, paging: PagingHandle): LaneSeal {
  const { feed, deps, logger } = ctx;
  const file = fileOf(feed.source);
  if (file === undefined) throw new Error(`feed ${feed.name} has no file to seal: sealable() says which may`);
  const path = feedPath(deps, file);
  const hashed = fileIdentity(path, ctx.clock.signal);
  // (a --full run never asks whether its seal holds: it keeps nothing for the question)
  const held = storedOf(l, paging, !ctx.opts.full);
  const { stored } = held;
  const before: Promise<{ now: SealBefore; look: Look } | undefined> = Promise.all([hashed, stored]).then(([h, s]) => {
    if ('problem' in h) {
      logger.debug({ feed: feed.name }, `no seal for the feed's read: ${h.problem}`);
      return undefined;
    }
    return s?.alone ? { now: sealNow(l, ctx, h.identity), look: h.look } : undefined;
  });
  // (asked only where a seal is stored, and by a lane that settles: a run whose paging fails never asks,
  // and a failure here, the code's identity unreadable, is met again where it is asked)
  before.catch(() => undefined);
  const differs = async (list?: { list: string; listings: number; state: string }): Promise<string | undefined> => {
    const s = await stored;
    if (!s?.seal) return 'none stored';
    // a fingerprint and a stamp stored for each listing sealed, and no other (a state cut short or lost is read again)
    if (s.fingerprints !== s.seal.listings || s.stamps !== s.seal.listings || !s.clockFree) return 'stored state';
    const b = await before;
    if (!b) return 'the file or the chatbot could not be looked at';
    return sealDiffers(s.seal, { ...b.now, ...list });
  };
  return {
    file,
    holdsBeforePaging: async () => {
      const why = await differs();
      if (why !== undefined) held.release();
      return why === undefined;
    },
    async holds(remote) {
      const why = await (async () => {
        // (a paging not whole is not the list the seal was stored against, whatever its pages held: remote.ts)
        if (!remote.complete) return "the chatbot's list was not paged whole";
        const index = remote.byKey;
        const { keys, rows } = index.keysInOrder();
        const list = listDigest(keys, (_key, k) => index.hashesFrom(rows[k]!), index.unkeyed);
        const state = await held.digest();
        if (state === undefined) return 'stored state';
        const why = await differs({ list, listings: keys.length, state });
        // the file as hashed when the run began: one written since (an export landing, a line appended while the
        // chatbot was paged) is read, as the plain path, reading it after the paging, would read it
        const b = await before;
        return why ?? (b && (await unchangedSince(path, b.look)) ? undefined : 'the file changed since it was hashed');
        // (let go on every way out: a digest still under way, as after a paging not whole, stops at its next slice)
      })().finally(() => held.release());
      if (why !== undefined) logger.debug({ feed: feed.name }, `the feed's seal does not hold (${why}): it is read`);
      return why === undefined;
    },
    async toCommit(lane, settled) {
      held.release();
      const s = await stored;
      const b = await before;
      const list = b && ctx.unmappedSeen() === 0 ? listAfter(lane, settled) : undefined;
      const seal =
        b && list && (await unchangedSince(path, b.look))
          ? { keys: list.keys, parts: { ...b.now, list: list.list, listings: list.listings } }
          : undefined;
      if (!seal) return { change: s?.seal ? { delete: true } : undefined };
      // the seal goes with the state the commit leaves, read back once it is committed: until then the stored
      // seal stays (it vouches for the state it was stored with, which this commit may change: then it holds no more)
      return { change: undefined, afterCommit: () => storeSeal(deps.store, lane.lane.id, seal, s?.seal) };
    },
  };
}

/** The lane's state as the run read it, what a seal is checked against. */
interface StoredForSeal {
  seal: Seal | undefined;
  /** the chatbot has no other feed */
  alone: boolean;
  fingerprints: number;
  stamps: number;
  /** no grace mark, sold window or repeated key stored, and the valid count a sealing run leaves */
  clockFree: boolean;
}

/**
 * The lane's stored state as the run read it: counted before planning lets the stored fingerprints
 * go (lane-setup.ts attachStored), and where a seal is stored (and `keep`), the digest of its
 * fingerprints and stamps, taken a slice at a time while the chatbot is paged (nothing writes them
 * before the paging ends) until `release` (the seal asked, or found not to hold). A state that cannot
 * be read fails the chatbot's paging, which reports it: no seal then.
 */
function storedOf(l: Lane, paging: PagingHandle, keep: boolean) {
  let wanted = keep;
  let digest: Promise<string | undefined> = Promise.resolve(undefined);
  const pause = () => new Promise<boolean>((resume) => setImmediate(() => resume(wanted)));
  const stored: Promise<StoredForSeal | undefined> = paging.state.then(
    ({ state, stamps }) => {
      const own = state.feeds.get(l.id);
      const seal = readSeal(own?.seal);
      if (wanted && seal && own) {
        digest = stateDigestSliced(own.fingerprints, stamps.get(l.id) ?? new Map(), pause);
        // (a store that fails the walk fails holds(), which awaits it; a seal let go first asks nothing of it)
        digest.catch(() => undefined);
      }
      return {
        seal,
        alone: state.feeds.size === 1,
        fingerprints: own?.fingerprints.size ?? 0,
        stamps: stamps.get(l.id)?.size ?? 0,
        // what a sealing run leaves none of (listAfter), and the valid count it leaves (its commit's goodValid)
        clockFree:
          own !== undefined &&
          isEmpty(own.missingSince) &&
          isEmpty(own.soldUntil) &&
          own.recurring.size === 0 &&
          own.lastGoodValid === seal?.listings,
      };
    },
    () => undefined,
  );
  return {
    stored,
    /** the stored fingerprints' and stamps' digest (stateDigest); undefined where none was kept, or it was let go */
    async digest(): Promise<string | undefined> {
      await stored;
      return wanted ? digest : undefined;
    },
    /** the digest no longer wanted: one under way stops at its next slice */
    release() {
      wanted = false;
    },
  };
}

/**
 * The lane's seal stored with the state its commit left (read back: the digest of what the next run
 * will read), unless it is the one stored; none (the stored one deleted) when that state has not a
 * fingerprint and a stamp for each of the seal's listings and no other.
 */
async function storeSeal(
  store: KvStore,
  lane: string,
  seal: { keys: readonly string[]; parts: Omit<Seal, 'state'> },
  before: Seal | undefined,
): Promise<void> {
  const [fingerprints, stamps] = await Promise.all([
    store.getAll(fingerprintNamespace(lane)),
    store.getAll(stampNamespace(lane)),
  ]);
  // (a fingerprint and a stamp for each of its listings and no other, as the next run counts them)
  const each = (m: ReadonlyMap<string, string>) => m.size === seal.keys.length && seal.keys.every((k) => m.has(k));
  const text =
    each(fingerprints) && each(stamps)
      ? sealText({ ...seal.parts, state: stateDigest(fingerprints, stamps) })
      : undefined;
  if (text === (before && sealText(before))) return;
  await commitChanges(store, { ...emptyChanges(lane), seal: text === undefined ? { delete: true } : { set: text } });
}

/** The feed's file as its config names it, when it is read from one (not a URL, nor a server's API). */
function fileOf(source: FeedContext['feed']['source']): string | undefined {
  return 'path' in source && typeof source.path === 'string' ? source.path : undefined;
}

/** What this run's seal holds but the list. */
function sealNow(l: Lane, ctx: FeedContext, file: FileIdentity): SealBefore {
  return sealBefore({
    code: codeIdentity(SEAL_CODE),
    feed: createHash('sha256').update(JSON.stringify(ctx.feed)).digest('base64url'),
    seed: laneSeed(l, ctx)!,
    file,
  });
}

/**
 * The chatbot's list as the run left it (the copies paged, the written ones as written, the deleted
 * ones gone), when the run's outcome rests on nothing a seal does not hold: read whole, every record
 * valid and once, every write made and stamped, and the list then the feed's listings, one copy each
 * and nothing else. Undefined otherwise.
 */
function listAfter(l: LiveLane, s: SettledFacts): (Pick<Seal, 'list' | 'listings'> & { keys: string[] }) | undefined {
  if (!(readWholeOnce(l, s) && writesMade(l) && noClock(l) && l.paged.remote.complete)) return undefined;
  const index = l.paged.remote.byKey;
  const { deletedKeys, listed } = l.executor.result;
  const valid = l.planner.collector.side.counts.valid;
  if (index.unkeyed !== 0 || index.severalCopies().length > 0) return undefined;
  // each written key's hash as written (one write a key: readWholeOnce), the deleted keys gone
  const written = new Map<string, number>();
  for (let i = 0; i < listed.length; i++) written.set(listed.keys()[i]!, i);
  const deleted = new Set(deletedKeys);
  const keys = [...index.keys()].filter((k) => !deleted.has(k) && !written.has(k)).concat([...written.keys()]);
  if (keys.length !== valid) return undefined;
  keys.sort();
  const hashesOf = (key: string): readonly Uint8Array[] => {
    const i = written.get(key);
    return i === undefined ? index.hashesOf(key) : [Buffer.from(listed.value(i), 'base64url')];
  };
  return { list: listDigest(keys, hashesOf, 0), listings: valid, keys };
}

/** Read whole and ok, each record valid (none rejected, skipped, removed or routed nowhere) and of a key of its own. */
function readWholeOnce(l: LiveLane, { outcome, readWhole, after }: SettledFacts): boolean {
  const { tally, collector } = l.planner;
  const { counts, mode, feedDuplicates } = collector.side;
  return (
    outcome === 'ok' &&
    readWhole &&
    mode === 'full' &&
    after.read.done &&
    after.read.routedNowhere === 0 &&
    after.opened.mark === undefined &&
    counts.records === counts.valid &&
    feedDuplicates.length === 0 &&
    tally.rewritten === 0 &&
    tally.unplanned === 0
  );
}

/** Every write planned was made, each with its stamp; no copy of a key deleted as a duplicate. */
function writesMade(l: LiveLane): boolean {
  const { tally } = l.planner;
  const exec = l.executor.result;
  return (
    exec.failures.length === 0 &&
    exec.written.length === tally.creates + tally.updates &&
    exec.listed.length === exec.written.length &&
    tally.duplicates === 0 &&
    tally.duplicateDeletes.length === 0
  );
}

/** No part of the result that a clock or an earlier run decides: grace marks, sold windows, recurring keys, a display rule change. */
function noClock(l: LiveLane): boolean {
  const { soldUntil } = l.planner.collector.side;
  return (
    isEmpty(l.own.missingSince) &&
    isEmpty(l.own.soldUntil) &&
    soldUntil.set.size === 0 &&
    soldUntil.clear.size === 0 &&
    l.own.recurring.size === 0 &&
    l.planner.pending.recurring.size === 0 &&
    !l.rules.differs &&
    l.rules.rules.length === 0
  );
}

export type { Seal };
