export { MediaConfig } from './config-schema.js';
export { createMediaStep, type MediaStep, type MirrorEntry } from './mirror-step.js';
export type { MediaStepOptions } from './mirror-run.js';
export { loadMediaState } from './mirror-state.js';
export { mirrorOf } from './feed-mirror.js';
export type { MediaReport } from './report.js';
