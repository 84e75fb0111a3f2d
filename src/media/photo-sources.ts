// The photos of a mapped listing as download sources. A photo's identity is its URL; where the
// record's Media says so (RESO: MediaKey and MediaModificationTimestamp of the entry with that
// MediaURL), it is the media record instead: signed URLs that change every pull are then still the
// same photo, and a photo replaced under the same URL (a new MediaModificationTimestamp) is a new one.
import { createHash } from 'node:crypto';

export interface PhotoSource {
  url: string;
  /** the identity above, hashed to a bounded state key */
  id: string;
}

export function photoSources(
  images: readonly string[] | undefined,
  record: Record<string, unknown> | undefined,
): PhotoSource[] {
  if (!images?.length) return [];
  const media = mediaByUrl(record?.Media);
  return images.map((url) => {
    const m = media?.get(url);
    const identity = m?.key ? `k\0${m.key}\0${m.modified ?? ''}` : `u\0${url}`;
    return { url, id: createHash('sha1').update(identity).digest('base64url') };
  });
}

function mediaByUrl(media: unknown): Map<string, { key: string; modified?: string }> | undefined {
  if (!Array.isArray(media)) return undefined;
  const out = new Map<string, { key: string; modified?: string }>();
  for (const m of media) {
    if (!m || typeof m !== 'object') continue;
    const url = 'MediaURL' in m ? m.MediaURL : undefined;
    const key = 'MediaKey' in m ? m.MediaKey : undefined;
    const modified = 'MediaModificationTimestamp' in m ? m.MediaModificationTimestamp : undefined;
    if (typeof url !== 'string' || (typeof key !== 'string' && typeof key !== 'number')) continue;
    out.set(url.trim(), { key: String(key), ...(typeof modified === 'string' && { modified }) });
  }
  return out;
}
