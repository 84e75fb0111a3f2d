// Where a config value came from, in a message's words: a refused credential names the config key
// and, when the config reads it from the environment (`secretKey: ${CHATBOT_SECRET_KEY}`), the
// variable the operator must fix, which is not the key. Never the value.
import type { LoadedConfig } from './schema.js';

export type FromEnv = LoadedConfig['fromEnv'];

/**
 * " (from $CHATBOT_SECRET_KEY)" for a key read from the environment; for a group of keys
 * (`feeds[mls].source.auth`), those of them that were: " (clientSecret from $MLS_CLIENT_SECRET)";
 * '' for a key written in the config itself (or unknown).
 */
export function fromEnvWords(fromEnv: FromEnv, ...keys: string[]): string {
  if (!fromEnv?.size) return '';
  const parts: string[] = [];
  for (const key of keys) {
    for (const [path, variables] of fromEnv) {
      const inside = path === key || path.startsWith(`${key}.`) || path.startsWith(`${key}[`);
      if (!inside) continue;
      const part = path === key ? '' : `${path.slice(key.length).replace(/^\./, '')} `;
      parts.push(`${part}from ${variables.map((v) => `$${v}`).join(', ')}`);
    }
  }
  return parts.length ? ` (${parts.join('; ')})` : '';
}
