// One pino logger, to stderr (stdout is kept for --json output). Secrets never reach it: known
// secret fields are redacted by path, and every secret value registered in secrets.ts is replaced
// wherever it would appear in a line (message, error text, any field): in the values before the
// line is serialized, and in the serialized line only where masking cannot break its JSON.
import { createRequire } from 'node:module';
import { pino, type Logger } from 'pino';
import type pinoPrettyModule from 'pino-pretty';
import { maskDeep, maskSecrets, maskText } from './secrets.js';
import { stderrLine, type StatusLine } from './terminal.js';

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

export function createLogger(
  options: { level?: string; destination?: NodeJS.WritableStream | number; pretty?: boolean } = {},
): Logger {
  const level = options.level ?? process.env.LOG_LEVEL ?? 'info';
  const pretty =
    options.pretty ?? (options.destination === undefined && wantsPretty(process.stderr, process.env.LOG_FORMAT));
  return pino(
    {
      level,
      base: undefined,
      redact: { paths: REDACT_PATHS, censor: '[REDACTED]' },
      formatters: { log: (fields) => maskDeep(fields) },
      hooks: {
        logMethod(args, method) {
          method.apply(
            this,
            args.map((a) => (typeof a === 'string' ? maskSecrets(a) : a)) as Parameters<typeof method>,
          );
        },
        // The last line of defence, on the serialized line: secrets whose masking keeps it JSON.
        streamWrite: (line: string) => maskText(line),
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
  // required here, when pretty output is chosen, not by every process that logs JSON (workers, pipes,
  // cron): a synchronous require (pino-pretty is CommonJS) keeps createLogger synchronous
  const pinoPretty: typeof pinoPrettyModule = createRequire(import.meta.url)('pino-pretty');
  const format = pinoPretty.prettyFactory({
    colorize: pinoPretty.isColorSupported && Boolean(process.stderr.isTTY),
    translateTime: 'SYS:HH:MM:ss',
    ignore: 'pid,hostname',
    singleLine: true,
  });
  return { write: (json: string) => line.above(format(json)) };
}

function lineOf(stream: NodeJS.WritableStream): StatusLine {
  return {
    show: () => {},
    clear: () => {},
    above: (text) => void stream.write(text.endsWith('\n') ? text : `${text}\n`),
  };
}

export const silentLogger: Logger = pino({ level: 'silent' });
