// What `enqueue --wait` prints of a job: its return value (a failed job's: the report run history
// kept), unknown until checked here. The one who wrote it may be a worker of another feedsync version
// (a rolling upgrade) or a hand in Redis; cast to the report's type it printed an undo's omitted count
// as `[object Object]`, and another shape crashed the formatter. Each schema holds what its kind's
// formatter reads (other fields pass as they are): a value it accepts prints whole, one it refuses is
// said, field by field. A value accepted is typed as what its schema checked, and each formatter takes
// its view (what it reads: SyncReportView, …), so enqueue.ts compiles only where the schema's type is
// one; `Names` holds each schema to every field its view names, optional ones too (a field left out
// of a schema would pass as assignable). `Covers` keeps every schema no stricter than its report type.
import { z } from 'zod';
import type { JobKind } from '../queue/index.js';
import type { SettingsReport, SettingsReportView } from '../settings/index.js';
import type { SmokeReport, SmokeReportView } from '../smoke/index.js';
import type { SyncReport, SyncReportView } from '../sync/index.js';
import type { UndoReport, UndoReportView } from '../undo/index.js';

const count = z.number();
const text = z.string();
const texts = z.array(text);
const counts = <K extends string>(keys: readonly K[]) =>
  z.object(Object.fromEntries(keys.map((k) => [k, count])) as Record<K, typeof count>);

const FieldChange = z.object({
  field: text,
  old: z.unknown(),
  new: z.unknown(),
  oldNotKept: z.literal(true).optional(),
  oldWithheld: z.literal(true).optional(),
  newWithheld: z.literal(true).optional(),
});
const ItemFailure = z.object({ key: text, op: text, reason: text, retryable: z.boolean() });
const Position = z.object({
  file: text,
  line: count.optional(),
  index: count,
  id: text.optional(),
  ids: z.record(text, text).optional(),
});

/** A thrown error's report (outcome 'error', or a thrown guard's, with a code): only its summary is printed. */
const ErrorReport = z.object({ summary: text.optional() });

const SyncLane = z.object({
  feed: text,
  chatbot: text,
  outcome: text,
  retryable: z.boolean(),
  dryRun: z.boolean(),
  message: text.optional(),
  counts: counts([
    'feedRecords',
    'valid',
    'rejected',
    'skipped',
    'removed',
    'feedDuplicates',
    'remote',
    'created',
    'updated',
    'deleted',
    'unchanged',
    'duplicatesRemoved',
    'failed',
    'protected',
    'otherFeeds',
    'waitingGrace',
  ]).extend({
    unwritten: count.optional(),
    unplanned: count.optional(),
    rewritten: count.optional(),
    writtenThenGone: count.optional(),
  }),
  deletedByReason: z.record(text, count.optional()).optional(),
  calls: z.object({ byEndpoint: z.record(text, count), total: count }),
  retries: count,
  failures: z.array(ItemFailure),
  rejected: z.array(z.object({ position: Position, key: text.optional(), reasons: texts })),
  feedDuplicates: z.array(z.object({ key: text, position: Position })),
  display: z
    .object({
      purpose: text,
      soldDays: count,
      hidden: z.record(text, count.optional()),
      addressWithheld: count,
      held: count,
    })
    .optional(),
  unmapped: z.array(z.object({ field: text, value: text, count })).optional(),
  valuesReplaced: z.array(z.object({ field: text, count })).optional(),
  invalidText: z.object({ records: count, first: text, field: text, encoding: text }).optional(),
  guard: z.object({ outcome: text, reasons: texts }),
  source: z.object({
    mode: text,
    since: text.optional(),
    complete: z.boolean(),
    error: text.optional(),
    status: count.optional(),
    pages: count.optional(),
    requests: count.optional(),
    requestsBy: z.record(text, count.optional()).optional(),
    tokenCalls: count.optional(),
    bytes: count.optional(),
    sections: z.array(z.object({ lines: texts, tellsTheRead: z.literal(true).optional() })).optional(),
    warnings: texts.optional(),
  }),
  remote: z.object({ complete: z.boolean(), problem: text.optional(), pagingCountedIn: text.optional() }),
  plan: z
    .object({
      creates: texts,
      updates: z.array(z.object({ key: text, reason: text, changes: z.array(FieldChange) })),
      deletes: z.array(z.object({ key: text, reason: text, deleteKey: text })),
    })
    .optional(),
  media: z
    .object({
      downloaded: count,
      reused: count,
      failed: count,
      bytes: count,
      deleted: count,
      waitingGrace: count,
      storageError: text.optional(),
      failures: z.array(z.object({ listing: text, url: text, reason: text })),
      failuresOmitted: count,
      dry: z.object({ download: count, delete: count, downloads: texts, deletes: texts }).optional(),
    })
    .optional(),
  stateLocation: text,
  summary: text,
});
/** a job of several lanes (feeds run together, a routed feed) returns each lane's report */
const SyncLanes = z.object({ lanes: z.array(SyncLane) });

const SettingsJob = z.object({
  chatbots: z.array(
    z.object({
      serialNumber: text,
      status: text,
      fields: texts,
      issues: z.array(z.object({ field: text, value: z.unknown(), rule: text })).optional(),
      error: z.object({ message: text }).optional(),
      body: z.unknown().optional(),
    }),
  ),
  summary: text,
});

const SmokeJob = z.object({
  chatbots: z.array(
    z.object({
      serialNumber: text,
      ok: z.boolean(),
      latencyMs: count,
      firstFragmentMs: count.optional(),
      streamMs: count.optional(),
      checks: z.array(z.object({ name: text, ok: z.boolean(), detail: text })),
    }),
  ),
  summary: text,
});

const UndoJob = z.object({
  runId: text,
  undoOf: text,
  dryRun: z.boolean(),
  message: text.optional(),
  plan: z.object({
    creates: texts,
    updates: z.array(z.object({ key: text, changes: z.array(FieldChange) })),
    deletes: texts,
    omitted: z.object({ creates: count.optional(), updates: count.optional(), deletes: count.optional() }).optional(),
  }),
  conflicts: z.array(z.object({ key: text, forced: z.boolean().optional(), reason: text })),
  cannot: z.array(z.object({ key: text.optional(), reason: text })),
  failures: z.array(ItemFailure),
  next: z.object({ incremental: text.optional(), full: text }),
  summary: text,
});

/** true when every T is accepted by the schema: the schema checks nothing T does not promise */
type Covers<T, S extends z.ZodType> = T extends z.input<S> ? true : false;
const covered: [
  Covers<SyncReport, typeof SyncLane>,
  Covers<{ lanes: SyncReport[] }, typeof SyncLanes>,
  Covers<SettingsReport, typeof SettingsJob>,
  Covers<SmokeReport, typeof SmokeJob>,
  Covers<UndoReport, typeof UndoJob>,
] = [true, true, true, true, true];
void covered;

/**
 * The fields `V` names that `C` does not, at any depth, by their paths ("source.status"); never when
 * none. A record in V (any string a key) is named only by a record in C.
 */
type Unnamed<V, C, At extends string = ''> = V extends readonly (infer E)[]
  ? C extends readonly (infer F)[]
    ? Unnamed<E, F, `${At}[]`>
    : At
  : V extends object
    ? {
        [K in keyof V & string]-?: K extends keyof C
          ? Unnamed<NonNullable<V[K]>, NonNullable<C[K]>, At extends '' ? K : `${At}.${K}`>
          : At extends ''
            ? K
            : `${At}.${K}`;
      }[keyof V & string]
    : never;
/** true when the schema checks every field the view names; else the paths of those it does not (the compiler says them) */
type Names<V, S extends z.ZodType> = [Unnamed<V, z.input<S>>] extends [never] ? true : Unnamed<V, z.input<S>>;
const named: [
  Names<SyncReportView, typeof SyncLane>,
  Names<SettingsReportView, typeof SettingsJob>,
  Names<SmokeReportView, typeof SmokeJob>,
  Names<UndoReportView, typeof UndoJob>,
] = [true, true, true, true];
void named;

/**
 * What `schema` checked of a value it accepts: its input type, what the value itself is (the output
 * type would be a parsed copy's, which a default or a transform would make something the value is not).
 */
type Checked<S extends z.ZodType> = z.input<S>;

/**
 * A type guard by `schema`: the value is what the schema checked, as it is, not a parsed copy
 * (which would drop the fields the schema does not name).
 */
function guard<S extends z.ZodType>(schema: S) {
  return (value: unknown): value is Checked<S> => schema.safeParse(value).success;
}
const isSyncLane = guard(SyncLane);
const isSettings = guard(SettingsJob);
const isSmoke = guard(SmokeJob);
const isUndo = guard(UndoJob);
const SCHEMAS = { settings: SettingsJob, smoke: SmokeJob, undo: UndoJob } as const;

/** The kinds of job `enqueue` queues, each with its report. */
export type ReportKind = Extract<JobKind, 'sync' | 'settings' | 'smoke' | 'undo'>;

/** A job's report as checked, typed as its schema checked it (what its kind's formatter takes), or a thrown error's summary. */
export type JobReport =
  | { kind: 'error'; summary: string }
  | { kind: 'sync'; lanes: Array<Checked<typeof SyncLane>> }
  | { kind: 'settings'; report: Checked<typeof SettingsJob> }
  | { kind: 'smoke'; report: Checked<typeof SmokeJob> }
  | { kind: 'undo'; report: Checked<typeof UndoJob> };

/**
 * `value` checked as the report of a `kind` job: the report, or what is wrong with it (each field by
 * its path, at most five), for a message that names the job.
 */
export function readJobReport(kind: ReportKind, value: unknown): { report: JobReport } | { problem: string } {
  if (value === null || typeof value !== 'object' || Array.isArray(value))
    return {
      problem: `the value is ${Array.isArray(value) ? 'an array' : value === null ? 'null' : typeof value}, not a report`,
    };
  // a thrown error's report (outcome 'error', or a thrown guard's: it has a code) has only a summary
  if ('code' in value || ('outcome' in value && value.outcome === 'error')) {
    const e = ErrorReport.safeParse(value);
    return e.success ? { report: { kind: 'error', summary: e.data.summary ?? '' } } : { problem: issuesOf(e.error) };
  }
  const report = reportOf(kind, value);
  if (report) return { report };
  const schema = kind !== 'sync' ? SCHEMAS[kind] : 'lanes' in value ? SyncLanes : SyncLane;
  const parsed = schema.safeParse(value);
  return { problem: parsed.success ? 'not a report of its kind' : issuesOf(parsed.error) };
}

/** The value as its kind's report when its guard accepts it. */
function reportOf(kind: ReportKind, value: object): JobReport | undefined {
  switch (kind) {
    case 'sync': {
      const lanes = 'lanes' in value ? value.lanes : [value];
      return Array.isArray(lanes) && lanes.every(isSyncLane) ? { kind, lanes } : undefined;
    }
    case 'settings':
      return isSettings(value) ? { kind, report: value } : undefined;
    case 'smoke':
      return isSmoke(value) ? { kind, report: value } : undefined;
    case 'undo':
      return isUndo(value) ? { kind, report: value } : undefined;
  }
}

/** zod's words, shorter: "missing" for a field that is not there */
const said = (message: string) =>
  message
    .replace(/^Invalid input: expected (.+), received undefined$/, 'missing (expected $1)')
    .replace(/^Invalid input: /, '');

function issuesOf(error: z.ZodError): string {
  const shown = error.issues
    .slice(0, 5)
    .map((i) => `${i.path.length ? i.path.join('.') : '(the value)'}: ${said(i.message)}`);
  const more = error.issues.length > shown.length ? `; and ${error.issues.length - shown.length} more` : '';
  return `${shown.join('; ')}${more}`;
}
