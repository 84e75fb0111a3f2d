export { MediaConfig, MediaMirrorConfig, FeedMediaConfig, MEDIA_DEFAULTS } from './config-schema.js';
export { createMediaStep, type MediaStep, type MirrorEntry } from './mirror-step.js';
export { loadMediaState, mediaNamespaces, type MediaNamespaces, type MediaState } from './mirror-state.js';
export { mirrorOf, type FeedMirror } from './feed-mirror.js';
export { formatMediaReport, mediaCounts, type MediaReport } from './report.js';
export { imageTypeOf } from './image-type.js';
