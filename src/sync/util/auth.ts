// An authentication failure ends a feed's run at once (no further call: every later one would be
// refused too). The message names the config key a person must fix, never its value.
import { AUTH_HEADER, ENDPOINTS, type EndpointName } from '../../api/schemas.js';
import { ApiError, authStatus, FeedReadError, ResponseFormatError } from '../../errors.js';

/** What to tell a person about a refused credential, or undefined when `err` is no such refusal. */
export function authFailure(err: unknown, feed: string): string | undefined {
  const status = authStatus(err);
  if (status === undefined) return undefined;
  const refused = status === 401 ? 'refused the credentials (HTTP 401)' : 'refused access (HTTP 403)';
  if (err instanceof FeedReadError) {
    const key = err.credentialKey ?? "source.bearerToken (or the source's headers)";
    return `the feed server ${refused}: check feeds[${feed}].${key}; nothing further was asked of it (${err.message})`;
  }
  if (err instanceof ApiError || err instanceof ResponseFormatError) {
    const name = endpointOf(err.endpoint);
    const key = name && AUTH_HEADER[name] === 'chatrobot-sessionkey' ? 'api.sessionKey' : 'api.secretKey';
    return `the Chatbot Service ${refused} on ${err.endpoint}: check ${key}; no further call was made`;
  }
  return undefined;
}

/** The endpoint's name from what an error names it by (its path, or its name). */
function endpointOf(endpoint: string): EndpointName | undefined {
  return (Object.keys(ENDPOINTS) as EndpointName[]).find((n) => n === endpoint || ENDPOINTS[n] === endpoint);
}
