// What one feed run's media mirror holds while it runs, shared by its parts (photo-store.ts
// downloads and stores, mirror-step.ts rewrites Images, mirror-cleanup.ts settles the state):
// the options it was made with, the sources and objects it knows, what each listing uses, the
// report it fills. One record per run, made by createMediaStep and passed to each part.
import type { Budgets } from '../budget/budget.js';
import type { FeedSource } from '../feeds/config-schema.js';
import { displayUrl } from '../feeds/source/http.js';
import type { Logger } from '../log.js';
import type { InternalAllowance } from './address-guard.js';
import type { MediaConfig, MediaMirrorConfig } from './config-schema.js';
import type { MediaNamespaces, MediaState } from './mirror-state.js';
import { SHOWN_FAILURES, type MediaReport, type PhotoFailureEntry } from './report.js';
import { openStorage, type MediaStorage } from './storage.js';

export interface MediaStepOptions {
  feed: string;
  source: FeedSource;
  media: MediaConfig & { mirror: MediaMirrorConfig };
  namespaces: MediaNamespaces;
  state: MediaState;
  /** the internal hosts and ranges the feed's media.allowInternal allows (none: public addresses only) */
  allow: InternalAllowance;
  /** a dry run: photos planned, none fetched, no object deleted (the report says what a real run would do) */
  dryRun?: boolean;
  signal?: AbortSignal;
  logger: Logger;
  budgets?: Budgets;
  /** the bucket (tests of a store that fails pass their own; default: the S3 client of media.mirror) */
  openStorage?: () => Promise<MediaStorage>;
}

export interface MirrorRun {
  opts: MediaStepOptions;
  /** source id → object: what state knew, and what this run stored */
  stored: Map<string, string>;
  newSources: Array<[string, string]>;
  knownObjects: Set<string>;
  /** listing key → the objects its Images name this run */
  uses: Map<string, string[]>;
  /** a dry run's downloads (printable URLs) */
  planned: Set<string>;
  report: MediaReport;
  /** the bucket, opened on first use */
  bucket(): Promise<MediaStorage>;
  /** whether the bucket was opened (finish closes it) */
  opened(): Promise<MediaStorage | undefined> | undefined;
  /** a photo left out of a listing, named in the report */
  fail(listing: string, url: string, reason: string): void;
}

export function mirrorRun(opts: MediaStepOptions): MirrorRun {
  const failures: PhotoFailureEntry[] = [];
  const report: MediaReport = {
    downloaded: 0,
    reused: 0,
    failed: 0,
    bytes: 0,
    deleted: 0,
    waitingGrace: 0,
    failures,
    failuresOmitted: 0,
  };
  let storage: Promise<MediaStorage> | undefined;
  return {
    opts,
    stored: new Map(opts.state.src),
    newSources: [],
    knownObjects: new Set(opts.state.src.values()),
    uses: new Map(),
    planned: new Set(),
    report,
    bucket: () => (storage ??= (opts.openStorage ?? (() => openStorage(opts.media.mirror)))()),
    // (a bucket that failed to open has nothing to close: its error was the mirror's, said where bucket() was awaited)
    opened: () => storage?.catch(() => undefined),
    fail(listing, url, reason) {
      report.failed++;
      if (failures.length < SHOWN_FAILURES) failures.push({ listing, url: displayUrl(url), reason });
      else report.failuresOmitted++;
    },
  };
}
