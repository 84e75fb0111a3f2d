// What formatSyncReport (report-format.ts) reads of a sync report, and no more. `enqueue --wait`
// formats a job's return value, which a worker of another version may have written, as far as a
// schema checked it (cli/job-report.ts); the compiler holds that schema to every field named here,
// so a formatter that reads one more field names it here first. A SyncReport is one; the words a
// formatter only prints or compares (an outcome, a mode) are strings, whatever their version says.
import type { PositionView } from '../../feeds/position.js';
import type { ChangeView } from '../../format/change.js';
import type { MediaReport } from '../../media/report.js';
import type { DisplaySummary, SectionText, SourceRead, SyncCounts, SyncReport } from './report.js';

/** A write that failed (model/execution.ts ItemFailure): its op as it was said. */
export interface ItemFailureView {
  key: string;
  op: string;
  reason: string;
  retryable: boolean;
}

export interface SyncReportView extends Pick<
  SyncReport,
  'feed' | 'chatbot' | 'retryable' | 'dryRun' | 'message' | 'retries' | 'valuesReplaced' | 'invalidText'
> {
  outcome: string;
  counts: Pick<
    SyncCounts,
    | 'feedRecords'
    | 'valid'
    | 'rejected'
    | 'skipped'
    | 'removed'
    | 'feedDuplicates'
    | 'remote'
    | 'created'
    | 'updated'
    | 'deleted'
    | 'unchanged'
    | 'duplicatesRemoved'
    | 'failed'
    | 'protected'
    | 'otherFeeds'
    | 'waitingGrace'
    | 'unwritten'
    | 'unplanned'
    | 'rewritten'
    | 'writtenThenGone'
  >;
  deletedByReason?: Partial<Record<string, number>>;
  calls: { byEndpoint: Record<string, number>; total: number };
  failures: ItemFailureView[];
  rejected: Array<{ position: PositionView; key?: string; reasons: string[] }>;
  feedDuplicates: Array<{ key: string; position: PositionView }>;
  display?: Omit<DisplaySummary, 'purpose'> & { purpose: string };
  /** (a report of an older version may have none) */
  unmapped?: SyncReport['unmapped'];
  guard: { outcome: string; reasons: string[] };
  source: SourceView;
  remote: Pick<SyncReport['remote'], 'complete' | 'problem' | 'pagingCountedIn'>;
  plan?: {
    creates: string[];
    updates: Array<{ key: string; reason: string; changes: ChangeView[] }>;
    deletes: Array<{ key: string; reason: string; deleteKey: string }>;
  };
  media?: MediaReport;
  stateLocation: string;
  summary: string;
}

/** How the feed was read (report.ts SourceRead), as the text report prints it. */
export interface SourceView extends Pick<
  SourceRead,
  'since' | 'complete' | 'error' | 'status' | 'pages' | 'requests' | 'requestsBy' | 'tokenCalls' | 'bytes' | 'warnings'
> {
  mode: string;
  sections?: Array<Pick<SectionText, 'lines' | 'tellsTheRead'>>;
}
