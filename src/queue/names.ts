// The job kinds and their queues: one queue per kind, so each can be scaled, paused and
// watched on its own.
export const QUEUE_NAMES = {
  sync: 'listing-sync',
  settings: 'settings-push',
  smoke: 'message-smoke',
  undo: 'listing-undo',
  drift: 'source-drift',
} as const;

export type JobKind = keyof typeof QUEUE_NAMES;

export const JOB_KINDS = Object.keys(QUEUE_NAMES) as JobKind[];
