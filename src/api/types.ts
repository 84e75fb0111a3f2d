// The public face of the API client. sync/, settings/ and smoke/ code against this interface;
// tests may pass a fake that implements it.
import type { Budget } from '../budget/budget.js';
import type {
  AskAnswer,
  AskRequest,
  DeleteData,
  DeleteRequest,
  EditSettingsRequest,
  EndpointName,
  ListData,
  ListingCreate,
  ListingUpdate,
  ListRequest,
  StreamEvent,
} from './schemas.js';

export interface CallOptions {
  signal?: AbortSignal;
  /** false: one attempt only (used where the caller must check before retrying, e.g. a create). */
  retry?: boolean;
  /** whose call it is (a sync run's lane): onCall's events carry it, so a counter counts the call for it too (call-counter.ts) */
  scope?: string;
}

/** Emitted once per HTTP attempt: the report counts calls and retries, metrics time them. */
export interface ApiCallEvent {
  endpoint: EndpointName;
  attempt: number;
  durationMs: number;
  httpStatus?: number;
  apiCode?: number;
  outcome: 'ok' | 'retry' | 'error';
  error?: string;
  /** with outcome 'retry': the wait before the next attempt (Retry-After or backoff) */
  retryDelayMs?: number;
  /** the call's CallOptions.scope */
  scope?: string;
}

/** A response as received, before any check: what a list page decoder reads. */
export interface RawBody {
  status: number;
  /** the body, bounded by maxResponseBytes */
  bytes: Uint8Array;
}

/**
 * How listListingsAs turns a list page into the caller's value T. `raw` may decode the body elsewhere
 * (a worker thread): it returns T only when the body plainly is a successful page (quickListPage), and
 * undefined otherwise, never an error; the client then checks the response as listListings does (its
 * errors, its retries) and hands the checked Data to `data`. The two must give the same T for a page.
 */
export interface ListPageDecoder<T> {
  raw(res: RawBody): Promise<T | undefined>;
  data(data: ListData): T;
}

export interface ChatbotApi {
  editSettings(req: EditSettingsRequest, opts?: CallOptions): Promise<number>;
  ask(req: AskRequest, opts?: CallOptions): Promise<AskAnswer>;
  /** Fragments as they arrive, ending with one `final` event. */
  askStream(req: AskRequest, opts?: CallOptions): AsyncIterable<StreamEvent>;
  createListing(listing: ListingCreate, opts?: CallOptions): Promise<string>;
  updateListing(listing: ListingUpdate, opts?: CallOptions): Promise<number>;
  listListings(req: ListRequest, opts?: CallOptions): Promise<ListData>;
  /**
   * listListings, decoded by the caller (the same call, budget, retries and errors); optional: a
   * client without it is paged through listListings.
   */
  listListingsAs?<T>(req: ListRequest, decoder: ListPageDecoder<T>, opts?: CallOptions): Promise<T>;
  deleteListings(req: DeleteRequest, opts?: CallOptions): Promise<DeleteData>;
}

export interface RetryPolicy {
  /** attempts after the first */
  retries: number;
  baseDelayMs: number;
  maxDelayMs: number;
}

export interface ApiClientOptions {
  baseUrl: string;
  secretKey: string;
  sessionKey: string;
  /** total deadline of one attempt, the response body included */
  timeoutMs: number;
  /** most bytes of one response body; a larger one fails the call (default 8 MiB) */
  maxResponseBytes?: number;
  retry?: Partial<RetryPolicy>;
  /**
   * the credential's budget (rate, calls in flight, shared pause); runtime.ts passes the one shared
   * through Redis. Without it the client makes one of its own from ratePerSecond and concurrency.
   */
  budget?: Budget;
  /** requests a second for a budget of the client's own; 0 or undefined: unlimited */
  ratePerSecond?: number;
  /** calls in flight for a budget of the client's own; undefined: unlimited */
  concurrency?: number;
  onCall?: (event: ApiCallEvent) => void;
}
