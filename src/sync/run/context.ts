// The run's context, in one place: what a run is given (SyncDeps, SyncOptions), what it holds while
// it goes (Run: the clock, each lane's paging and report), and what the lanes of one feed share
// (FeedContext, built once by feed-context.ts and never written after). The files of run/ pass it
// down; the steps (remote/, read/, plan/, write/, settle/, report/) never see it: each is called
// with the parts it needs and returns what it learned.
import type { FromEnv } from '../../config/env-words.js';
import type { Refusal } from '../model/refusal.js';
import type { RuleChange } from '../settle/rule-change.js';
import type { CallCounter, CallCounts } from '../../api/call-counter.js';
import type { ChatbotApi } from '../../api/types.js';
import type { Budgets } from '../../budget/budget.js';
import type { ApiConfig, FeedConfig } from '../../config/schema.js';
import type { FeedItem, OpenedFeed, SourceAsk } from '../../feeds/types.js';
import type { Logger } from '../../log.js';
import type { CompiledMapping } from '../../mapping/compile.js';
import type { MappedItem } from '../../mapping/types.js';
import type { MediaConfig, MediaStep, MediaStepOptions } from '../../media/index.js';
import type { KvStore } from '../../state/kv-store.js';
import type { PlanOptions } from '../model/plan-types.js';
import type { LaneJobs } from './lane-jobs.js';
import type { LaneCommitInput } from '../settle/lane-commit.js';
import type { PlanView } from '../model/outcome.js';
import type { Lane } from '../read/lanes.js';
import type { FeedRead, ReadingLane } from '../read/read-feed.js';
import type { EchoFiles } from '../remote/page-echo.js';
import type { PagedChatbot } from '../remote/page-chatbot.js';
import type { RemoteIndex } from '../remote/remote-index.js';
import type { ChangeSink } from '../model/changes.js';
import type { LaneReportInput } from '../report/lane-report.js';
import type { SyncProgress } from '../report/progress.js';
import type { failedReport, SyncReport } from '../report/report.js';
import type { FeedState } from '../model/state-names.js';

export type { SyncProgress } from '../report/progress.js';

export interface SyncDeps {
  api: ChatbotApi;
  store: KvStore;
  /** every feed of the config: the writers of each chatbot are found among them (their listings are left alone) */
  configFeeds: ReadonlyArray<Pick<FeedConfig, 'name' | 'keyBy' | 'chatbot' | 'chatbots'>>;
  logger: Logger;
  /** folder relative feed paths resolve against (the config file's) */
  baseDir: string;
  apiConfig: ApiConfig;
  /** the config's values read from the environment: a refused credential names the variable behind its key (LoadedConfig's; FeedContext.refusalMessage) */
  fromEnv?: FromEnv;
  signal?: AbortSignal;
  /** counts this run's API calls for the report (fed by the client's onCall) */
  calls?: CallCounter;
  onProgress?: (p: SyncProgress) => void;
  /** feed source request budgets (source.limits), shared through Redis in a worker */
  budgets?: Budgets;
  /** each lane's change log: told of every write (or, in a dry run, planned write), rejected record and held-back delete */
  changes?: (lane: Lane) => ChangeSink | undefined;
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
  /** RESO: a full pull instead of an incremental one; any feed: read whole even where its seal holds (settle/seal.ts) */
  full?: boolean;
  /**
   * what the caller asks of the feed's source beyond its ordinary read (feeds/types.ts SourceAsks,
   * declared by each source: a RESO keys-only reconcile, a run of pushed events); the run hands it on
   */
  ask?: SourceAsk;
  attempt?: { made: number; max: number };
  /** the queue job the run is an attempt of: each lane that ends ok records it (settle/lane-done.ts) */
  jobId?: string;
}

/**
 * What only tests set, passed apart from the options (runSync's and syncFeed's last argument), so
 * that no caller in src/ can: the run's clock, and the read forced one way where the run would choose.
 */
export interface SyncTestHooks {
  /** the run's clock (grace periods, sold windows, a source's dated records); the machine's by default */
  now?: () => Date;
  /** CSV files of at least this many bytes are read by a thread of their own (default THREAD_MIN_BYTES) */
  threadMinBytes?: number;
  /** such a file is read by its thread even when its records are mostly in step by their stamps (mostlyMapped) */
  threadAlways?: boolean;
  /** false: the feed is read only once its chatbot is paged, never beside the paging (read-early.ts readsWhilePaging; tests hold the two ways to one outcome) */
  besidePaging?: boolean;
  /** false: a feed is read even where its seal holds, and no seal is stored (run/feed-seal.ts; tests hold the two ways to one outcome) */
  seal?: boolean;
  /** chatbots paged at once (default PAGINGS_AT_ONCE, page-chatbot.ts; 1: one after another; tests hold the two to one outcome) */
  pagingsAtOnce?: number;
  /** chatbots whose state is read at once (default STATE_READS_AT_ONCE, settle/state.ts; Infinity: every one at the run's start, the plain rule) */
  stateReadsAtOnce?: number;
  /** lanes settled together (default all of a feed's: their commits a batch of lanes in one apply, then their change log records and alert rules at once; 1: each lane's in turn, the plain rule) */
  lanesSettledAtOnce?: number;
}

/** The options as the run's steps read them: the caller's, and the test hooks when a test gave any. */
export type RunOptions = SyncOptions & SyncTestHooks;

/** A feed's own deadline (feeds[].deadlineMinutes), joined with the caller's signal. */
export interface FeedClock {
  signal: AbortSignal;
  deadline: AbortSignal;
  message(): string | undefined;
}

/** A chatbot's paging as its lanes see it; `countedIn`: the lane whose report counts its calls. */
export type Paged = PagedChatbot & { remoteMs: number; countedIn: string };

/** One run (sync-run.ts): its clock, and per lane its chatbot's paging and, at the end, its report. */
export interface Run {
  startedAt: Date;
  ms(): number;
  /** each lane's calls before the run (the counter may have counted earlier runs) */
  callsBefore: Map<Lane, CallCounts | undefined>;
  clock(feed: FeedConfig): FeedClock;
  paged: Map<Lane, Paged>;
  reports: Map<Lane, SyncReport>;
  /** where its writes go, chosen once (write-side.ts) */
  writes: WriteSide;
}

/**
 * Where a run's writes go (write-side.ts): sent, or recorded by a dry run. Each part of the run that
 * differs in a dry run asks the side: the paging, each lane's executor and commit, the media mirror,
 * the report of a lane the run never reported.
 */
export interface WriteSide {
  /** whether the paging of these lanes keeps each compared row (the plan view and the change log name each change old → new) */
  keepsCompared(lanes: readonly Lane[]): boolean;
  /** one lane's executor, its commit, and (a recording side) what it recorded instead of sending */
  lane(l: Lane, ctx: FeedContext, parts: LaneWriteParts): Pick<LiveLane, 'executor' | 'acked' | 'view'>;
  /** the settled lanes' state committed, in their order (settle/lane-commit.ts commitLanes); a dry run's commits nothing */
  commit(inputs: readonly LaneCommitInput[]): Promise<void>;
  /** the feed's media mirror step (a recording side's plans its photos, fetching and deleting none) */
  mediaStep(options: MediaStepOptions): MediaStep;
  /** the report of a lane the run ended before reporting */
  unreported(r: Parameters<typeof failedReport>[0]): SyncReport;
}

/** What a lane's executor is given beside the feed's context. */
export interface LaneWriteParts {
  remote: RemoteIndex;
  ignore: ReadonlySet<string>;
  changes: ChangeSink | undefined;
}

/** A lane whose chatbot was paged: it reads, plans and writes. */
export interface LiveLane extends ReadingLane {
  planner: LaneJobs;
  /**
   * once every write the API acknowledged is in the store (settle/acked.ts), before the lane's
   * commit (WriteSide.commit, which may delete a key of it): how many are (the commit leaves them
   * out when they are all of its written pairs: LaneCommitInput.ackedStored)
   */
  acked(): Promise<number>;
  /** a dry run: what its executor recorded instead of sending (write/record.ts) */
  view?: PlanView;
  remote: RemoteIndex;
  paged: Extract<Paged, { ok: true }>;
  own: FeedState;
  missingSince: ReadonlyMap<string, string>;
  planOptions: PlanOptions;
  /** the display rules this run applies against those the lane's last run applied (settle/rule-change.ts) */
  rules: RuleChange;
}

/** What a lane's report says that its feed's context does not fill in. */
export type LaneReportFields = Omit<
  LaneReportInput,
  'feed' | 'chatbot' | 'unmapped' | 'calls' | 'stateLocation' | 'startedAt' | 'durationMs' | 'attempt'
>;

/** What the lanes of one feed share in a run: built once before the read (feed-context.ts), not written after. */
export interface FeedContext {
  readonly feed: FeedConfig;
  readonly deps: SyncDeps;
  readonly opts: RunOptions;
  readonly run: Run;
  readonly clock: FeedClock;
  readonly logger: Logger;
  readonly compiled: CompiledMapping;
  /** the feed's records are mostly in step by their stamps (sync-run.ts mostlyMapped): mostly never mapped */
  readonly mostlyInStep: boolean;
  /** how many unmapped values the mapping has met so far (a record that meets one gets no stamp) */
  unmappedSeen(): number;
  /** one feed item mapped for the chatbot; a value replaced by its rule's default (onInvalid: default) is counted */
  map(item: FeedItem, chatbot: string): MappedItem;
  /** the progress line (SyncDeps.onProgress): records read so far */
  progress(phase: 'feed', done: number): void;
  /** one write done, of any lane of the feed: the progress line's writes done are the feed's */
  wrote(): void;
  /** writes the progress line counts toward: the planned creates and updates once the feed is read, then each lane's delete batches */
  addWrites(n: number): void;
  /** the lane's report, into the run's reports */
  report(lane: Lane, r: LaneReportFields): void;
  /**
   * a refused credential in words (util/auth.ts), with the variable behind its key when the config
   * read it from the environment (SyncDeps.fromEnv): the one place they are made; the steps record
   * the refusal as a value (model/refusal.ts). Undefined for none.
   */
  refusalMessage(refused: Refusal | undefined): string | undefined;
}

/** What the read of a feed learned (feed-run.ts), for settling each of its lanes (lane-settle.ts). */
export interface AfterRead {
  read: FeedRead;
  opened: OpenedFeed;
  /** the media mirror of the feed, when media.mirror is set */
  media: MediaStep | undefined;
  lanes: readonly LiveLane[];
  /** ms into the run when the feed had been read */
  feedMs: number;
}
