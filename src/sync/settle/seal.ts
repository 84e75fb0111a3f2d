// A lane's seal: everything a run's "every record in step" rested on, stored when a run found every
// record of its feed in step by its stamp (record-stamp.ts), wrote nothing and stored nothing. A
// later run that finds each part as it was would find the same again, record for record: the
// same bytes (so the same records, in the same order), mapped by the same code and config (the
// stamp seed and the feed's config), against the same list (every copy's ID and comparison hash:
// RemoteIndex.digest) and the same stored fingerprints and stamps (their counts; any commit of
// the lane that does not write a seal deletes it, and acknowledged writes change the list). So it
// reads no record: each of the chatbot's listings is counted unchanged by the seal (run/feed-seal.ts).
// What a run's result depends on beyond these keeps a seal from being written: a clock (sold
// windows, grace periods, a mapping that reads the clock has no stamps), records rejected,
// skipped or repeated, other feeds of the chatbot.
import { z } from 'zod';
import type { FileIdentity } from '../../feeds/source/file-identity.js';

const SEAL_VERSION = 1;

const Seal = z.object({
  v: z.literal(SEAL_VERSION),
  /** the sync's and readers' code (code-identity.ts) */
  code: z.string(),
  /** the sha256 of the feed's config as resolved */
  feed: z.string(),
  /** the lane's stamp seed (record-stamp.ts stampSeed) */
  seed: z.string(),
  file: z.object({ size: z.number().int().nonnegative(), sha256: z.string() }),
  /** the chatbot's list as the run left it (RemoteIndex.digest) */
  rows: z.string(),
  /** the lane's stored fingerprints and stamps, counted */
  fingerprints: z.number().int().nonnegative(),
  stamps: z.number().int().nonnegative(),
});
export type Seal = z.infer<typeof Seal>;

/** What a seal holds but the list's digest: known before paging ends. */
export type SealBefore = Omit<Seal, 'rows'>;

export function sealBefore(parts: Omit<SealBefore, 'v' | 'file'> & { file: FileIdentity }): SealBefore {
  return { v: SEAL_VERSION, ...parts, file: { size: parts.file.size, sha256: parts.file.sha256 } };
}

/** A stored seal, or none when there is none or it is of another shape (another version's: it seals nothing). */
export function readSeal(text: string | undefined): Seal | undefined {
  if (text === undefined) return undefined;
  try {
    const parsed = Seal.safeParse(JSON.parse(text));
    return parsed.success ? parsed.data : undefined;
  } catch {
    return undefined; // (not JSON: as of another shape)
  }
}

export function sealText(seal: Seal): string {
  return JSON.stringify(seal);
}

/** Which part of the stored seal differs from what the run found (undefined: none); `rows` is left out when not known yet. */
export function sealDiffers(stored: Seal, now: SealBefore & { rows?: string }): string | undefined {
  const parts: Array<[string, unknown, unknown]> = [
    ['code', stored.code, now.code],
    ['feed config', stored.feed, now.feed],
    ['mapping', stored.seed, now.seed],
    ['file', `${stored.file.size}:${stored.file.sha256}`, `${now.file.size}:${now.file.sha256}`],
    ['stored fingerprints', stored.fingerprints, now.fingerprints],
    ['stored stamps', stored.stamps, now.stamps],
  ];
  if (now.rows !== undefined) parts.push(["chatbot's listings", stored.rows, now.rows]);
  return parts.find(([, a, b]) => a !== b)?.[0];
}
