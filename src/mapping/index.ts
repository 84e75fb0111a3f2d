export type { MappedItem } from './types.js';
export { mapFeed } from './map-feed.js';
export { compileMapping, type CompiledMapping } from './compile.js';
export { MappingConfig } from './config-schema.js';
