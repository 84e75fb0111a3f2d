export * from './limits.js';
export * from './backend.js';
export * from './budget.js';
