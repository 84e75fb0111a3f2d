// One pino logger, to stderr (stdout is kept for --json output). Secrets never reach it: known
// secret fields are redacted by path, and every secret value registered with `registerSecret`
// is replaced wherever it would appear in a message or error text.
import { pino, type Logger } from 'pino';
import pinoPretty from 'pino-pretty';
import { stderrLine, type StatusLine } from './terminal.js';

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

export function createLogger(
  options: { level?: string; destination?: NodeJS.WritableStream | number; pretty?: boolean } = {},
): Logger {
  const level = options.level ?? process.env.LOG_LEVEL ?? 'info';
  const pretty = options.pretty ?? (options.destination === undefined && wantsPretty(process.stderr, process.env.LOG_FORMAT));
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
    pretty
      ? prettyDestination(typeof options.destination === 'object' ? lineOf(options.destination) : stderrLine)
      : typeof options.destination === 'object'
        ? (options.destination as pino.DestinationStream)
        : pino.destination({ fd: options.destination ?? 2, sync: true }),
  );
}

/** Human-readable lines on a terminal; JSON lines everywhere else (files, pipes, log shippers). LOG_FORMAT=json|pretty decides. */
export function wantsPretty(stream: { isTTY?: boolean }, format: string | undefined): boolean {
  if (format === 'json') return false;
  if (format === 'pretty') return true;
  return Boolean(stream.isTTY);
}

/** pino-pretty in-process (no worker thread), written above the progress line so the two never share a line. */
function prettyDestination(line: StatusLine): pino.DestinationStream {
  const format = pinoPretty.prettyFactory({
    colorize: pinoPretty.isColorSupported && Boolean(process.stderr.isTTY),
    translateTime: 'SYS:HH:MM:ss',
    ignore: 'pid,hostname',
    singleLine: true,
  });
  return { write: (json: string) => line.above(format(json)) };
}

function lineOf(stream: NodeJS.WritableStream): StatusLine {
  return { show: () => {}, clear: () => {}, above: (text) => void stream.write(text.endsWith('\n') ? text : `${text}\n`) };
}

export const silentLogger: Logger = pino({ level: 'silent' });
