// The media mirror step of a sync (docs/media.md), between mapping and the diff: each mapped
// listing's Images become URLs of objects in the user's bucket, in the feed's order. A photo is
// downloaded once per source (photo-sources.ts, photo-store.ts) and stored under a key derived from
// its content; a photo that cannot be had is left out and named (the listing goes on); storage that
// cannot be used fails the photos of this run, once, and nothing else. At the end (finish,
// mirror-cleanup.ts) it says which state to commit and deletes the objects no listing has used for
// media.graceHours. It never writes state: the sync commits what finish hands back, with the rest
// of the run's state.
import type { StateChange } from '../state/kv-store.js';
import { cleanup, type RunEnd } from './mirror-cleanup.js';
import { mirrorRun, type MediaStepOptions, type MirrorRun } from './mirror-run.js';
import { photoSources, type PhotoSource } from './photo-sources.js';
import { photoStore, type Outcome } from './photo-store.js';
import type { MediaReport } from './report.js';

export type { MediaStepOptions } from './mirror-run.js';

/** A mapped listing and the record it came from (its Media names the photos' sources). */
export interface MirrorEntry {
  key: string;
  listing: { Images?: string[] | undefined };
  record?: Record<string, unknown>;
}

export interface MediaStep {
  /** rewrites each entry's Images; true where every photo was mirrored (a listing with a missing one is mirrored again next run) */
  mirror(entries: readonly MirrorEntry[]): Promise<boolean[]>;
  /** the same without downloading: photos not stored before are left out (false then) */
  rewriteKnown(entry: MirrorEntry): boolean;
  /** state to commit and the report; deletes the objects past their grace (not in a dry run) */
  finish(run: RunEnd): Promise<{ changes: StateChange[]; report: MediaReport }>;
}

export function createMediaStep(opts: MediaStepOptions): MediaStep {
  const run = mirrorRun(opts);
  const photos = photoStore(run);
  const known = (p: PhotoSource): Outcome | undefined => {
    const object = run.stored.get(p.id);
    if (object === undefined) return undefined;
    run.report.reused++;
    return { object };
  };
  return {
    async mirror(entries) {
      return Promise.all(
        entries.map(async (entry) => {
          const sources = photoSources(entry.listing.Images, entry.record);
          const outcomes = await Promise.all(
            sources.map((p) => (!photos.started(p.id) && known(p)) || photos.outcomeOf(p)),
          );
          return applyOutcomes(run, entry, sources, outcomes);
        }),
      );
    },
    rewriteKnown(entry) {
      const sources = photoSources(entry.listing.Images, entry.record);
      return applyOutcomes(
        run,
        entry,
        sources,
        sources.map((p) => known(p) ?? { failure: 'not downloaded yet (mirrored next run)' }),
      );
    },
    async finish(end) {
      const changes = await cleanup(run, end);
      (await run.opened())?.close();
      await photos.close();
      return { changes, report: run.report };
    },
  };
}

/** The entry's Images from the outcomes, in the feed's order; whether none is missing. */
function applyOutcomes(run: MirrorRun, entry: MirrorEntry, sources: PhotoSource[], outcomes: Outcome[]): boolean {
  const base = run.opts.media.mirror.publicBaseUrl.replace(/\/+$/, '');
  const images: string[] = [];
  const objects: string[] = [];
  let complete = true;
  outcomes.forEach((o, i) => {
    if ('object' in o) {
      images.push(`${base}/${o.object}`);
      objects.push(o.object);
    } else {
      complete = false;
      if ('failure' in o) run.fail(entry.key, sources[i]!.url, o.failure);
    }
  });
  if (images.length) entry.listing.Images = images;
  else delete entry.listing.Images;
  run.uses.set(entry.key, objects);
  return complete;
}
