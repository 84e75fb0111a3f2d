// /healthz: Redis answers a PING within a short time and every worker runs. Anything else is 503,
// so an orchestrator restarts a worker that cannot do its work.
import type { RedisClient } from '../redis/connection.js';
import { within } from '../redis/deadline.js';

export interface HealthDeps {
  redis: RedisClient;
  workersRunning(): boolean;
  timeoutMs?: number;
}

export interface Health {
  ok: boolean;
  redis: 'ok' | string;
  workers: 'running' | 'stopped';
}

export async function checkHealth(deps: HealthDeps): Promise<Health> {
  const redis = await pingWithin(deps.redis, deps.timeoutMs ?? 1000);
  const workers = deps.workersRunning() ? 'running' : 'stopped';
  return { ok: redis === 'ok' && workers === 'running', redis, workers };
}

async function pingWithin(redis: RedisClient, ms: number): Promise<string> {
  // ioredis queues commands while reconnecting; without a deadline a ping would wait forever.
  if (redis.status !== 'ready') return `not connected (${redis.status})`;
  return within(
    redis.ping().then(
      () => 'ok',
      (err: Error) => err.message,
    ),
    ms,
    `no answer within ${ms} ms`,
  );
}
