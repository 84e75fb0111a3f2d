// The emulator's knobs (docs/contracts.md, "The emulator").
import type { Logger } from '../log.js';

export type Fault = '500' | '503' | '429' | 'drop';
export type StreamFraming = 'sse' | 'lines' | 'concat';
export type AnswerMode = 'normal' | 'empty' | 'broken-stream';

export interface EmulatorOptions {
  /** 0 = any free port (the default in-process) */
  port?: number;
  host?: string;
  /** cap on PageSize: a larger PageSize gets this many items (default 100) */
  maxPageSize?: number;
  /** added before every answer of the six endpoints */
  latencyMs?: number;
  /** fraction (0..1) of requests to the six endpoints answered with a fault drawn from `faults` */
  faultRate?: number;
  faults?: Fault[];
  /** faults for the next requests, in order, before any random draw: makes "429 then success" exact */
  nextFaults?: Fault[];
  /** Retry-After of an injected 429, in whole seconds (default 1) */
  retryAfterSeconds?: number;
  /** answer every error with HTTP 200, `Success: false` and the status in `Code` */
  errorsAs200?: boolean;
  streamFraming?: StreamFraming;
  streamDelayMs?: number;
  seed?: number;
  /** known serial numbers; undefined: every serial number exists */
  chatbots?: string[];
  secretKey?: string;
  sessionKey?: string;
  /** persist listings, settings and sessions there (JSON), loaded at start */
  dataFile?: string;
  answerMode?: AnswerMode;
  logger?: Logger;
  /** told of every request as it arrives: its path and body as received (tests assert on what was sent) */
  onRequest?: (request: { path: string; body: string }) => void;
}

export interface RunningEmulator {
  /** base URL, no trailing slash */
  url: string;
  port: number;
  /** change faults, latency, answerMode... at run time */
  configure(patch: Partial<EmulatorOptions>): void;
  /** make a chat session for ClientAsk (as POST /__emulator/sessions does) */
  createSession(serialNumber: string, sessionID?: number): number;
  close(): Promise<void>;
}

export type ResolvedOptions = Required<Omit<EmulatorOptions, 'chatbots' | 'dataFile' | 'logger' | 'onRequest'>> &
  Pick<EmulatorOptions, 'chatbots' | 'dataFile' | 'logger' | 'onRequest'>;

export const DEV_SECRET_KEY = 'dev-secret-key';
export const DEV_SESSION_KEY = 'dev-session-key';

export function resolveOptions(opts: EmulatorOptions, env: NodeJS.ProcessEnv = process.env): ResolvedOptions {
  return {
    port: 0,
    host: '127.0.0.1',
    maxPageSize: 100,
    latencyMs: 0,
    faultRate: 0,
    faults: ['500', '503', '429', 'drop'],
    retryAfterSeconds: 1,
    errorsAs200: false,
    streamFraming: 'sse',
    streamDelayMs: 0,
    seed: 1,
    answerMode: 'normal',
    ...withoutUndefined(opts),
    // copied: faults are taken off this list as they are used
    nextFaults: [...(opts.nextFaults ?? [])],
    secretKey: opts.secretKey || env.CHATBOT_SECRET_KEY || DEV_SECRET_KEY,
    sessionKey: opts.sessionKey || env.CHATBOT_SESSION_KEY || DEV_SESSION_KEY,
  };
}

export function withoutUndefined<T extends object>(obj: T): Partial<T> {
  return Object.fromEntries(Object.entries(obj).filter(([, v]) => v !== undefined)) as Partial<T>;
}
