// An authentication failure ends a feed's run at once (no further call: every later one would be
// refused too). The steps record it as a value (model/refusal.ts); these are its words, made once, by
// the run, where the lane's report is made (run/feed-context.ts). The message names the config key a
// person must fix and, when the config reads it from the environment, the variable behind it
// (`api.secretKey (from $CHATBOT_SECRET_KEY)`): the key is right, the variable's value is not. Never
// the value.
import { AUTH_HEADER, ENDPOINTS, type EndpointName } from '../../api/schemas.js';
import { fromEnvWords, type FromEnv } from '../../config/env-words.js';
import { FeedReadError } from '../../errors.js';
import type { Refusal } from '../model/refusal.js';

/**
 * What to tell a person about a refused credential.
 * `fromEnv`: the config's values read from the environment (LoadedConfig's).
 */
export function authFailure({ err, status, feed }: Refusal, fromEnv?: FromEnv): string {
  const refused = status === 401 ? 'refused the credentials (HTTP 401)' : 'refused access (HTTP 403)';
  if (err instanceof FeedReadError) {
    const key = err.credentialKey ?? "source.bearerToken (or the source's headers)";
    const { check } = ownCheck(err.message);
    // the source's own words name the same setting without the feed: said once, under the feed's name
    const fix = check?.startsWith(key) ? check : key;
    // the setting a key names (its first word: `source.auth (clientId, clientSecret, scope)`), or where a source's credentials may be
    const settings = err.credentialKey ? [keyPath(err.credentialKey)] : ['source.bearerToken', 'source.headers'];
    const from = fromEnvWords(fromEnv, ...settings.map((s) => `feeds[${feed}].${s}`));
    return `the feed server ${refused}: check feeds[${feed}].${fix}${from}; nothing further was asked of it (${refusalWords(err.message, status)})`;
  }
  const name = endpointOf(err.endpoint);
  const key = name && AUTH_HEADER[name] === 'chatrobot-sessionkey' ? 'api.sessionKey' : 'api.secretKey';
  return `the Chatbot Service ${refused} on ${err.endpoint}: check ${key}${fromEnvWords(fromEnv, key)}; no further call was made`;
}

/**
 * A source's refusal in its own words (where, who refused what), without what the refusal's message
 * says before them: the status and the setting to check (a 401 said once, not "(HTTP 401)" twice).
 */
export function refusalWords(message: string, status: number): string {
  return ownCheck(message).what.replace(` (HTTP ${status})`, '');
}

/** A source error's closing "; check …" (a setting named without its feed, or as `feeds[].…`), apart from what happened and where. */
function ownCheck(message: string): { what: string; check?: string } {
  const at = message.lastIndexOf('; check ');
  if (at < 0) return { what: message };
  return { what: message.slice(0, at), check: message.slice(at + '; check '.length).replace(/^feeds\[\]\./, '') };
}

/** The config path a credential key names: `source.auth` of `source.auth (clientId, clientSecret, scope)`. */
function keyPath(key: string): string {
  return key.split(' ', 1)[0]!;
}

/** The endpoint's name from what an error names it by (its path, or its name). */
function endpointOf(endpoint: string): EndpointName | undefined {
  return (Object.keys(ENDPOINTS) as EndpointName[]).find((n) => n === endpoint || ENDPOINTS[n] === endpoint);
}
