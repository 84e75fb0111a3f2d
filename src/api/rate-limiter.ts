// The Chatbot Service credential's budget: `api.ratePerSecond` requests a second and `api.concurrency`
// calls in flight, held by every process that shares the budget backend (Redis: the deployment;
// memory: this process). A 429's Retry-After pauses the whole credential (see client.ts).
import { createBudgets, credentialKey, memoryBackend, type Budget, type Budgets } from '../budget/index.js';
import { silentLogger } from '../log.js';
import { MAX_RETRY_AFTER_MS } from './retry.js';

export interface ApiBudgetSettings {
  baseUrl: string;
  secretKey: string;
  /** 0 or undefined: no rate limit */
  ratePerSecond?: number;
  /** undefined: no limit on calls in flight */
  concurrency?: number;
}

/** The budget of the service credential (origin + secret key, hashed) in `budgets`. */
export function apiBudget(budgets: Budgets, s: ApiBudgetSettings): Budget {
  const origin = new URL(s.baseUrl).origin;
  const rate = s.ratePerSecond && Number.isFinite(s.ratePerSecond) && s.ratePerSecond > 0 ? s.ratePerSecond : undefined;
  return budgets.budget(
    credentialKey('api', origin, s.secretKey),
    {
      ...(rate !== undefined && { perSecond: rate }),
      ...(s.concurrency !== undefined && { concurrency: s.concurrency }),
    },
    // A pause longer than a Retry-After the client would wait for is not waited out in-process either.
    { label: `Chatbot Service ${origin}`, maxWaitMs: MAX_RETRY_AFTER_MS },
  );
}

/**
 * A budget of this process alone (a client built without a shared one: tests, the bench). (Silent:
 * what a budget says is a Redis ask that failed, and the memory backend's cannot.)
 */
export function localApiBudget(s: ApiBudgetSettings): Budget {
  return apiBudget(createBudgets(memoryBackend(), silentLogger), s);
}
