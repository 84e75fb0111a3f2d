// One photo source's outcome in a feed run: downloaded (download.ts) and stored in the bucket under
// its content's hash, once per source however many listings name it; planned only, in a dry run;
// or a failure's reason. Storage that cannot be used is said once and fails the run's later photos.
import { createHash } from 'node:crypto';
import pLimit from 'p-limit';
import { mediaCredentials } from '../feeds/media-headers.js';
import { displayUrl } from '../feeds/source/http.js';
import { sourceBudget } from '../feeds/source/source-budget.js';
import { downloadPhoto, type PhotoDownload } from './download.js';
import type { MirrorRun } from './mirror-run.js';
import { photoAgent } from './photo-agent.js';
import type { PhotoSource } from './photo-sources.js';
import { STORAGE_DOWN } from './report.js';

export type Outcome = { object: string } | { failure: string } | { planned: true };

export interface PhotoStore {
  outcomeOf(photo: PhotoSource): Promise<Outcome>;
  /** whether a download of this source is under way or done this run */
  started(id: string): boolean;
  close(): Promise<void>;
}

export function photoStore(run: MirrorRun): PhotoStore {
  const { opts, report } = run;
  const { media } = opts;
  const limit = pLimit(media.mirror.concurrency);
  const credentials = mediaCredentials(opts.source);
  const agent = photoAgent(opts.allow, media.mirror.concurrency);
  const inFlight = new Map<string, Promise<Outcome>>();

  const download = (photo: PhotoSource): Promise<PhotoDownload> =>
    downloadPhoto(photo.url, {
      credentials,
      agent,
      timeoutMs: media.timeoutMs,
      maxBytes: media.maxBytes,
      signal: opts.signal,
      budget: sourceBudget(opts.source, { budgets: opts.budgets }),
    });

  async function fetchAndStore(photo: PhotoSource): Promise<Outcome> {
    if (report.storageError) return { failure: STORAGE_DOWN };
    const got = await download(photo);
    if (!got.ok) return { failure: got.reason };
    const object = `${media.mirror.prefix ?? ''}${opts.feed}/${createHash('sha256').update(got.bytes).digest('hex')}.${got.type.ext}`;
    if (!run.knownObjects.has(object)) {
      const stored = await put(object, got.bytes, got.type.contentType);
      if (!stored) return { failure: STORAGE_DOWN };
      run.knownObjects.add(object);
    }
    report.downloaded++;
    report.bytes += got.bytes.length;
    run.stored.set(photo.id, object);
    run.newSources.push([photo.id, object]);
    return { object };
  }

  /** Whether the object went up; a storage failure is said once (the uploads beside it fail the same way). */
  async function put(object: string, bytes: Buffer, contentType: string): Promise<boolean> {
    try {
      await (await run.bucket()).put(object, bytes, contentType, opts.signal);
      return true;
    } catch (err) {
      if (opts.signal?.aborted) throw err;
      if (report.storageError === undefined) {
        report.storageError = err instanceof Error ? err.message : String(err);
        opts.logger.warn(
          { feed: opts.feed },
          `photo storage could not be used; this run stores no more photos: ${report.storageError}`,
        );
      }
      return false;
    }
  }

  return {
    outcomeOf(photo) {
      let p = inFlight.get(photo.id);
      if (!p) {
        if (opts.dryRun) run.planned.add(displayUrl(photo.url));
        p = opts.dryRun
          ? Promise.resolve({ planned: true })
          : report.storageError
            ? Promise.resolve({ failure: STORAGE_DOWN })
            : limit(() => fetchAndStore(photo));
        inFlight.set(photo.id, p);
      }
      return p;
    },
    started: (id) => inFlight.has(id),
    close: () => agent.agent.close(),
  };
}
