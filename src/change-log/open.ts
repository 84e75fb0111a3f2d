// The change log as the reading commands (`history`, `runs show`) open it, without the API: Redis
// when the config has `redis`, else the file beside the state file — where `sync` wrote it.
import type { LoadedConfig } from '../config/schema.js';
import { closeRedis, createRedis } from '../redis/connection.js';
import { redisSettings } from '../redis/settings.js';
import { changeLogFile, stateFile } from '../state/paths.js';
import { requireRedis } from '../redis/require-redis.js';
import type { ChangeLog } from './change-log.js';
import { createFileChangeLog } from './file-change-log.js';
import { createRedisChangeLog } from './redis-change-log.js';

export async function openChangeLog(loaded: LoadedConfig): Promise<ChangeLog> {
  const { config } = loaded;
  if (!config.redis) return createFileChangeLog(changeLogFile(stateFile(loaded)), config.changeLog);
  const settings = redisSettings(loaded);
  const redis = createRedis(settings, { name: 'feedsync-history', purpose: 'command' });
  redis.on('error', () => {}); // reported through requireRedis()
  await requireRedis(redis, settings, { use: 'read' });
  const log = createRedisChangeLog(redis, settings.prefix, config.changeLog);
  return { ...log, close: async () => closeRedis(redis) };
}
