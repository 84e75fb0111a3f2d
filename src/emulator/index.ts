export { startEmulator } from './server.js';
export { DEV_SECRET_KEY, DEV_SESSION_KEY, type AnswerMode, type EmulatorOptions, type Fault, type RunningEmulator, type StreamFraming } from './options.js';
