// `feedsync emulator`: the local Chatbot Service, until SIGINT/SIGTERM.
import { resolve } from 'node:path';
import { ConfigError, EnvironmentError } from '../errors.js';
import { createLogger } from '../log.js';
import { startEmulator, type Fault, type StreamFraming } from '../emulator/index.js';

export interface EmulatorCliOptions {
  port: number;
  host: string;
  maxPageSize: number;
  latencyMs: number;
  faultRate: number;
  faults: string;
  errorsAs200?: boolean;
  streamFraming: string;
  streamDelayMs: number;
  seed: number;
  chatbots?: string;
  secretKey?: string;
  sessionKey?: string;
  sessions?: string;
  dataFile?: string;
}

const FAULTS: readonly Fault[] = ['500', '503', '429', 'drop'];
const FRAMINGS: readonly StreamFraming[] = ['sse', 'lines', 'concat'];

export async function run(opts: EmulatorCliOptions): Promise<number> {
  const faults = opts.faults
    .split(',')
    .map((f) => f.trim())
    .filter(Boolean);
  const bad = faults.filter((f) => !FAULTS.includes(f as Fault));
  if (bad.length) throw new ConfigError(`--faults: unknown fault ${bad.join(', ')}; use ${FAULTS.join(',')}`);
  if (!FRAMINGS.includes(opts.streamFraming as StreamFraming)) {
    throw new ConfigError(`--stream-framing: ${opts.streamFraming} is not one of ${FRAMINGS.join(', ')}`);
  }

  const sessions = parseSessions(opts.sessions);

  const logger = createLogger();
  const emulator = await startEmulator({
    port: opts.port,
    host: opts.host,
    maxPageSize: opts.maxPageSize,
    latencyMs: opts.latencyMs,
    faultRate: opts.faultRate,
    faults: faults as Fault[],
    errorsAs200: opts.errorsAs200 ?? false,
    streamFraming: opts.streamFraming as StreamFraming,
    streamDelayMs: opts.streamDelayMs,
    seed: opts.seed,
    chatbots: opts.chatbots
      ?.split(',')
      .map((s) => s.trim())
      .filter(Boolean),
    secretKey: opts.secretKey,
    sessionKey: opts.sessionKey,
    dataFile: opts.dataFile ? resolve(opts.dataFile) : undefined,
    logger,
  }).catch((err: unknown) => {
    const code = (err as NodeJS.ErrnoException).code;
    if (code === 'ENOTFOUND' || code === 'EAI_AGAIN')
      throw new EnvironmentError(
        `Host ${opts.host}`,
        `is not a name this machine resolves (${code})`,
        'Give --host an address of this machine: 127.0.0.1 (the default), or 0.0.0.0 for every interface',
        { cause: err },
      );
    if (code !== 'EADDRINUSE') throw err;
    throw new EnvironmentError(
      `Port ${opts.port} on ${opts.host}`,
      'is in use by another program (EADDRINUSE)',
      'Stop what listens there (another emulator?), or give another with --port (0: any free port)',
      { cause: err },
    );
  });

  // What a config's smoke needs (chatbots[].smoke.sessionId), made at start: a fresh emulator answers it.
  for (const { serialNumber, sessionID } of sessions) emulator.createSession(serialNumber, sessionID);

  // The emulator's keys are its own development keys, shown so a person can curl it; a key that came
  // from the environment may be a real one, so only its presence is told.
  const shown = (flag: string | undefined, envName: string, fallback: string) =>
    flag || (process.env[envName] ? `(from ${envName})` : fallback);
  process.stderr.write(
    [
      `feedsync emulator listening on ${emulator.url}`,
      `  Authorization:        ${shown(opts.secretKey, 'CHATBOT_SECRET_KEY', 'dev-secret-key')}   (Edit, ClientAsk, RealEstateCreate/Update/Delete)`,
      `  chatrobot-sessionkey: ${shown(opts.sessionKey, 'CHATBOT_SESSION_KEY', 'dev-session-key')}   (RealEstateList)`,
      `  chatbots: ${opts.chatbots ?? 'any serial number'}; max page size ${opts.maxPageSize}; stream framing ${opts.streamFraming}` +
        (opts.faultRate > 0 ? `; faults ${faults.join(',')} at rate ${opts.faultRate} (seed ${opts.seed})` : '') +
        (opts.dataFile
          ? `; data kept in ${resolve(opts.dataFile)}`
          : '; data kept in memory only (--data-file to keep it)'),
      `  admin: GET /__emulator/listings?serialNumber=SN, GET /__emulator/stats, POST /__emulator/reset, POST /__emulator/sessions, POST /__emulator/hide (leave listings out of answers)`,
      'LOG_LEVEL=debug logs every request. Ctrl-C stops it.',
      '',
    ].join('\n'),
  );

  const signal = await new Promise<NodeJS.Signals>((resolve) => {
    process.once('SIGINT', () => resolve('SIGINT'));
    process.once('SIGTERM', () => resolve('SIGTERM'));
  });
  process.stderr.write(`feedsync emulator: ${signal}, stopping\n`);
  await emulator.close();
  return 0;
}

/** `SN-DEMO-1:1001,SN-DEMO-2:1002` → the sessions to create. */
function parseSessions(list: string | undefined): Array<{ serialNumber: string; sessionID: number }> {
  return (list ?? '')
    .split(',')
    .map((s) => s.trim())
    .filter(Boolean)
    .map((item) => {
      const m = /^(.+):(\d{1,9})$/.exec(item);
      if (!m)
        throw new ConfigError(
          `--sessions: ${JSON.stringify(item)} is not SERIALNUMBER:SESSIONID (e.g. SN-DEMO-1:1001)`,
        );
      return { serialNumber: m[1]!, sessionID: Number(m[2]) };
    });
}
