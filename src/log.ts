// One pino logger, to stderr (stdout is kept for --json output). Secrets never reach it: known
// secret fields are redacted by path, and every secret value registered with `registerSecret`
// is replaced wherever it would appear in a message or error text.
import { pino, type Logger } from 'pino';

export type { Logger };

const secrets = new Set<string>();

/** Remember a secret value (API keys, bearer tokens) so it is masked in every log line and error. */
export function registerSecret(value: string | undefined): void {
  if (value && value.length >= 4) secrets.add(value);
}

/** Replace every registered secret in a string by [REDACTED]. */
export function redactSecrets(text: string): string {
  let out = text;
  for (const s of secrets) out = out.split(s).join('[REDACTED]');
  return out;
}

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
        streamWrite: (line: string) => (secrets.size ? redactSecrets(line) : line),
      },
    },
    typeof options.destination === 'object' ? (options.destination as pino.DestinationStream) : pino.destination({ fd: options.destination ?? 2, sync: true }),
  );
}

export const silentLogger: Logger = pino({ level: 'silent' });
