export * from './app.js';
export * from './health.js';
export * from './metrics.js';
export * from './push-app.js';
