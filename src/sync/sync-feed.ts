// One listing sync of one feed (DESIGN.md, "The flow of one listing sync"): read and map the feed
// while the chatbot's listings are paged, plan, guard, then (unless a dry run) execute, remember
// what was written, and report. The chatbot's sync state (state.ts) is loaded once and committed
// once, atomically, after the writes; the caller holds the chatbot's lock around the whole run.
import { setMaxListeners } from 'node:events';
import type { CallCounter } from '../api/call-counter.js';
import type { ChatbotApi } from '../api/types.js';
import type { Budgets } from '../budget/budget.js';
import type { ApiConfig, FeedConfig } from '../config/schema.js';
import { AbortedError, causeMessage, isRetryable } from '../errors.js';
import { openFeed } from '../feeds/index.js';
import type { SourceReadStats } from '../feeds/types.js';
import type { FeedItem } from '../feeds/types.js';
import { inBatches } from '../feeds/item-batches.js';
import type { Logger } from '../log.js';
import { mapItem } from '../mapping/map-feed.js';
import { compileMapping } from '../mapping/index.js';
import { createUnmappedTally } from '../mapping/unmapped.js';
import { createMediaStep, loadMediaState, mirrorOf, type MediaConfig, type MediaReport, type MediaStep } from '../media/index.js';
import type { KvStore } from '../state/kv-store.js';
import { commitChanges, emptyChanges, loadChatbotState, loadStamps, otherKeyNeeded, ownedByOtherFeeds, type ChatbotFeed } from './state.js';
import { recordText, stampOf, stampSeed } from './record-stamp.js';
import type { RemoteIndex } from './remote-index.js';
import { authFailure } from './auth.js';
import { createFeedCollector } from './desired.js';
import { createChange, deleteChange, rejectChange, updateChange, withheldChange, type ChangeSink } from './changes.js';
import { createBeforeCapture } from './capture-before.js';
import { createExecutor, deleteJobs, type ExecutionResult, type Job } from './execute.js';
import { evaluateGuards, type GuardDecision } from './guards.js';
import { createPendingWindow } from './pending.js';
import { planAgain, planDeletes, planListing } from './plan.js';
import { confirmAbsences, type AbsenceResult } from './confirm-absent.js';
import { keySources } from '../mapping/key-sources.js';
import type { DesiredListing, PlannedDelete, PlanOptions, RememberedListing, RemoteSide } from './plan-types.js';
import { fetchRemote } from './remote.js';
import { openFeedThread, ThreadRecord } from './feed-thread.js';
import type { EchoFiles } from './page-echo.js';
import { callsBetween, summaryLine, type PlanView, type SyncOutcome, type SyncReport } from './report.js';

export interface SyncProgress {
  feed: string;
  phase: 'feed' | 'write';
  done: number;
  /** how many there will be, once known (the progress line shows done/total) */
  total?: number;
}

export interface SyncDeps {
  api: ChatbotApi;
  store: KvStore;
  /** every feed of this chatbot in the config (this one included): the others' listings are left alone */
  chatbotFeeds: readonly ChatbotFeed[];
  logger: Logger;
  /** folder relative feed paths resolve against (the config file's) */
  baseDir: string;
  apiConfig: ApiConfig;
  signal?: AbortSignal;
  /** counts this run's API calls for the report (fed by the client's onCall) */
  calls?: CallCounter;
  onProgress?: (p: SyncProgress) => void;
  /** feed source request budgets (source.limits), shared through Redis in a worker */
  budgets?: Budgets;
  /** the change log: told of every write (or, in a dry run, planned write), rejected record and held-back delete */
  changes?: ChangeSink;
  /** where the page echo is kept between processes (a CLI run; a worker remembers in memory) */
  echoFiles?: EchoFiles;
  /** with `changes`: bytes of whole listings (before each update and delete, for undo) the run may keep */
  maxWholeBytes?: number;
  /** the config's `media`: with media.mirror set, the feed's photos are mirrored to the bucket (src/media/) */
  media?: MediaConfig;
}

export interface SyncOptions {
  dryRun?: boolean;
  force?: boolean;
  /** RESO: a full pull instead of an incremental one */
  full?: boolean;
  attempt?: { made: number; max: number };
  /** for tests of the grace period */
  now?: () => Date;
  /** CSV files of at least this many bytes are read by a thread of their own (default THREAD_MIN_BYTES; tests) */
  threadMinBytes?: number;
}

/** whole listings kept a run when the caller sets no budget (changeLog.maxWholeBytesPerRun's default) */
const DEFAULT_WHOLE_BYTES = 8 << 20;

/** Listings read but not yet planned: a key repeated within this many records is written once. */
const PENDING_WINDOW = 1000;
/** Records of recurring keys held until the feed ends (past it they are planned at once). */
const MAX_HELD = 10_000;
/** Mapped listings whose photos are mirrored together (media mirror), before they are planned in feed order. */
const MEDIA_BATCH = 64;

export async function syncFeed(feed: FeedConfig, deps: SyncDeps, opts: SyncOptions = {}): Promise<SyncReport> {
  const startedAt = new Date();
  const t0 = performance.now();
  const ms = () => Math.round(performance.now() - t0);
  /** when each phase ended, in ms since the start */
  const timings: SyncReport['timings'] = { remoteMs: 0, feedMs: 0, planMs: 0, executeMs: 0 };
  const now = opts.now ?? (() => new Date());
  const logger = deps.logger.child({ feed: feed.name, chatbot: feed.chatbot });
  const callsBefore = deps.calls?.snapshot();
  const { api, store, apiConfig } = deps;
  // The run's own deadline (feeds[].deadlineMinutes) joins the caller's signal (shutdown, lost lock, Ctrl-C).
  const deadline = AbortSignal.timeout(feed.deadlineMinutes * 60_000);
  const signal = deps.signal ? AbortSignal.any([deps.signal, deadline]) : deadline;
  // every call in flight listens on it (list pages, writes, their backoff sleeps): api.concurrency of
  // them at once is the design, not a leak, so Node's warning past 10 listeners would only alarm ops
  setMaxListeners(Math.max(10, 4 * apiConfig.concurrency + 10), signal);
  const deadlineMessage = () =>
    `the run passed its deadline (deadlineMinutes ${feed.deadlineMinutes} of feed ${feed.name}): calls in flight were finished, nothing new was sent; the next run goes on from what was written`;
  const ignore: ReadonlySet<string> = new Set(feed.ignore);
  /** writes to make, known once the feed is read (creates and updates), then with the delete batches */
  let writeTotal: number | undefined;
  const progress = (phase: SyncProgress['phase'], done: number) =>
    deps.onProgress?.({ feed: feed.name, phase, done, ...(phase === 'write' && writeTotal !== undefined && { total: writeTotal }) });
  /** the pull's mode once known: a record listed twice is a shift in a full pull, a later version in an incremental one */
  let pullMode = (): 'full' | 'incremental' => 'full';
  const collector = createFeedCollector('full', { repeatIsShift: () => pullMode() === 'full' });
  const tally = { creates: 0, updates: 0, unchanged: 0, recordFingerprints: [] as Array<[string, string]>, recordStamps: [] as Array<[string, string]>, unchangedByStamp: 0, duplicates: 0, duplicateDeletes: [] as PlannedDelete[] };
  const view: PlanView = { creates: [], updates: [], deletes: [] };
  /** an incremental pull: the time it asked changes from, for the report (read with the mode) */
  let since: string | undefined;
  let readStats: SourceReadStats | undefined;
  const replacedValues = new Map<string, number>();
  const unmapped = createUnmappedTally();

  // The remote side first: each feed record is then planned (and written) as it is read, so the
  // feed is never held whole in memory.
  const writers = deps.chatbotFeeds.some((f) => f.name === feed.name) ? deps.chatbotFeeds : [...deps.chatbotFeeds, { name: feed.name, keyBy: feed.keyBy }];
  /** unmapped values met so far: a record that meets one gets no stamp, so every run reports it */
  let unmappedSeen = 0;
  const compiled = compileMapping(feed.mapping, {
    onUnmapped: (u) => {
      unmappedSeen++;
      unmapped.add(u);
    },
  });
  // record stamps (record-stamp.ts), unless a compared field reads the clock
  const mirror = mirrorOf(deps.media, feed);
  const seed = compiled.clockFields.every((f) => ignore.has(f))
    ? stampSeed({ mapping: feed.mapping, chatbot: feed.chatbot, keyBy: feed.keyBy, ignore, ...(mirror && { media: mirror.identity }) })
    : undefined;
  let mediaReport: MediaReport | undefined;
  // A large CSV file is read by a thread of its own from now on, ahead of the planning (feed-thread.ts).
  const thread = await openFeedThread(feed.source, { baseDir: deps.baseDir, mapping: feed.mapping, keyBy: feed.keyBy, signal, ...(opts.threadMinBytes !== undefined && { minBytes: opts.threadMinBytes }) });
  try {
    // The sync state is read while the chatbot's listings are paged (paging leaves the main thread
    // idle between pages; the caller's chatbot lock keeps other runs from writing it meanwhile). A
    // run whose paging fails ends with that failure, so a read failure then has nothing to add.
    const stateRead = Promise.all([
      loadChatbotState(store, feed.chatbot, writers),
      seed === undefined ? new Map<string, string>() : loadStamps(store, feed.name),
      mirror ? loadMediaState(store, mirror.namespaces) : undefined,
    ]);
    stateRead.catch(() => undefined);
    let remote: RemoteSide & { byKey: RemoteIndex };
    try {
      remote = await fetchRemote(api, {
        serialNumber: feed.chatbot,
        keyBy: feed.keyBy,
        pageSize: apiConfig.pageSize,
        maxPages: apiConfig.maxPages,
        concurrency: apiConfig.concurrency,
        signal,
        ignore,
        // the change log names each changed field old → new, in real runs too
        keepCompared: Boolean(opts.dryRun || deps.changes),
        keepOtherKey: otherKeyNeeded(writers, feed),
        ...(deps.echoFiles && { echoFiles: deps.echoFiles }),
      });
    } catch (err) {
      // whatever went wrong, this feed's run ends here with a report; the other feeds go on
      const outcome: SyncOutcome = err instanceof AbortedError || signal.aborted ? 'aborted' : isRetryable(err) ? 'unavailable' : 'failed';
      const message = authFailure(err, feed.name) ?? `${deadline.aborted ? `${deadlineMessage()}; ` : ''}the chatbot's listings could not be paged: ${causeMessage(err)}; nothing was written`;
      return finish({ outcome, message, remote: { complete: false, pages: 0, rounds: 0, virtualCount: 0, problem: causeMessage(err) }, count: 0 });
    }
    timings.remoteMs = ms();

    const [state, storedStamps, mediaState] = await stateRead;
    let stamps = storedStamps;
    const own = state.feeds.get(feed.name)!;
    // this feed's fingerprints go into the remote index (asked only of keys the chatbot holds)
    remote.byKey.attachFingerprints(own.fingerprints);
    own.fingerprints = new Map(); // (what was read is not held past here)
    const { fingerprints } = remote.byKey;
    const missingSince = feed.deletes.graceHours > 0 ? own.missingSince : new Map<string, string>();
    const ownedElsewhere = ownedByOtherFeeds(state, feed.name);
    const planOptions: PlanOptions = { keyBy: feed.keyBy, deletesMode: feed.deletes.mode, ignore, fingerprints, ownedElsewhere };

    const ctx = { serialNumber: feed.chatbot, keyBy: feed.keyBy };

    // the media mirror step: mapped listings' Images become the bucket's URLs before they are planned
    const media: MediaStep | undefined =
      mirror && mediaState && createMediaStep({ feed: feed.name, source: feed.source, ...mirror, state: mediaState, dryRun: Boolean(opts.dryRun), signal, logger, budgets: deps.budgets });
    /** keys whose photos were not all mirrored this run: not stamped, so the next run maps them (and retries the photos) */
    const photosMissing: string[] = [];
    const opened = thread ?? openFeed(feed.name, feed.source, { baseDir: deps.baseDir, logger, signal, full: opts.full, budgets: deps.budgets, ...(own.mark !== undefined && { mark: own.mark }) });
    pullMode = () => opened.mode;
    let feedDone = false;
    /** the feed server refused our credentials: the run fails, nothing more is asked of anyone */
    let feedAuth: string | undefined;
    const pending = createPendingWindow<DesiredListing | RememberedListing>({ size: PENDING_WINDOW, maxHeld: MAX_HELD, knownRecurring: own.recurring });
    /** keys this run planned a create or update for: a later record of one of them is an update, never a second create */
    const sent = new Set<string>();
    /** whether a record's stamp, taken against the copy and fingerprint the chatbot holds now, is the one stored */
    const inStepSince = (seed: string, key: string, text: string): boolean => {
      const stored = stamps.get(key);
      if (stored === undefined || sent.has(key)) return false;
      const copy = remote.byKey.stampInputs(key);
      return copy !== undefined && stampOf(seed, text, copy.hash, copy.fingerprint) === stored;
    };
    /** one feed item mapped; a value replaced by its rule's default (onInvalid: default) is counted */
    const mapCounted = (item: FeedItem) => {
      const mapped = mapItem(item, compiled, ctx);
      if (mapped.kind === 'listing' && mapped.replaced) for (const f of mapped.replaced) replacedValues.set(f, (replacedValues.get(f) ?? 0) + 1);
      return mapped;
    };
    /** one feed item, mapped unless its stamp shows it in step; what is valid comes back to be planned */
    const read = (item: FeedItem): DesiredListing | RememberedListing | undefined => {
      if (seed === undefined || item.kind !== 'record') return collector.add(mapCounted(item));
      const text = recordText(item);
      // (the feed thread read the key where it read the record)
      const key = item instanceof ThreadRecord ? item.key : compiled.keyOf(item.data, feed.keyBy);
      if (key !== undefined && inStepSince(seed, key, text)) {
        const entry: RememberedListing = { key, position: item.position, item, text };
        collector.addRemembered(entry);
        return entry;
      }
      const before = unmappedSeen;
      const entry = collector.add(mapCounted(item));
      if (entry && unmappedSeen === before) entry.text = text;
      return entry;
    };
    const expand = (item: FeedItem, text: string): DesiredListing => {
      const mapped = mapCounted(item);
      // the same record under the same mapping, valid when its stamp was stored
      if (mapped.kind !== 'listing') throw new Error(`${feed.name}: ${mapped.position.file} record ${mapped.position.index} matched its stamp but maps to ${mapped.kind} now`);
      const entry: DesiredListing = { key: mapped.key, listing: mapped.listing, position: mapped.position, text };
      // its photos were mirrored when its stamp was stored: rewritten from what the mirror knows
      if (media && !media.rewriteKnown({ key: entry.key, listing: entry.listing, record: item.kind === 'record' ? item.data : undefined })) {
        entry.text = undefined;
        photosMissing.push(entry.key);
      }
      return entry;
    };
    const plan = (next: DesiredListing | RememberedListing, late: boolean): Job | undefined => {
      // in step since the last run: unchanged, unless an earlier record of its key was written in this run
      if ('item' in next && !sent.has(next.key)) {
        tally.unchanged++;
        tally.unchangedByStamp++;
        return undefined;
      }
      const entry = 'item' in next ? expand(next.item, next.text) : next;
      const copies = remote.byKey.get(entry.key);
      const d = sent.has(entry.key) ? planAgain(entry, copies, planOptions) : planListing(entry, copies, planOptions);
      if (d.recordFingerprint) tally.recordFingerprints.push([entry.key, d.recordFingerprint]);
      if (seed !== undefined && entry.text !== undefined) {
        const stamp = stampOf(seed, entry.text, d.inStep.hash, d.inStep.fingerprint);
        if (d.create) d.create.stamp = stamp;
        else if (d.update) d.update.stamp = stamp;
        else if (stamps.get(entry.key) !== stamp) tally.recordStamps.push([entry.key, stamp]);
      }
      // a late record's key was planned already, its remote copies with it
      if (!late) {
        if (d.duplicates) tally.duplicates++;
        tally.duplicateDeletes.push(...d.duplicateDeletes);
      }
      if (d.create) {
        tally.creates++;
        sent.add(entry.key);
        if (!opts.dryRun) return { kind: 'create', create: d.create };
        view.creates.push(d.create.key);
        deps.changes?.(createChange(d.create));
      } else if (d.update) {
        tally.updates++;
        sent.add(entry.key);
        if (!opts.dryRun) return { kind: 'update', update: d.update };
        view.updates.push({ key: d.update.key, reason: d.update.reason, changes: d.update.changes });
        deps.changes?.(updateChange(d.update));
      } else tally.unchanged++;
      return undefined;
    };
    /** read entries waiting for the media step, in feed order (remembered ones too, so the order holds) */
    let awaitingPhotos: Array<{ entry: DesiredListing | RememberedListing; item: FeedItem }> = [];
    function* planOne(entry: DesiredListing | RememberedListing): Generator<Job> {
      const ready = pending.push(entry);
      if (ready) {
        const job = plan(ready, false);
        if (job) yield job;
      }
    }
    /** the waiting entries' photos mirrored, then each planned */
    async function* withPhotos(step: MediaStep): AsyncGenerator<Job> {
      const batch = awaitingPhotos;
      awaitingPhotos = [];
      await mirrorPhotos(step, batch);
      for (const { entry } of batch) yield* planOne(entry);
    }
    /** the photos of mapped entries mirrored (a listing whose photos were not all mirrored is not stamped) */
    async function mirrorPhotos(step: MediaStep, batch: Array<{ entry: DesiredListing | RememberedListing; item: FeedItem }>): Promise<void> {
      const mapped = batch.filter((b): b is { entry: DesiredListing; item: FeedItem } => 'listing' in b.entry);
      const complete = await step.mirror(mapped.map(({ entry, item }) => ({ key: entry.key, listing: entry.listing, record: item.kind === 'record' ? item.data : undefined })));
      complete.forEach((ok, i) => {
        if (ok) return;
        const { entry } = mapped[i]!;
        entry.text = undefined;
        photosMissing.push(entry.key);
      });
    }
    async function* writes(): AsyncGenerator<Job> {
      try {
        // (a batch at a time where the reader has them: no promise per record)
        for await (const batch of inBatches(opened.items)) {
          for (const item of batch) {
            const entry = read(item);
            if (collector.side.counts.records % 1000 === 0) progress('feed', collector.side.counts.records);
            if (!entry) continue;
            if (!media) {
              yield* planOne(entry);
              continue;
            }
            awaitingPhotos.push({ entry, item });
            if (awaitingPhotos.length >= MEDIA_BATCH) yield* withPhotos(media);
          }
        }
        if (media && awaitingPhotos.length) yield* withPhotos(media);
      } catch (err) {
        feedAuth = authFailure(err, feed.name);
        collector.fail(err);
        if (feedAuth) return;
        // what was read before the failure is still written (with the photos it has)
        if (awaitingPhotos.length && !signal.aborted) {
          for (const { entry, item } of awaitingPhotos.splice(0)) {
            if ('listing' in entry && media?.rewriteKnown({ key: entry.key, listing: entry.listing, record: item.kind === 'record' ? item.data : undefined }) === false) {
              entry.text = undefined;
              photosMissing.push(entry.key);
            }
            yield* planOne(entry);
          }
        }
      }
      for (const ready of pending.drain()) {
        const job = plan(ready, false);
        if (job) yield job;
      }
      feedDone = true;
      writeTotal = tally.creates + tally.updates;
      timings.feedMs = ms();
    }
    /** the held records (keys that recur): planned once every earlier write has finished */
    function* heldWrites(): Generator<Job> {
      for (const entry of pending.held()) {
        const job = plan(entry, pending.planned(entry.key));
        if (job) yield job;
      }
    }

    const executor = createExecutor({
      api,
      serialNumber: feed.chatbot,
      keyBy: feed.keyBy,
      concurrency: apiConfig.concurrency,
      batchSize: feed.deletes.batchSize,
      retries: apiConfig.retries,
      logger,
      feed: feed.name,
      signal,
      onProgress: ({ done }) => progress('write', done),
      changes: deps.changes,
      ...(deps.changes && !opts.dryRun && { before: createBeforeCapture({ api, store, feed: feed.name, serialNumber: feed.chatbot, keyBy: feed.keyBy, ignore, maxBytes: deps.maxWholeBytes ?? DEFAULT_WHOLE_BYTES, signal }) }),
    });
    if (opts.dryRun) {
      for await (const _ of writes());
      if (!feedAuth) for (const _ of heldWrites());
    } else {
      await executor.run(writes());
      if (!executor.result.stopped && !feedAuth) await executor.run(heldWrites());
    }
    remote.byKey.dropFingerprints(); // not needed past planning
    stamps = new Map(); // not needed past the feed
    const desired = collector.side;
    // Read only now: an incremental RESO feed with no stored mark turns into a full pull once read.
    desired.mode = opened.mode;
    since = opened.since;
    readStats = opened.stats;
    if (!feedDone) {
      desired.complete = false;
      desired.readError ??= 'the run stopped before the feed was read whole';
    }

    const rest = planDeletes(remote, desired, planOptions);
    // a full pull's absences are asked of the source before the guard sees them (confirm-absent.ts)
    // (not after a read that was not whole, or writes that stopped: no delete is sent then anyway)
    const confirmable = desired.mode === 'full' && desired.complete && remote.complete && !executor.result.stopped && !feedAuth;
    const absences: AbsenceResult = !confirmable ? { deletes: rest.deletes, asked: 0 } : await confirmAbsences({
      deletes: rest.deletes,
      lookup: opened.lookup,
      sources: keySources(compiled.rules[feed.keyBy === 'URL' ? 'Url' : 'MLSNumber']),
      keyOf: (data) => compiled.keyOf(data, feed.keyBy),
      // past deletes.maxCount the guard holds every delete anyway, unless forced or a grace period
      // leaves fewer to delete (then every absence is confirmed, within source.maxPages requests)
      limit: opts.force || feed.deletes.graceHours > 0 ? Number.POSITIVE_INFINITY : feed.deletes.maxCount,
      keyRule: `the mapping of ${feed.keyBy === 'URL' ? 'Url' : 'MLSNumber'} (feeds[${feed.name}].mapping.fields)`,
      take: async (items) => {
        const entries = items.flatMap((item) => {
          const entry = read(item);
          return entry ? [{ entry, item }] : [];
        });
        if (media) await mirrorPhotos(media, entries);
        const jobs = function* () {
          for (const { entry } of entries) {
            const job = plan(entry, false);
            if (job) yield job;
          }
        };
        if (opts.dryRun || executor.result.stopped || feedAuth) for (const _ of jobs());
        else await executor.run(jobs());
      },
      holds: (key) => desired.listings.has(key) || desired.protectedKeys.has(key),
    });
    if (absences.problem) {
      desired.complete = false;
      desired.readError = absences.problem;
    }
    const plannedDeletes = [...tally.duplicateDeletes, ...absences.deletes];
    const guard = evaluateGuards({
      plan: { deletes: plannedDeletes },
      deletes: feed.deletes,
      remote: { count: remote.count, complete: remote.complete, problem: remote.problem },
      feed: { complete: desired.complete, readError: desired.readError, mode: desired.mode, valid: desired.counts.valid },
      force: Boolean(opts.force),
      now: now(),
      missingSince,
    });
    timings.planMs = ms();
    /** the read (feed or chatbot list) was not whole: the run is failed or partial, never a guard, whatever the guard says */
    const readWhole = desired.complete && remote.complete;
    if (deps.changes) {
      for (const r of desired.rejected) deps.changes(rejectChange(r));
      // a read that was not whole withholds every delete: one entry for the run, not one per listing
      if (!readWhole && guard.withheld.length) deps.changes(withheldChange(guard.withheld.length, desired.readError ?? remote.problem ?? 'the chatbot\'s listings could not all be paged'));
      else for (const d of guard.withheld) deps.changes(deleteChange(d, true));
      if (opts.dryRun) for (const d of guard.allowed) deps.changes(deleteChange(d));
    }
    if (absences.missed) {
      // the deletes the source confirmed go on; the pull itself is not called whole (no mark is stored)
      desired.complete = false;
      desired.readError = absences.missed;
    }
    const counted = { protected: rest.protectedKeys.length, otherFeeds: rest.otherFeeds, unchanged: tally.unchanged, unchangedByStamp: tally.unchangedByStamp, duplicates: tally.duplicates };

    if (opts.dryRun) {
      if (media) mediaReport = (await media.finish({ deletedKeys: guard.allowed.map((d) => d.key), unwrittenKeys: new Set(), now: now() })).report;
      const shown = [...guard.allowed, ...guard.withheld];
      view.deletes = shown.map((d) => ({ key: d.key, reason: d.reason, keyType: d.keyType, deleteKey: d.deleteKey }));
      const planned = { creates: tally.creates, updates: tally.updates, deletes: guard.allowed };
      const outcome = runOutcome({ stopped: feedAuth ? 'failed' : undefined, guard, failures: 0, readWhole, missed: Boolean(absences.missed), records: desired.counts.records });
      return finish({ outcome, message: feedAuth ?? runMessage(readWhole, guard, desired.readError, remote, absences.missed), remote: remoteInfo(remote), count: remote.count, guard, counted, planned, dry: true });
    }

    const exec = executor.result;
    if (!exec.stopped && !feedAuth && guard.allowed.length) {
      const batches = [...deleteJobs(guard.allowed, feed.deletes.batchSize)];
      writeTotal = (writeTotal ?? 0) + batches.length;
      await executor.run(batches);
    }
    timings.executeMs = ms();

    const outcome = runOutcome({ stopped: exec.stopped ?? (feedAuth ? 'failed' : undefined), guard, failures: exec.failures.length, readWhole, missed: Boolean(absences.missed), records: desired.counts.records });
    const message = (deadline.aborted ? deadlineMessage() : (exec.stopReason ?? feedAuth)) ?? runMessage(readWhole, guard, desired.readError, remote, absences.missed);
    const changes = emptyChanges(feed.name);
    changes.fingerprints.set = [...tally.recordFingerprints, ...exec.written];
    changes.fingerprints.delete = exec.deletedKeys;
    changes.stamps.set = [...tally.recordStamps, ...exec.stamped];
    changes.stamps.delete = [...exec.deletedKeys, ...photosMissing];
    if (media) {
      const done = await media.finish({ deletedKeys: exec.deletedKeys, unwrittenKeys: new Set(exec.failures.map((f) => f.key)), now: now() });
      changes.extra = done.changes;
      mediaReport = done.report;
    }
    changes.unlisted = { set: exec.unlisted, delete: exec.deletedKeys };
    changes.missingSince.set = guard.marks.set;
    changes.missingSince.delete = [...guard.marks.clear, ...exec.deletedKeys.filter((k) => missingSince.has(k))];
    if (outcome === 'ok' && opened.mark !== undefined) changes.mark = opened.mark;
    if (feedDone) changes.recurring = { set: [...pending.recurring].filter((k) => !own.recurring.has(k)), delete: [...own.recurring].filter((k) => !pending.recurring.has(k)) };
    await commitChanges(store, changes);
    return finish({ outcome, message, remote: remoteInfo(remote), count: remote.count, guard, counted, exec });
  } finally {
    await thread?.close();
  }

  function finish(r: {
    outcome: SyncOutcome;
    message?: string;
    remote: SyncReport['remote'];
    count: number;
    guard?: GuardDecision;
    counted?: { protected: number; otherFeeds: number; unchanged: number; unchangedByStamp: number; duplicates: number };
    /** a dry run: what would be written */
    planned?: { creates: number; updates: number; deletes: PlannedDelete[] };
    exec?: ExecutionResult;
    dry?: boolean;
  }): SyncReport {
    const { exec: e, guard: g, planned: p } = r;
    const desired = collector.side;
    const { calls, retries } = callsBetween(callsBefore, deps.calls?.snapshot());
    const failures = e?.failures ?? [];
    // an interrupted run (shutdown, lost lock, deadline) is retried: the next one goes on from what this one wrote
    // (a read that failed with a transient answer, a 5xx, may succeed on a rerun even when nothing of it could be used)
    const retryable =
      r.outcome === 'unavailable' || r.outcome === 'aborted' || (r.outcome !== 'failed' && failures.some((f) => f.retryable)) || Boolean(desired.readErrorRetryable);
    const base: Omit<SyncReport, 'summary'> = {
      feed: feed.name,
      chatbot: feed.chatbot,
      outcome: r.outcome,
      retryable,
      ...(retryable && desired.readErrorRetryAt && { retryAt: desired.readErrorRetryAt }),
      dryRun: Boolean(r.dry),
      ...(r.message && { message: r.message }),
      counts: {
        feedRecords: desired.counts.records,
        valid: desired.counts.valid,
        rejected: desired.counts.rejected,
        skipped: desired.counts.skipped,
        removed: desired.counts.removed,
        feedDuplicates: desired.feedDuplicates.length,
        remote: r.count,
        created: p ? p.creates : (e?.created ?? 0),
        updated: p ? p.updates : (e?.updated ?? 0),
        deleted: p ? p.deletes.filter((d) => d.reason !== 'duplicate').length : (e?.deleted ?? 0),
        unchanged: r.counted?.unchanged ?? 0,
        unchangedByStamp: r.counted?.unchangedByStamp ?? 0,
        duplicatesRemoved: p ? p.deletes.filter((d) => d.reason === 'duplicate').length : (e?.duplicatesRemoved ?? 0),
        failed: failures.length,
        protected: r.counted?.protected ?? 0,
        otherFeeds: r.counted?.otherFeeds ?? 0,
        waitingGrace: g?.waiting.length ?? 0,
      },
      calls,
      retries: retries + (e?.createResends ?? 0),
      failures,
      rejected: desired.rejected,
      feedDuplicates: desired.feedDuplicates,
      guard: {
        outcome: g?.outcome ?? 'none',
        reasons: g?.reasons ?? [],
        ...(g?.message && { message: g.message }),
        withheld: g?.withheld.length ?? 0,
        waiting: g?.waiting.length ?? 0,
      },
      unmapped: unmapped.list(),
      ...(replacedValues.size && { valuesReplaced: [...replacedValues].map(([field, count]) => ({ field, count })).sort((a, b) => b.count - a.count) }),
      source: {
        mode: desired.mode,
        ...(since !== undefined && { since }),
        complete: desired.complete,
        ...(desired.readError && { error: desired.readError }),
        ...(readStats && { pages: readStats.pages, requests: readStats.requests, ...(readStats.warnings.length && { warnings: [...readStats.warnings] }) }),
      },
      remote: r.remote,
      ...(r.dry && { plan: view }),
      ...(mediaReport && { media: mediaReport }),
      stateLocation: store.location,
      timings,
      durationMs: ms(),
      startedAt: startedAt.toISOString(),
      finishedAt: new Date().toISOString(),
    };
    const report: SyncReport = { ...base, summary: summaryLine(base, opts.attempt) };
    // info even when not ok: the report carries the detail, and the CLI prints it as a table
    logger.info({ outcome: r.outcome, ...(r.message && { detail: r.message }) }, report.summary);
    return report;
  }
}

/**
 * One verdict for the dry run and the real run: the dry run reports what the real run would. A read
 * that was not whole is `failed` when nothing of the feed could be used, else `partial`: never
 * `guard`, which says the feed shrank.
 */
function runOutcome(r: { stopped?: SyncOutcome; guard: GuardDecision; failures: number; readWhole: boolean; missed: boolean; records: number }): SyncOutcome {
  if (r.stopped) return r.stopped;
  if (!r.readWhole) return r.records > 0 ? 'partial' : 'failed';
  if (r.guard.outcome === 'tripped') return 'guard';
  return r.failures > 0 || r.missed ? 'partial' : 'ok';
}

/** What a person reads first: why the read was not whole (the server's answer, the page), else the guard's word. */
function runMessage(readWhole: boolean, guard: GuardDecision, readError: string | undefined, remote: RemoteSide, missed: string | undefined): string | undefined {
  if (readWhole) return [missed, guard.message].filter(Boolean).join('; ') || undefined;
  const held = guard.withheld.length ? `${guard.withheld.length} delete(s) withheld` : 'nothing was deleted';
  if (readError) return `the feed was not read whole, so ${held}: ${readError}`;
  return `the chatbot's listings could not all be paged, so ${held}: ${remote.problem ?? 'incomplete'}`;
}

function remoteInfo(remote: RemoteSide): SyncReport['remote'] {
  return {
    complete: remote.complete,
    pages: remote.pages,
    rounds: remote.rounds,
    virtualCount: remote.virtualCount,
    ...(remote.recalled && { recalled: remote.recalled }),
    ...(remote.problem && { problem: remote.problem }),
  };
}
