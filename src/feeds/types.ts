// What a feed reader hands on: raw records with the place each came from, per-record parse errors
// that do not stop the feed, and RESO records that are no longer viewable (removed).
import type { RecordParseError } from '../errors.js';
import type { Logger } from '../log.js';
import type { KvStore } from '../state/kv-store.js';
import type { BeforeFeedRequest } from './http.js';

/** Where a record sits in its feed: file:line for CSV, record index (and id) for XML and RESO. */
export interface RecordPosition {
  /** file path or URL (without query string) of the feed */
  file: string;
  /** 1-based line where the record starts (CSV) */
  line?: number;
  /** 0-based index of the record in the feed */
  index: number;
  /** the record's own id when the reader knows it (RESO ListingKey) */
  id?: string;
}

export type FeedItem =
  | { kind: 'record'; position: RecordPosition; data: Record<string, unknown> }
  | { kind: 'error'; position: RecordPosition; error: RecordParseError }
  | { kind: 'removed'; position: RecordPosition; data: Record<string, unknown> };

export interface FeedContext {
  /** folder that relative `path`s resolve against (the config file's folder) */
  baseDir: string;
  /** where the RESO high-water mark is kept (namespace `reso-hwm`, key = feed name) */
  store: KvStore;
  logger: Logger;
  signal?: AbortSignal;
  /** RESO: ignore the high-water mark and pull everything */
  full?: boolean;
  /** awaited before every feed HTTP request (each attempt and redirect hop): per-credential rate limits */
  beforeRequest?: BeforeFeedRequest;
}

export interface OpenedFeed {
  items: AsyncIterable<FeedItem>;
  /**
   * 'incremental' when the items are only what changed since the last commit (a RESO feed with
   * `incremental: true`): keys absent from them are not gone. An incremental feed with no mark stored
   * yet pulls everything and turns 'full' once iteration has started, so read it after the items.
   */
  mode: 'full' | 'incremental';
  /** Persist the RESO high-water mark reached by `items`; call after a successful sync, never before. */
  commit(): Promise<void>;
}
