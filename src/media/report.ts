// The media section of a sync report (docs/media.md): what the mirror did this run, bounded in size.

export interface PhotoFailureEntry {
  /** the listing's key (MLSNumber or URL) */
  listing: string;
  /** the photo's URL as it may be printed (no query string: signed URLs carry tokens there) */
  url: string;
  reason: string;
}

export interface MediaReport {
  /** distinct photos fetched and stored this run */
  downloaded: number;
  /** photos of mapped listings served by an object stored before (no download) */
  reused: number;
  /** listing photos left out of Images this run (retried next run) */
  failed: number;
  /** bytes downloaded (and stored) */
  bytes: number;
  /** objects deleted from the bucket (unused for media.graceHours) */
  deleted: number;
  /** objects no listing uses, waiting out media.graceHours */
  waitingGrace: number;
  /** the storage could not be used: every photo to store this run failed for this one reason */
  storageError?: string;
  /** the first failures (failuresOmitted says how many more) */
  failures: PhotoFailureEntry[];
  failuresOmitted: number;
  /** a dry run: what a real run would download and delete (the first few of each, and how many) */
  dry?: { download: number; delete: number; downloads: string[]; deletes: string[] };
}

/** Failures named in a report; the count covers the rest. */
export const SHOWN_FAILURES = 100;
/** Dry-run downloads and deletes named in a report. */
export const SHOWN_PLANNED = 50;

export function formatMediaReport(m: MediaReport, shown = 20): string[] {
  const lines: string[] = [];
  if (m.dry) {
    lines.push(
      `  photos: would download ${m.dry.download}, would delete ${m.dry.delete} unused objects; ${m.reused} reused`,
    );
    for (const u of m.dry.downloads.slice(0, shown)) lines.push(`    would download ${u}`);
    for (const k of m.dry.deletes.slice(0, shown)) lines.push(`    would delete ${k}`);
  } else {
    lines.push(
      `  photos: ${m.downloaded} downloaded (${m.bytes} bytes), ${m.reused} reused, ${m.failed} failed; ${m.deleted} unused objects deleted, ${m.waitingGrace} waiting media.graceHours`,
    );
  }
  if (m.storageError)
    lines.push(`  photo storage could not be used, so no new photo was stored this run: ${m.storageError}`);
  const failures = m.failures.filter((f) => !m.storageError || f.reason !== STORAGE_DOWN);
  for (const f of failures.slice(0, shown)) lines.push(`    photo of ${f.listing} left out: ${f.url}: ${f.reason}`);
  const more = failures.length - Math.min(failures.length, shown) + m.failuresOmitted;
  if (more > 0) lines.push(`    … and ${more} more photo failures (--json lists the first ${SHOWN_FAILURES})`);
  return lines;
}

/** The reason given each photo not stored because the storage failed (its message is said once). */
export const STORAGE_DOWN = 'not stored: the photo storage could not be used (see storageError)';

/** The report's figures as the run history keeps counts (the status page and metrics read these). */
export function mediaCounts(
  m: MediaReport,
): Record<'photosDownloaded' | 'photosReused' | 'photosFailed' | 'photoBytes' | 'photoObjectsDeleted', number> {
  return {
    photosDownloaded: m.downloaded,
    photosReused: m.reused,
    photosFailed: m.failed,
    photoBytes: m.bytes,
    photoObjectsDeleted: m.deleted,
  };
}
