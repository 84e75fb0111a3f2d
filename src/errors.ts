// The error family of feedsync. Every error a person may see is one of these: it carries a stable
// `code`, the place it happened, and whether retrying the same work can help (`retryable`).
// queue/ maps `retryable: false` to BullMQ's UnrecoverableError; the CLI maps codes to exit status.

export interface ErrorPlace {
  /** file path or URL of a feed, config file, etc. */
  file?: string;
  line?: number;
  /** record index within a feed (0-based) or a record id */
  record?: number | string;
  field?: string;
  value?: unknown;
}

export abstract class FeedsyncError extends Error {
  abstract readonly code: string;
  abstract readonly retryable: boolean;

  constructor(message: string, options?: { cause?: unknown }) {
    super(message, options);
    this.name = new.target.name;
  }

  toJSON(): Record<string, unknown> {
    const { name, code, retryable, message } = this;
    return { ...plainFields(this), name, code, retryable, message };
  }
}

function plainFields(err: Error): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  for (const [k, v] of Object.entries(err)) {
    if (k === 'cause' || typeof v === 'function') continue;
    out[k] = v;
  }
  return out;
}

/** The service answered with a failure: non-2xx HTTP, `Success: false`, or `Code` other than 200. */
export class ApiError extends FeedsyncError {
  readonly code = 'API_ERROR';
  readonly retryable: boolean;
  constructor(
    readonly endpoint: string,
    readonly httpStatus: number,
    readonly apiCode: number | undefined,
    readonly apiMessage: string | undefined,
    options?: { cause?: unknown; retryable?: boolean },
  ) {
    super(
      `${endpoint} failed: HTTP ${httpStatus}` +
        (apiCode !== undefined ? `, Code ${apiCode}` : '') +
        (apiMessage ? `: ${apiMessage}` : ''),
      options,
    );
    this.retryable = options?.retryable ?? isRetryableStatus(effectiveStatus(httpStatus, apiCode));
  }
}

/** HTTP 429 (or Code 429): retry after the server's delay. */
export class RateLimitedError extends ApiError {
  override readonly code = 'RATE_LIMITED' as 'API_ERROR';
  constructor(
    endpoint: string,
    httpStatus: number,
    readonly retryAfterMs: number | undefined,
    apiMessage?: string,
  ) {
    super(endpoint, httpStatus, 429, apiMessage, { retryable: true });
  }
}

/** The body was not the JSON envelope (an HTML error page from a proxy, a truncated body). */
export class ResponseFormatError extends FeedsyncError {
  readonly code = 'BAD_RESPONSE';
  readonly retryable: boolean;
  constructor(
    readonly endpoint: string,
    readonly httpStatus: number,
    readonly bodySnippet: string,
    detail: string,
  ) {
    super(`${endpoint}: HTTP ${httpStatus}, ${detail}; body starts ${JSON.stringify(bodySnippet)}`);
    this.retryable = isRetryableStatus(httpStatus);
  }
}

/** The connection failed or was dropped before a response was read. */
export class NetworkError extends FeedsyncError {
  readonly code = 'NETWORK';
  readonly retryable = true;
  constructor(
    readonly endpoint: string,
    cause: unknown,
  ) {
    super(`${endpoint}: network error: ${causeMessage(cause)}`, { cause });
  }
}

export class TimeoutError extends FeedsyncError {
  readonly code = 'TIMEOUT';
  readonly retryable = true;
  constructor(
    readonly endpoint: string,
    readonly timeoutMs: number,
  ) {
    super(`${endpoint}: no response within ${timeoutMs} ms`);
  }
}

/**
 * The abort reason of a run an operator cancelled (`feedsync cancel`, queue/control.ts): the run ends
 * `cancelled` (sync/model/outcome.ts stoppedOutcome), not `aborted`. Not thrown: a signal's reason.
 */
export class CancelRequest extends Error {
  constructor(readonly by: string) {
    super(`cancelled by ${by}`);
    this.name = 'CancelRequest';
  }
}

/**
 * The abort reason of a worker's run whose BullMQ job lock was lost (queue/workers.ts: its renewal
 * found the lock gone or another's). The job is another attempt's now: a stalled check or a
 * sibling's sweep (queue/job-holders.ts) put it back to wait, where a worker takes it over and that
 * attempt records the job's real outcome. So this attempt ends `taken-over` (sync/model/outcome.ts
 * stoppedOutcome), not a failed run. A string: BullMQ's cancelJob passes its reason as one.
 */
export const JOB_LOCK_LOST = 'job lock lost: the job is taken over by another attempt';

/**
 * The abort reason of a worker's run whose job lock or chatbot lock was lost with the job itself: the
 * job is in no list of its queue (its keys lost in a failover to a replica that lacked them, evicted,
 * flushed, obliterated, deleted by hand: queue/job-gone.ts), so no attempt takes it over. A stopped
 * run (`aborted`), a failed one for the alert rules: nothing else will say that the run did not end.
 * A string, as JOB_LOCK_LOST.
 */
export const JOB_LOST =
  'job lost from Redis: it is in no list of its queue and no attempt will run it; enqueue it again';

/**
 * The abort reason of a worker's run whose chatbot lock was lost (locks/target-lock.ts: its renewal
 * failed, found the lock another's, or was not confirmed in time; its holder stops a third of the
 * TTL before the lock can expire, so before the job lock's loss is heard). Its worker leaves the job
 * as a lost job lock's is (queue/processor.ts takenOver): found stalled, it is taken over by another
 * attempt, which records the job's outcome. So this attempt ends `taken-over` too (stoppedOutcome);
 * unless its worker's look finds the job gone from Redis: then it stops with JOB_LOST instead.
 */
export const CHATBOT_LOCK_LOST = 'chatbot lock lost: the job is taken over by another attempt';

/**
 * The abort reason of a worker's running jobs when the worker shuts down gracefully (queue/workers.ts:
 * BullMQ's cancelAllJobs; queue/hand-back.ts moves each job back to wait, where another worker takes
 * it at once). The job did not fail: this attempt ends `handed-back` (sync/model/outcome.ts
 * stoppedOutcome), counted toward no failing streak; the attempt that takes it records its outcome.
 * A string: BullMQ's cancelAllJobs passes its reason as one.
 */
export const WORKER_SHUTDOWN = 'worker shutting down: job handed back to the queue';

/** Cancelled through an AbortSignal (job cancelled, SIGINT). Retrying is the caller's decision. */
export class AbortedError extends FeedsyncError {
  readonly code = 'ABORTED';
  readonly retryable = false;
  constructor(what: string, cause?: unknown) {
    super(`${what}: aborted`, { cause });
  }
}

/**
 * A request budget (a credential's per-day/hour quota, or a pause the service asked for) does not
 * allow the next call soon enough to wait for it. Retrying helps after `resetAt`.
 */
export class BudgetExhaustedError extends FeedsyncError {
  readonly code = 'BUDGET';
  readonly retryable = true;
  constructor(
    readonly budget: string,
    readonly resetAt: Date,
    readonly limit: string,
  ) {
    super(`${budget}: the request budget is spent (${limit}); it resets at ${resetAt.toISOString()}`);
  }
}

/** The config file (or a CLI argument) is wrong. `path` is the path inside the file, e.g. feeds[0].source.kind. */
export class ConfigError extends FeedsyncError {
  readonly code = 'CONFIG';
  readonly retryable = false;
  constructor(
    message: string,
    readonly file?: string,
    readonly issues: ReadonlyArray<ConfigIssue> = [],
  ) {
    super(issues.length ? `${message}\n${issues.map((i) => `  ${formatConfigIssue(i, file)}`).join('\n')}` : message);
  }
}

/** One problem in a config (or data) file: its path, its 1-based line when known, and what is wrong. */
export interface ConfigIssue {
  path: string;
  line?: number;
  message: string;
}

/** `feedsync.yaml:40: feeds[0].keyby is not a known key; did you mean keyBy?` */
function formatConfigIssue(issue: ConfigIssue, file = 'config'): string {
  const where = issue.line !== undefined ? `${file}:${issue.line}` : file;
  // A message that already starts with its path reads as a sentence; others are "path: message".
  const text = !issue.path || issue.message.startsWith(issue.path) ? issue.message : `${issue.path}: ${issue.message}`;
  return `${where}: ${text}`;
}

/** A feed could not be read whole: HTTP failure, truncated file, malformed document. */
export class FeedReadError extends FeedsyncError {
  readonly code = 'FEED_READ';
  /** the HTTP status the feed server answered with, when that is the failure */
  readonly status?: number;
  /** on a refused credential: the config key of the credential, e.g. `source.auth` (never its value) */
  readonly credentialKey?: string;
  /**
   * the source answered, and what it sent is not the feed the mapping reads (a CSV header without a
   * mapped column, an HTML page, a recordPath that matches nothing): the run ends `rejected`, and no
   * retry helps until the file or the mapping is fixed
   */
  readonly refused?: true;
  constructor(
    message: string,
    readonly place: ErrorPlace,
    readonly retryable: boolean,
    options?: { cause?: unknown; status?: number; retryAt?: Date; credentialKey?: string; refused?: boolean },
  ) {
    super(`${formatPlace(place)}: ${message}`, options);
    if (options?.refused) this.refused = true;
    if (options?.status !== undefined) this.status = options.status;
    if (options?.credentialKey !== undefined) this.credentialKey = options.credentialKey;
    if (options?.retryAt) this.retryAt = options.retryAt;
  }

  /** a retry helps only from then on (a spent request budget resets) */
  readonly retryAt?: Date;
}

/** One record of a feed could not be parsed; the rest of the feed goes on. */
export class RecordParseError extends FeedsyncError {
  readonly code = 'RECORD_PARSE';
  readonly retryable = false;
  /** what is wrong, without the place (reports show the place in a column of its own) */
  readonly reason: string;
  constructor(
    message: string,
    readonly place: ErrorPlace,
  ) {
    super(`${formatPlace(place)}: ${message}`);
    this.reason = message;
  }
}

export interface ValidationIssue {
  field: string;
  value: unknown;
  rule: string;
}

/** A record mapped to a listing that breaks the spec's rules. Every issue is kept, not only the first. */
export class ValidationError extends FeedsyncError {
  readonly code = 'VALIDATION';
  readonly retryable = false;
  constructor(
    readonly place: ErrorPlace,
    readonly issues: ReadonlyArray<ValidationIssue>,
  ) {
    super(`${formatPlace(place)}: ${issues.map(formatIssue).join('; ')}`);
  }
}

/** The chatbot's list could not be paged to its end (endless, repeated pages): nothing can be planned. */
export class PagingError extends FeedsyncError {
  readonly code = 'PAGING';
  readonly retryable = false;
}

/** A long-running process could not start (Redis does not answer, its port is taken). A restart may help. */
export class StartupError extends FeedsyncError {
  readonly code = 'STARTUP';
  readonly retryable: boolean;
  constructor(detail: string, options?: { cause?: unknown; retryable?: boolean }) {
    super(`worker cannot start: ${detail}`, options);
    this.retryable = options?.retryable ?? true;
  }
}

/**
 * What a caller does with Redis, for the fix an unanswered Redis names: `state`, a command that
 * keeps its state there (sync, settings, undo: `--no-redis` runs on the state file instead);
 * `read`, a command that reads or enqueues (runs, cancel, pause, history); `worker`, a starting worker.
 */
/**
 * What the caller does with Redis, which picks the fix the error names: 'state' (a command that keeps
 * its state there, refused before it starts), 'read' (the ops commands), 'worker', and 'midway' (a
 * command Redis stopped answering after it had started: what it did before stands).
 */
export type RedisUse = 'state' | 'read' | 'worker' | 'midway';

/**
 * The fix of each use, `source` being what gave the Redis's URL (RedisSettings.source: the config's
 * key with its file and line, or REDIS_URL): only one of them is read, so only that one is named.
 */
const REDIS_FIX: Record<RedisUse, (source: string) => { fix: string; credentials: string }> = {
  state: (source) => ({
    fix: `nothing was run and nothing written. Fix Redis (or ${source}), or run with --no-redis to use the state file alone, uncoordinated with the workers`,
    credentials: `; nothing was run and nothing written. Put the user and password Redis expects (redis://user:password@host:port) in ${source}, or run with --no-redis to use the state file alone, uncoordinated with the workers`,
  }),
  read: (source) => ({
    fix: `start Redis there, or fix ${source}`,
    credentials: `; put the user and password Redis expects (redis://user:password@host:port) in ${source}`,
  }),
  midway: (source) => ({
    fix: 'the command stopped there; what it did before stands (a sync goes on from its last saved state). Run it again once Redis answers; if Redis is up, check that it is not stalled (a full disk, a paused process) or unreachable from here',
    credentials: `; the command stopped there, what it did before stands. Put the user and password Redis expects (redis://user:password@host:port) in ${source}, and run it again`,
  }),
  worker: (source) => ({
    fix: `check ${source}, and that Redis is running`,
    credentials: `; put the user and password Redis expects (redis://user:password@host:port) in ${source}`,
  }),
};

/** What gave a Redis's URL where the caller did not say (RedisSettings.source says it). */
const SOME_SOURCE = "the config's redis section (or REDIS_URL, without one)";

/** A Redis as messages name it: where it is (no password) and what gave its URL (RedisSettings). */
export interface RedisPlace {
  where: string;
  source?: string;
}

/**
 * Redis did not answer within the bounded wait (redis/require-redis.ts, the one wait for it). For a
 * command that keeps state there, the command refuses to run (a run beside the workers, on a state
 * file they do not see, would write the chatbot twice); `--no-redis` runs on the state file alone,
 * on purpose. Exit status 1; a rerun may succeed, unless Redis refused the credentials.
 */
export class RedisUnavailableError extends FeedsyncError {
  readonly code = 'REDIS_UNAVAILABLE';
  readonly retryable: boolean;
  constructor(
    readonly redis: string,
    readonly detail: string,
    options?: { cause?: unknown; use?: RedisUse; source?: string },
  ) {
    const refused = refusedCredentials(detail);
    const use = options?.use ?? 'state';
    const { fix, credentials } = REDIS_FIX[use](options?.source ?? SOME_SOURCE);
    super(
      refused
        ? `Redis ${redis} refuses the user name or password (${refused})${credentials}`
        : `Redis ${redis} ${use === 'state' ? 'is configured but does not answer' : 'does not answer'} (${detail}); ${fix}`,
      { cause: options?.cause },
    );
    this.retryable = !refused; // the same password is refused again
  }
}

/** Redis's own words when it refused the credentials (WRONGPASS, NOAUTH, an AUTH error), else undefined. */
function refusedCredentials(detail: string): string | undefined {
  return /(WRONGPASS|NOAUTH|ERR AUTH)[^;]*/.exec(detail)?.[0].trim().replace(/\.$/, '');
}

/**
 * Something outside the code stops the command, and a person can fix it: a state file that is not
 * JSON, a file that cannot be read or written, a port in use. The message is one paragraph: the
 * thing, what is wrong, what to do, and (where it costs something) what doing it costs.
 */
export class EnvironmentError extends FeedsyncError {
  readonly code = 'ENVIRONMENT';
  readonly retryable = false;
  constructor(
    readonly subject: string,
    problem: string,
    remedy: string,
    options?: { cause?: unknown },
  ) {
    super(`${subject} ${problem}. ${remedy}.`, options);
  }
}

/** A safety guard refused the run (too many deletes, incomplete feed). Exit status 3. */
export class GuardError extends FeedsyncError {
  readonly code = 'GUARD';
  readonly retryable = false;
  constructor(
    message: string,
    readonly details: Record<string, unknown> = {},
  ) {
    super(message);
  }
}

/** `Status must be one of Active, Sold (got "X")`; a field with no value `is missing`, with the rule it must meet. */
export function formatIssue(i: ValidationIssue): string {
  if (i.value === undefined)
    return i.rule === 'is required' ? `${i.field} is missing` : `${i.field} is missing (${i.rule})`;
  return `${i.field} ${i.rule} (got ${printable(JSON.stringify(excerpt(i.value)) ?? 'undefined')})`;
}

/** How much of a refused value a report keeps. */
export const EXCERPT_CHARS = 80;

/**
 * A value cut for a report: a long string keeps its start and says how long it was; a long array keeps
 * its first items. Reports and run history stay small whatever a feed holds.
 */
export function excerpt(value: unknown, max = EXCERPT_CHARS): unknown {
  if (typeof value === 'string') return value.length > max ? `${value.slice(0, max)}… (${value.length} chars)` : value;
  if (Array.isArray(value))
    return value.length > 5
      ? [...value.slice(0, 5).map((v) => excerpt(v, max)), `… (${value.length} items)`]
      : value.map((v) => excerpt(v, max));
  if (value && typeof value === 'object') {
    const entries = Object.entries(value);
    return Object.fromEntries(entries.slice(0, 10).map(([k, v]) => [k, excerpt(v, max)]));
  }
  return value;
}

/** Text safe for a terminal: control, C1 and bidi-override characters shown as \u escapes, never sent raw. */
export function printable(text: string): string {
  return text.replace(
    /[\u0000-\u0008\u000B-\u001F\u007F-\u009F\u200E\u200F\u202A-\u202E\u2066-\u2069]/g,
    (c) => `\\u${c.charCodeAt(0).toString(16).padStart(4, '0')}`,
  );
}

export function formatPlace(p: ErrorPlace): string {
  const parts: string[] = [];
  if (p.file) parts.push(p.line !== undefined ? `${p.file}:${p.line}` : p.file);
  else if (p.line !== undefined) parts.push(`line ${p.line}`);
  if (p.record !== undefined) parts.push(`record ${p.record}`);
  if (p.field) parts.push(`field ${p.field}`);
  if ('value' in p && p.value !== undefined) parts.push(`value ${JSON.stringify(p.value)}`);
  return parts.join(', ') || 'feed';
}

/** The status an API answer stands for: its Code where the HTTP status says success, else the HTTP status. */
export function effectiveStatus(httpStatus: number, apiCode: number | undefined): number {
  // A real server may answer HTTP 200 with Success false; its Code then tells what happened.
  return httpStatus >= 200 && httpStatus < 300 && apiCode !== undefined ? apiCode : httpStatus;
}

/** 401 or 403 when the error is the API or a feed server refusing our credentials; else undefined. */
export function authStatus(err: unknown): 401 | 403 | undefined {
  const status =
    err instanceof ApiError
      ? effectiveStatus(err.httpStatus, err.apiCode)
      : err instanceof ResponseFormatError
        ? err.httpStatus
        : err instanceof FeedReadError
          ? err.status
          : undefined;
  return status === 401 || status === 403 ? status : undefined;
}

export function isRetryableStatus(status: number): boolean {
  return status === 408 || status === 429 || status >= 500;
}

/**
 * What went wrong, from an error and its causes, each thing said once: undici's "fetch failed"
 * wrapper gives way to its cause, and a code already in a message is not repeated
 * (`connect ECONNREFUSED 127.0.0.1:1`, not `ECONNREFUSED connect ECONNREFUSED 127.0.0.1:1`).
 */
export function causeMessage(cause: unknown): string {
  if (!(cause instanceof Error)) return String(cause);
  const parts: string[] = [];
  let e: unknown = cause;
  for (let depth = 0; e instanceof Error && depth < 5; depth++, e = e.cause) {
    if (e.message === 'fetch failed' && e.cause instanceof Error) continue;
    const code = (e as { code?: unknown }).code;
    const text = typeof code === 'string' && !e.message.includes(code) ? `${code} ${e.message}` : e.message;
    if (text && !parts.some((p) => p.includes(text))) parts.push(text);
  }
  return parts.join(': ') || cause.message;
}

export function isRetryable(err: unknown): boolean {
  return err instanceof FeedsyncError && err.retryable;
}

/** The words of a run its signal stopped (stoppedOutcome). */
export type StoppedOutcome = 'aborted' | 'cancelled' | 'taken-over' | 'handed-back';

/**
 * How a run its signal stopped ends, by the signal's reason: `cancelled` when an operator cancelled
 * it (`feedsync cancel`: no retry), `taken-over` when its worker's job lock or a worker job's chatbot
 * lock was lost (JOB_LOCK_LOST, CHATBOT_LOCK_LOST: the job goes back to the queue and another attempt
 * runs it, recording its own outcome; not a failed run), `handed-back` when its worker shut down gracefully (WORKER_SHUTDOWN: the job went back
 * to the queue at once and another worker runs it; not a failed run either), else `aborted` (its
 * deadline, a foreground run's lost chatbot lock, Ctrl-C: retried). The one place the word is chosen: the report, the change log's record of the run, the
 * alert rules and the run history (queue/processor.ts) all say this one, and a settings push's or a smoke run's report.
 */
export function stoppedOutcome(reason: unknown): StoppedOutcome {
  if (reason instanceof CancelRequest) return 'cancelled';
  if (reason === JOB_LOCK_LOST || reason === CHATBOT_LOCK_LOST) return 'taken-over';
  return reason === WORKER_SHUTDOWN ? 'handed-back' : 'aborted';
}
