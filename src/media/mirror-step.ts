// The media mirror step of a sync (docs/media.md), between mapping and the diff: each mapped
// listing's Images become URLs of objects in the user's bucket, in the feed's order. A photo is
// downloaded once per source (photo-sources.ts) and stored under a key derived from its content;
// a photo that cannot be had is left out and named (the listing goes on); storage that cannot be
// used fails the photos of this run, once, and nothing else. At the end (finish) it says which state
// to commit and deletes the objects no listing has used for media.graceHours. It never writes state:
// the sync commits what finish hands back, with the rest of the run's state.
import { createHash } from 'node:crypto';
import pLimit from 'p-limit';
import type { Budgets } from '../budget/budget.js';
import { displayUrl } from '../feeds/source/http.js';
import type { FeedSource } from '../feeds/config-schema.js';
import { mediaHeaders } from '../feeds/media-headers.js';
import { sourceBudget } from '../feeds/source/source-budget.js';
import type { Logger } from '../log.js';
import type { StateChange } from '../state/kv-store.js';
import type { MediaConfig, MediaMirrorConfig } from './config-schema.js';
import { downloadPhoto } from './download.js';
import { objectsOf, useValue, type MediaNamespaces, type MediaState } from './mirror-state.js';
import { photoSources, type PhotoSource } from './photo-sources.js';
import { SHOWN_FAILURES, SHOWN_PLANNED, STORAGE_DOWN, type MediaReport, type PhotoFailureEntry } from './report.js';
import { openStorage, type MediaStorage } from './storage.js';

/** A mapped listing and the record it came from (its Media names the photos' sources). */
export interface MirrorEntry {
  key: string;
  listing: { Images?: string[] | undefined };
  record?: Record<string, unknown>;
}

export interface MediaStepOptions {
  feed: string;
  source: FeedSource;
  media: MediaConfig & { mirror: MediaMirrorConfig };
  namespaces: MediaNamespaces;
  state: MediaState;
  dryRun: boolean;
  signal?: AbortSignal;
  logger: Logger;
  budgets?: Budgets;
  /** the bucket (tests of a store that fails pass their own; default: the S3 client of media.mirror) */
  openStorage?: () => Promise<MediaStorage>;
}

export interface MediaStep {
  /** rewrites each entry's Images; true where every photo was mirrored (a listing with a missing one is mirrored again next run) */
  mirror(entries: readonly MirrorEntry[]): Promise<boolean[]>;
  /** the same without downloading: photos not stored before are left out (false then) */
  rewriteKnown(entry: MirrorEntry): boolean;
  /** state to commit and the report; deletes the objects past their grace (not in a dry run) */
  finish(run: { deletedKeys: readonly string[]; unwrittenKeys: ReadonlySet<string>; now: Date }): Promise<{ changes: StateChange[]; report: MediaReport }>;
}

type Outcome = { object: string } | { failure: string } | { planned: true };

export function createMediaStep(opts: MediaStepOptions): MediaStep {
  const { media, state, namespaces: ns } = opts;
  const cfg = media.mirror;
  const base = cfg.publicBaseUrl.replace(/\/+$/, '');
  const headers = mediaHeaders(opts.source);
  const limit = pLimit(cfg.concurrency);
  /** source id → object: what state knew, and what this run stored */
  const stored = new Map(state.src);
  const newSources: Array<[string, string]> = [];
  const knownObjects = new Set(state.src.values());
  const inFlight = new Map<string, Promise<Outcome>>();
  const uses = new Map<string, string[]>();
  const failures: PhotoFailureEntry[] = [];
  const report: MediaReport = { downloaded: 0, reused: 0, failed: 0, bytes: 0, deleted: 0, waitingGrace: 0, failures, failuresOmitted: 0 };
  const planned = new Set<string>();
  let storage: Promise<MediaStorage> | undefined;
  const bucket = () => (storage ??= (opts.openStorage ?? (() => openStorage(cfg)))());

  const fail = (listing: string, url: string, reason: string) => {
    report.failed++;
    if (failures.length < SHOWN_FAILURES) failures.push({ listing, url: displayUrl(url), reason });
    else report.failuresOmitted++;
  };

  async function fetchAndStore(photo: PhotoSource): Promise<Outcome> {
    if (opts.dryRun) {
      planned.add(displayUrl(photo.url));
      return { planned: true };
    }
    if (report.storageError) return { failure: STORAGE_DOWN };
    return limit(async (): Promise<Outcome> => {
      if (report.storageError) return { failure: STORAGE_DOWN };
      const got = await downloadPhoto(photo.url, {
        headers,
        timeoutMs: media.timeoutMs,
        maxBytes: media.maxBytes,
        signal: opts.signal,
        budget: sourceBudget(opts.source, { budgets: opts.budgets }),
      });
      if (!got.ok) return { failure: got.reason };
      const object = `${cfg.prefix ?? ''}${opts.feed}/${createHash('sha256').update(got.bytes).digest('hex')}.${got.type.ext}`;
      if (!knownObjects.has(object)) {
        try {
          await (await bucket()).put(object, got.bytes, got.type.contentType, opts.signal);
        } catch (err) {
          if (opts.signal?.aborted) throw err;
          // said once: the uploads in flight beside this one fail the same way
          if (report.storageError === undefined) {
            report.storageError = err instanceof Error ? err.message : String(err);
            opts.logger.warn({ feed: opts.feed }, `photo storage could not be used; this run stores no more photos: ${report.storageError}`);
          }
          return { failure: STORAGE_DOWN };
        }
        knownObjects.add(object);
      }
      report.downloaded++;
      report.bytes += got.bytes.length;
      stored.set(photo.id, object);
      newSources.push([photo.id, object]);
      return { object };
    });
  }

  const outcomeOf = (photo: PhotoSource): Promise<Outcome> => {
    let p = inFlight.get(photo.id);
    if (!p) {
      p = fetchAndStore(photo);
      inFlight.set(photo.id, p);
    }
    return p;
  };

  /** Images from the outcomes, in the feed's order; whether none is missing. */
  const apply = (entry: MirrorEntry, photos: PhotoSource[], outcomes: Outcome[]): boolean => {
    const images: string[] = [];
    const objects: string[] = [];
    let complete = true;
    outcomes.forEach((o, i) => {
      if ('object' in o) {
        images.push(`${base}/${o.object}`);
        objects.push(o.object);
      } else {
        complete = false;
        if ('failure' in o) fail(entry.key, photos[i]!.url, o.failure);
      }
    });
    if (images.length) entry.listing.Images = images;
    else delete entry.listing.Images;
    uses.set(entry.key, objects);
    return complete;
  };

  return {
    async mirror(entries) {
      return Promise.all(
        entries.map(async (entry) => {
          const photos = photoSources(entry.listing.Images, entry.record);
          const outcomes = await Promise.all(
            photos.map((p) => {
              const object = stored.get(p.id);
              if (object !== undefined && !inFlight.has(p.id)) {
                report.reused++;
                return { object };
              }
              return outcomeOf(p);
            }),
          );
          return apply(entry, photos, outcomes);
        }),
      );
    },
    rewriteKnown(entry) {
      const photos = photoSources(entry.listing.Images, entry.record);
      return apply(
        entry,
        photos,
        photos.map((p): Outcome => {
          const object = stored.get(p.id);
          if (object === undefined) return { failure: 'not downloaded yet (mirrored next run)' };
          report.reused++;
          return { object };
        }),
      );
    },
    async finish(run) {
      const changes = await cleanup(run);
      if (storage) (await storage.catch(() => undefined))?.close();
      return { changes, report };
    },
  };

  /** Which objects no listing uses any more; those unused for the grace period are deleted. */
  async function cleanup(run: { deletedKeys: readonly string[]; unwrittenKeys: ReadonlySet<string>; now: Date }): Promise<StateChange[]> {
    const useSet: Array<[string, string]> = [];
    const useDelete: string[] = [];
    const use = new Map(state.use);
    for (const [key, objects] of uses) {
      // a listing whose write failed still shows its old photos
      const value = useValue(run.unwrittenKeys.has(key) ? [...new Set([...objectsOf(state.use.get(key)), ...objects])] : objects);
      if (value === (state.use.get(key) ?? '')) continue;
      use.set(key, value);
      if (value) useSet.push([key, value]);
      else useDelete.push(key);
    }
    for (const key of run.deletedKeys) {
      if (!use.delete(key) || !state.use.has(key)) continue;
      useDelete.push(key);
    }
    const inUse = new Set<string>();
    for (const value of use.values()) for (const o of objectsOf(value)) inUse.add(o);
    const graceMs = media.graceHours * 3_600_000;
    const mark: Array<[string, string]> = [];
    const unmark: string[] = [];
    const due: string[] = [];
    for (const object of new Set([...stored.values(), ...state.unused.keys()])) {
      const since = state.unused.get(object);
      if (inUse.has(object)) {
        if (since !== undefined) unmark.push(object);
        continue;
      }
      if (since === undefined) mark.push([object, run.now.toISOString()]);
      if (run.now.getTime() - Date.parse(since ?? run.now.toISOString()) >= graceMs) due.push(object);
    }
    report.waitingGrace = mark.length + [...state.unused.keys()].filter((o) => !inUse.has(o)).length - due.length;
    if (opts.dryRun) {
      report.dry = { download: planned.size, delete: due.length, downloads: [...planned].slice(0, SHOWN_PLANNED), deletes: due.slice(0, SHOWN_PLANNED) };
      return [];
    }
    const deleted = report.storageError ? [] : await deleteObjects(due);
    report.deleted = deleted.length;
    const gone = new Set(deleted);
    const srcDelete = [...stored].filter(([, object]) => gone.has(object)).map(([id]) => id);
    return [
      { ns: ns.src, set: newSources.filter(([, object]) => !gone.has(object)), delete: srcDelete },
      { ns: ns.use, set: useSet, delete: useDelete },
      { ns: ns.unused, set: mark.filter(([o]) => !gone.has(o)), delete: [...unmark, ...deleted] },
    ].filter((c) => c.set.length > 0 || c.delete.length > 0);
  }

  /** In batches of media.deleteBatchSize; the objects the storage deleted. */
  async function deleteObjects(keys: readonly string[]): Promise<string[]> {
    const done: string[] = [];
    if (keys.length === 0) return done;
    let store: MediaStorage;
    try {
      store = await bucket();
    } catch (err) {
      report.storageError = err instanceof Error ? err.message : String(err);
      return done;
    }
    for (let at = 0; at < keys.length; at += media.deleteBatchSize) {
      if (opts.signal?.aborted) break;
      const batch = keys.slice(at, at + media.deleteBatchSize);
      const errors = await store.deleteBatch(batch);
      const failed = new Set(errors.map((e) => e.key));
      done.push(...batch.filter((k) => !failed.has(k)));
      if (errors.length) opts.logger.warn({ feed: opts.feed, failed: errors.length, first: errors[0] }, 'unused photo objects could not all be deleted; retried next run');
    }
    return done;
  }
}
