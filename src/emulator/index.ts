export { startEmulator } from './server.js';
export type { EmulatorOptions, Fault, RunningEmulator, StreamFraming } from './options.js';
