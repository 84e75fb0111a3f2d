import type { JobKind } from '../src/queue/index.js';
import { listingSync } from './listing-sync.js';
import { listingUndo } from './listing-undo.js';
import { messageSmoke } from './message-smoke.js';
import { settingsPush } from './settings-push.js';
import { sourceDrift } from './source-drift.js';

export { listingSync, listingUndo, messageSmoke, settingsPush, sourceDrift };

/** Every job, by kind: what `feedsync worker` runs. */
export const JOBS = {
  sync: listingSync,
  settings: settingsPush,
  smoke: messageSmoke,
  undo: listingUndo,
  drift: sourceDrift,
} as const satisfies Record<JobKind, unknown>;
