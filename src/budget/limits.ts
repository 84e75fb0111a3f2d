// What a budget is made of: request windows (per second, minute, hour, day) and calls in flight at
// once, for one credential. Plain data; the backends in this folder enforce it.
import { createHash } from 'node:crypto';

export const WINDOWS = ['perDay', 'perHour', 'perMinute', 'perSecond'] as const;
export type WindowName = (typeof WINDOWS)[number];

const WINDOW_SECONDS: Record<WindowName, number> = { perSecond: 1, perMinute: 60, perHour: 3600, perDay: 86_400 };

export interface BudgetLimits {
  perSecond?: number;
  perMinute?: number;
  perHour?: number;
  perDay?: number;
  /** calls in flight at once, summed over every process sharing the budget */
  concurrency?: number;
}

/**
 * A window limit as whole points over whole seconds (what the limiter counts in): 20/s is 20 per
 * 1 s, 0.5/s is 1 per 2 s, 2.5/s is 2 per 1 s (rounded down: a budget is never exceeded).
 */
export function windowShape(name: WindowName, limit: number): { points: number; durationSec: number } {
  const seconds = WINDOW_SECONDS[name];
  if (limit >= 1) return { points: Math.floor(limit), durationSec: seconds };
  return { points: 1, durationSec: Math.ceil(seconds / limit) };
}

/**
 * The Redis key part naming a credential: a hash of what identifies it (the service's origin and
 * the secret), so keys, logs and `redis-cli KEYS` never show the secret itself.
 */
export function credentialKey(kind: string, ...parts: Array<string | undefined>): string {
  const hash = createHash('sha256');
  hash.update(kind);
  for (const p of parts) hash.update(`\0${p ?? ''}`);
  return `${kind}-${hash.digest('hex').slice(0, 20)}`;
}

/** "2 requests/s, 7200/hour" for messages. */
export function describeLimits(l: BudgetLimits): string {
  const parts = WINDOWS.filter((w) => l[w] !== undefined).map((w) => `${l[w]}/${w.slice(3).toLowerCase()}`);
  if (l.concurrency !== undefined) parts.push(`${l.concurrency} in flight`);
  return parts.join(', ') || 'unlimited';
}
