// A wrapper around an opened feed (the roster, the open houses) that changes a few of its parts.
// The parts of a reader's feed are getters whose values change as its items are read (mode, mark,
// since, present…), so a wrapper cannot copy them with a spread: the copy would keep what they were
// when the wrapper was made. Every part the wrapper does not give itself is read from the inner feed
// each time it is asked.
import type { OpenedFeed } from './types.js';

/** `inner`, with `own`'s parts (getters kept as getters) in place of its own. */
export function overlayFeed(inner: OpenedFeed, own: Partial<OpenedFeed>): OpenedFeed {
  const delegated: PropertyDescriptorMap = {};
  for (const key of Object.keys(inner) as (keyof OpenedFeed)[]) {
    if (!(key in own)) delegated[key] = { get: () => inner[key], enumerable: true, configurable: true };
  }
  return Object.defineProperties({ ...inner }, { ...delegated, ...Object.getOwnPropertyDescriptors(own) });
}
