import type { JobKind } from '../src/queue/index.js';
import { listingSync } from './listing-sync.js';
import { listingUndo } from './listing-undo.js';
import { messageSmoke } from './message-smoke.js';
import { settingsPush } from './settings-push.js';

export { listingSync, listingUndo, messageSmoke, settingsPush };

/** Every job, by kind: what `feedsync worker` runs. */
export const JOBS = { sync: listingSync, settings: settingsPush, smoke: messageSmoke, undo: listingUndo } as const satisfies Record<JobKind, unknown>;
