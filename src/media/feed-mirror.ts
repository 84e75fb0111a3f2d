// Whether a feed's photos are mirrored (media.mirror set, feeds[].media.mirror not false), and the
// mirror's identity: the state it keeps (per bucket) and what the feed's record stamps must cover
// (a listing's Images depend on the bucket and its public URL).
import { parseAllowance, type InternalAllowance } from './address-guard.js';
import type { MediaConfig, MediaMirrorConfig } from './config-schema.js';
import { mediaNamespaces, type MediaNamespaces } from './mirror-state.js';
import { storageIdentity } from './storage.js';

export interface FeedMirror {
  media: MediaConfig & { mirror: MediaMirrorConfig };
  namespaces: MediaNamespaces;
  /** for the record stamps' seed */
  identity: string;
  /** the feed's media.allowInternal */
  allow: InternalAllowance;
}

export function mirrorOf(
  media: MediaConfig | undefined,
  feed: { name: string; media?: { mirror: boolean; allowInternal?: readonly string[] } },
): FeedMirror | undefined {
  const mirror = media?.mirror;
  if (!media || !mirror || feed.media?.mirror === false) return undefined;
  const storage = storageIdentity(mirror);
  return {
    media: { ...media, mirror },
    namespaces: mediaNamespaces(feed.name, storage),
    identity: JSON.stringify([storage, mirror.publicBaseUrl]),
    allow: parseAllowance(feed.media?.allowInternal ?? []),
  };
}
