// What crosses between the feed thread (feed-thread.ts) and its worker (feed-worker.ts): a read to
// start, its batches and its end. Apart from both, so that neither imports the other.
import type { ErrorPlace } from '../../errors.js';
import type { CsvSource } from '../../feeds/config-schema.js';
import type { RecordPosition } from '../../feeds/types.js';
import type { MappingConfig } from '../../mapping/config-schema.js';

/** One read: a CSV file, its mapping's key, and the pace. */
export interface FeedRead {
  id: number;
  source: CsvSource & { path: string };
  baseDir: string;
  mapping: MappingConfig;
  keyBy: 'MLSNumber' | 'URL';
  /** batches sent and not yet taken, at most */
  ahead: number;
  /** records a batch holds, at most */
  batchSize: number;
}

/** What the main thread sends: a read to start, batches of a read taken, a read to stop. */
export type FeedWorkerTask = { read: FeedRead } | { took: number; id: number } | { stop: number };

/**
 * Items in feed order: `kinds` says, item by item, whether it is the next of the joined-form
 * records (0: its text, key and line) or the next of `others` (1: any other item, as it crosses,
 * its key in `otherKeys`).
 */
export interface FeedBatch {
  kinds: Uint8Array<ArrayBuffer>;
  texts: string[];
  keys: Array<string | undefined>;
  lines: Int32Array<ArrayBuffer>;
  indexes: Int32Array<ArrayBuffer>;
  others: WireItem[];
  /** the listing key of each of `others`, as the worker read it (mapping/item-key.ts) */
  otherKeys: Array<string | undefined>;
}

export type WireItem =
  | { kind: 'record'; position: RecordPosition; data: Record<string, unknown>; text?: string }
  | {
      kind: 'error';
      position: RecordPosition;
      error: { reason: string; place: ErrorPlace };
      data?: Record<string, unknown>;
      standalone?: boolean;
    }
  | { kind: 'removed'; position: RecordPosition; data: Record<string, unknown> };

/** What ended the read, as it crosses: the reader's FeedReadError, or anything else (a defect). */
export type WireFailure =
  | {
      kind: 'feed';
      reason: string;
      place: ErrorPlace;
      retryable: boolean;
      status?: number;
      retryAt?: string;
      credentialKey?: string;
      refused?: true;
    }
  | { kind: 'crash'; message: string };

/** What the worker answers, per read: the header, batches, then its end: read whole, failed, or stopped when told. */
export type FeedWorkerMessage = { id: number } & (
  { header: string[] } | { batch: FeedBatch } | { end: 'read' | 'stopped' } | { failed: WireFailure }
);
