// What a feed reader hands on: raw records with the place each came from, per-record parse errors
// that do not stop the feed, and RESO records that are no longer viewable (removed).
import type { RecordParseError } from '../errors.js';
import type { Budgets } from '../budget/budget.js';
import type { Logger } from '../log.js';

/** Where a record sits in its feed: file:line for CSV and XML, record index (and id) for XML and RESO. */
export interface RecordPosition {
  /** file path or URL (without query string) of the feed */
  file: string;
  /** 1-based line where the record starts (CSV; XML: the line of its start tag) */
  line?: number;
  /** 0-based index of the record in the feed */
  index: number;
  /** the record's own id when the reader knows it (RESO ListingKey) */
  id?: string;
  /** the ids a person looks a record up by, in order, e.g. { ListingKey: 'K1000045', ListingId: 'RES1000045' } */
  ids?: Record<string, string>;
  /** how a reader that joins elements made this record, in words (MITS: its property, floorplan and unit); feed preview shows it */
  join?: string;
}

export type FeedItem =
  /**
   * `text`, when the reader has one, is the record as read in a form that determines `data` alone
   * (records of equal text have equal data), starting with a character that names the form. The
   * sync's record stamps hash it instead of serializing `data` (much cheaper for a CSV row).
   */
  | { kind: 'record'; position: RecordPosition; data: Record<string, unknown>; text?: string }
  /**
   * A record that could not be parsed. `data` holds the fields that could be read (the mapping
   * reads the key from it, so the listing is kept rather than deleted). `standalone: true` vouches
   * that the reader knows where the record began and ended, so no other record was lost with it;
   * without it the sync treats the feed as not read whole (no deletes that run).
   */
  | {
      kind: 'error';
      position: RecordPosition;
      error: RecordParseError;
      data?: Record<string, unknown>;
      standalone?: boolean;
    }
  /**
   * A record the source says is gone. `key`: its listing key, where the source resolved it from its own
   * state (reso/reso-key-map.ts: the record no longer returned cannot say the fields the key is read from);
   * without it the key is read from `data`.
   */
  | { kind: 'removed'; position: RecordPosition; data: Record<string, unknown>; key?: string };

/** A column a CSV feed's mapping reads (mapping/columns-needed.ts): the header must have one of `anyOf`. */
export interface ColumnNeed {
  /** what reads it: a listing field (Bedrooms), or `ExtensionColumn SourceStatus` */
  usedBy: string;
  anyOf: readonly string[];
}

export interface FeedContext {
  /** folder that relative `path`s resolve against (the config file's folder) */
  baseDir: string;
  /** the mark the last successful sync stored (OpenedFeed.mark of that run), from the sync's state */
  mark?: string;
  logger: Logger;
  signal?: AbortSignal;
  /** RESO: ignore the high-water mark and pull everything */
  full?: boolean;
  /** request budgets per credential (source.limits), shared through Redis in a worker; none: this process's */
  budgets?: Budgets;
  /**
   * What the run's caller asks of the source beyond its ordinary read, by name (SourceAsks); a source
   * with no ask of that name reads as ever
   */
  ask?: SourceAsk;
  /** what the sync says of listing keys (ListingKeys); none: the source asks nothing of them (feed preview) */
  keys?: ListingKeys;
  /**
   * a read of named records (SourceAsk.names): the share of its credential's request budget
   * (source.limits) it may use (feeds[].push.sourceShare), kept as a budget of its own per feed, so
   * pulls on the credential keep the rest
   */
  sourceShare?: { feed: string; share: number };
  /**
   * The source's own state, kept by the sync a copy per lane (SourceState); none: the source keeps
   * nothing and pulls nothing it would keep (feed preview: no roster pulled, no open house remembered)
   */
  state?: SourceState;
  /**
   * CSV: the records will mostly not be mapped (a rerun whose records are in step by their stamps):
   * a record's data is then built only when asked for (csv-record.ts), cheaper when it never is,
   * dearer when it is. Built as each record is read by default.
   */
  mostlyUnmapped?: boolean;
  /** CSV: the columns the mapping reads; a header without one refuses the file before any row (csv-reader.ts) */
  columns?: readonly ColumnNeed[];
  /** the run's clock (open houses shown at it); the machine's by default */
  now?: () => Date;
}

/**
 * A source's own state, as a dlt resource keeps its `resource_state()`: namespaces the source names
 * (its related resources' copies, e.g. reso/reso-roster.ts), a copy of each per lane of the feed, in
 * the sync's store. The sync loads a namespace when the source asks for it and commits what the
 * source hands back (OpenedFeed.state) with each lane's mark, in the same transaction; the source
 * never writes the store.
 */
export interface SourceState {
  /** the lanes of the feed (their ids), in the order `copies` answers in */
  readonly lanes: readonly string[];
  /** each lane's copy of namespace `ns` as that lane's last successful run left it (key → value), in `lanes`' order */
  copies(ns: string): Promise<ReadonlyArray<ReadonlyMap<string, string>>>;
  /**
   * The values of `keys` in each lane's copy of `ns` (undefined: not held), in `lanes`' order, then
   * `keys`' order: a point read, for a namespace as large as the feed (one entry a listing) that a run
   * should not load whole (Redis answers `copies` with the whole hash).
   */
  lookup(ns: string, keys: readonly string[]): Promise<ReadonlyArray<ReadonlyArray<string | undefined>>>;
}

/** A change to one namespace of a lane's copy of its source's state (SourceState): keys set, keys deleted. */
export interface SourceStateChange {
  ns: string;
  set: ReadonlyArray<readonly [string, string]>;
  delete: readonly string[];
}

/**
 * What a run's caller may ask of its feed's source beyond the ordinary read, by the ask's name. A
 * source declares its own asks from its module by declaration merging, as it does its report
 * sections: `declare module '../types.js' { interface SourceAsks { <name>: {...} } }`
 * (reso/reso-asks.ts). The sync hands the ask on (FeedContext.ask) and reads one thing of it: `names`.
 */
// eslint-disable-next-line @typescript-eslint/no-empty-object-type -- filled by each source's declaration merging
export interface SourceAsks {}

/** What the sync reads of any ask. */
export interface SourceAskShape {
  /**
   * The ask names the records to read, by their keys (few): the sync reads them before it asks a
   * chatbot anything, asks the chatbot about their listing keys alone, concludes nothing of another
   * key, and stores no mark of the read.
   */
  readonly names?: true;
}

/** One ask (SourceAsks), under its name. */
export type SourceAsk = {
  [N in keyof SourceAsks]: { readonly name: N } & SourceAsks[N] & SourceAskShape;
}[keyof SourceAsks];

/**
 * What the sync says of listing keys to a source that asks (FeedContext.keys): the source fields a
 * listing key is read from, a record's listing key, and whether a lane of the feed holds a key (with
 * no mark, a key not held is new). A source that reads keys before records asks it.
 */
export interface ListingKeys {
  /** the source fields the listing key is read from (mapping/key-sources.ts) */
  keyFields: readonly string[];
  /** the listing key of a record's fields (a key row's: the key fields alone) */
  keyOf(data: Record<string, unknown>): string | undefined;
  /** a lane of the feed holds this listing key */
  holds(key: string): boolean;
}

/** The records a source holds whose `field` is one of `values`. */
export interface KeyAsk {
  field: string;
  values: string[];
  /**
   * A field the server may not have (a roster's CoListAgentKey): when its `$metadata` does not list
   * it, no record holds a value of it and it is not asked. Without it (a listing's key, a field
   * records were read by), a field `$metadata` does not list or cannot type is asked anyway, quoted.
   */
  optional?: true;
}

/**
 * Asking a source again about keys its pull lacked (a live RESO pull): absence from a pull is
 * evidence, not proof (docs/reso-paging.md). CSV and XML files are read whole and have none.
 */
export interface KeyLookup {
  /** the paging the pull used and what to set if it missed records, for the report */
  readonly paging: { used: string; advice: string };
  /**
   * the field holding a record's own id (FeedItem position.id: RESO source.keyField, ListingKey): a
   * listing key read from it alone names one record, so no other record of the key can be asked for
   */
  readonly idField?: string;
  /** the records the source holds now, within the feed's own filter, a request's answer at a time */
  find(asks: readonly KeyAsk[]): AsyncIterable<FeedItem[]>;
}

export interface OpenedFeed {
  /** the records, and (readers that make them a chunk at a time) the same a batch at a time: read one or the other */
  items: AsyncIterable<FeedItem> & { readonly batches?: AsyncIterable<FeedItem[]> };
  /**
   * 'incremental' when the items are only what changed since the last commit (a RESO feed with
   * `incremental: true`): keys absent from them are not gone. An incremental feed with no mark stored
   * yet pulls everything and turns 'full' once iteration has started, so read it after the items.
   */
  readonly mode: 'full' | 'incremental';
  /**
   * The mark reached (RESO: the high-water mark), once `items` were read to their end; undefined
   * before that or when the feed has none. Opaque to the sync, which stores it with its state after
   * a successful run and hands it back as FeedContext.mark. Readers never write state.
   */
  readonly mark: string | undefined;
  /**
   * For an incremental pull, the time it asked for changes from (the stored mark's timestamp), so
   * the report can say what the pull covered; undefined for a full pull.
   */
  readonly since?: string;
  /** the source can be asked for particular records (live RESO pulls) */
  readonly lookup?: KeyLookup;
  /**
   * Listing keys the source holds unchanged but did not read the records of: not absent, their
   * listings stay as they are. A read with them read no record of theirs, so it is no measure of the
   * feed's size and applies no rule to them; a 'full' read's other keys are absent.
   */
  readonly unread?: ReadonlySet<string>;
  /** what reading a remote source took (RESO): pages, requests (retries included), and what it did differently from the config */
  readonly stats?: SourceReadStats;
  /**
   * What the source learned of its own state (FeedContext.state), once `items` were read to their
   * end: each lane's changes, by lane id. The sync commits a lane's with that lane's mark, in the
   * same transaction, when the run earned the mark; a lane whose run failed keeps its copy, and the
   * source reads the changes again next run.
   */
  readonly state?: ReadonlyMap<string, readonly SourceStateChange[]>;
}

export interface SourceReadStats {
  /**
   * How the source read, where the report says more than OpenedFeed.mode: 'reconcile', its keys read
   * before its records (its mode is 'full' for the sync: any key neither read nor `unread` is absent)
   */
  readonly mode?: 'reconcile';
  pages: number;
  /** every request sent to the source for this read (each retry and redirect hop; token calls aside) */
  requests: number;
  /** RESO: the same by what they were for, and the OAuth2 token endpoint's calls apart, as they stand (reso-requests.ts) */
  tally?: { readonly by: Readonly<Partial<Record<string, number>>>; readonly tokenCalls: number };
  /** bytes of the answers read (after gunzip), where the reader counts them (RESO) */
  bytes?: number;
  /** the report's sections the source fills (SourceSections), once its items were read */
  sections?: readonly SourceSection[];
  warnings: string[];
}

/**
 * The fields of each report section a source fills, by the section's name. A source declares its
 * own from its module by declaration merging, as graphile-worker types its tasks' payloads:
 * `declare module '../types.js' { interface SourceSections { events: {...} } }` (reso/reso-sections.ts).
 * The report (SyncReport.source) types each one under its name, and nothing shared names it. A name
 * is not one of the report's own source fields (mode, since, complete, pages, requests, warnings…).
 */
// eslint-disable-next-line @typescript-eslint/no-empty-object-type -- filled by each source's declaration merging
export interface SourceSections {}

/**
 * One section of the report a source fills (SourceReadStats.sections): its fields, plain JSON (the
 * report keeps them under the section's name), and the lines the text report prints of it.
 */
export type SourceSection = {
  [N in keyof SourceSections]: {
    name: N;
    fields: SourceSections[N];
    lines: readonly string[];
    /** the section says which records were read (an ask named them): the text report says nothing of an incremental pull */
    tellsTheRead?: true;
  };
}[keyof SourceSections];
