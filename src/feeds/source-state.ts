// A source's own state (types.ts SourceState) as its readers hand it back: each lane's copy of a
// namespace made what the read ended with, and the changes of wrappers (the related resources of a
// RESO feed) added to those of the feed they wrap. Pure: the sync loads and commits the store.
import type { OpenedFeed, SourceStateChange } from './types.js';

/** Where the sync keeps a lane's copy of a source's namespace: `<ns>:<lane>` (`roster:Member:mls`). */
export const laneNamespace = (ns: string, lane: string): string => `${ns}:${lane}`;

/** A lane's copy of `ns` made `final`: the entries that differ set, those no longer there deleted; none when they agree. */
export function changesTo(
  ns: string,
  copy: ReadonlyMap<string, string> | undefined,
  final: ReadonlyMap<string, string>,
): SourceStateChange[] {
  const held = copy ?? new Map<string, string>();
  const set = [...final].filter(([key, text]) => held.get(key) !== text);
  const del = [...held.keys()].filter((key) => !final.has(key));
  return set.length || del.length ? [{ ns, set, delete: del }] : [];
}

/** Each lane's changes (`of` the lane's index in `lanes`), by lane id. */
export function byLane(
  lanes: readonly string[],
  of: (i: number) => readonly SourceStateChange[],
): Map<string, readonly SourceStateChange[]> {
  return new Map(lanes.map((lane, i) => [lane, of(i)]));
}

/** A wrapper's own changes (undefined: none yet) after those of the feed it wraps, lane by lane. */
export function withInnerState(inner: OpenedFeed, own: OpenedFeed['state']): OpenedFeed['state'] {
  const theirs = inner.state;
  if (!own) return theirs;
  if (!theirs) return own;
  const out = new Map(theirs);
  for (const [lane, changes] of own) out.set(lane, [...(out.get(lane) ?? []), ...changes]);
  return out;
}
