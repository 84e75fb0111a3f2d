// What every one-shot command does around its work: a logger on stderr (warn by default, so the
// report stays readable; LOG_LEVEL to change), the runtime from config, and closing it whatever happens.
import type { ApiCallEvent } from '../api/types.js';
import type { LoadedConfig } from '../config/schema.js';
import { createLogger, type Logger } from '../log.js';
import { createRuntime, type Runtime } from '../runtime.js';

export async function withRuntime<T>(
  loaded: LoadedConfig,
  fn: (runtime: Runtime, logger: Logger) => Promise<T>,
  opts: { onCall?: (event: ApiCallEvent) => void; noRedis?: boolean; redisOptional?: boolean } = {},
): Promise<T> {
  const logger = createLogger({ level: process.env.LOG_LEVEL ?? 'warn' });
  const runtime = await createRuntime(loaded, {
    logger,
    onCall: opts.onCall,
    noRedis: opts.noRedis,
    redisOptional: opts.redisOptional,
  });
  try {
    return await fn(runtime, logger);
  } finally {
    await runtime.close();
  }
}
