// What was last pushed to a chatbot, as a hash: a later run with the same settings sends nothing.
import { createHash } from 'node:crypto';
import type { ChatbotSettings } from '../api/schemas.js';
import { byCodeUnit } from '../compare.js';

/** KvStore namespace of the hashes, keyed by serial number. */
export const SETTINGS_HASH_NS = 'settings-hash';

/** sha256 of the canonical JSON of serialNumber and settings: key order in the config does not matter. */
export function settingsHash(serialNumber: string, settings: ChatbotSettings): string {
  return createHash('sha256').update(canonicalJson({ serialNumber, settings })).digest('hex');
}

function canonicalJson(value: unknown): string {
  return JSON.stringify(value, (_key, v: unknown) =>
    v && typeof v === 'object' && !Array.isArray(v)
      ? Object.fromEntries(Object.entries(v as Record<string, unknown>).sort(([a], [b]) => byCodeUnit(a, b)))
      : v,
  );
}
