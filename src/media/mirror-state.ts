// What the media mirror remembers between runs, kept with the sync state (Redis or the state file)
// and committed by the sync in the same apply as the rest of its run's state. Per feed and bucket:
//   src    photo source id (hashed)  → object key            a photo downloaded once per source
//   use    listing key               → object keys, space-separated   what each listing shows
//   unused object key                → ISO time first seen unused      the cleanup's grace period
// A bucket (endpoint, bucket, prefix) of its own starts a state of its own: objects of another bucket
// are never reused or deleted by mistake.
import { createHash } from 'node:crypto';
import type { KvStore } from '../state/kv-store.js';

export interface MediaState {
  src: ReadonlyMap<string, string>;
  use: ReadonlyMap<string, string>;
  unused: ReadonlyMap<string, string>;
}

export interface MediaNamespaces {
  src: string;
  use: string;
  unused: string;
}

export function mediaNamespaces(feed: string, storage: string): MediaNamespaces {
  const id = createHash('sha1').update(storage).digest('base64url').slice(0, 10);
  return { src: `media-src:${feed}:${id}`, use: `media-use:${feed}:${id}`, unused: `media-unused:${feed}:${id}` };
}

export async function loadMediaState(store: KvStore, ns: MediaNamespaces): Promise<MediaState> {
  const [src, use, unused] = await Promise.all([store.getAll(ns.src), store.getAll(ns.use), store.getAll(ns.unused)]);
  return { src, use, unused };
}

/** A listing's objects as stored in `use`. */
export const useValue = (objects: readonly string[]): string => objects.join(' ');
export const objectsOf = (value: string | undefined): string[] => (value ? value.split(' ') : []);
