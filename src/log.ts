// One pino logger, to stderr (stdout is kept for --json output). Secrets never reach it: known
// secret fields are redacted by path, and every secret value registered in secrets.ts is replaced
// wherever it would appear in a line (message, error text, any field).
import { pino, type Logger } from 'pino';
import { maskSecrets } from './secrets.js';

export type { Logger };

// The registry lives in secrets.ts; these names stay for the callers that import them from here.
export { registerSecret, maskSecrets as redactSecrets } from './secrets.js';

const REDACT_PATHS = [
  'secretKey',
  'sessionKey',
  'token',
  'bearerToken',
  '*.secretKey',
  '*.sessionKey',
  '*.token',
  '*.bearerToken',
  'api.secretKey',
  'api.sessionKey',
  'headers.authorization',
  'headers.Authorization',
  'headers["chatrobot-sessionkey"]',
  '*.headers.authorization',
  '*.headers.Authorization',
  '*.headers["chatrobot-sessionkey"]',
];

export function createLogger(options: { level?: string; destination?: NodeJS.WritableStream | number } = {}): Logger {
  const level = options.level ?? process.env.LOG_LEVEL ?? 'info';
  return pino(
    {
      level,
      base: undefined,
      redact: { paths: REDACT_PATHS, censor: '[REDACTED]' },
      hooks: {
        // The last line of defence: a secret inside any string of a log line is masked too.
        streamWrite: (line: string) => maskSecrets(line),
      },
    },
    typeof options.destination === 'object' ? (options.destination as pino.DestinationStream) : pino.destination({ fd: options.destination ?? 2, sync: true }),
  );
}

export const silentLogger: Logger = pino({ level: 'silent' });
