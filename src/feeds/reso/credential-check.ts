// The setting a RESO source's refused credential comes from, said one way: the key it hands on
// (FeedReadError.credentialKey, which a feed's run names under the feed and looks up the variable
// behind: sync/util/auth.ts) and the "check …" of its own message are made from the same words.

/** a long-lived bearer token (MLS Grid, Bridge) */
export const BEARER_KEY = 'source.bearerToken';
/** the settings an OAuth2 client is made of (Trestle) */
export const OAUTH2_KEY = 'source.auth (clientId, clientSecret, scope)';
/** a server that wants credentials from a source that has none */
export const NO_CREDENTIAL_KEY = 'source.auth or source.bearerToken';

export type CredentialKey = typeof BEARER_KEY | typeof OAUTH2_KEY | typeof NO_CREDENTIAL_KEY;

/** What to check, as a source's message says it (feeds[]: the source does not know its feed's name). */
export function credentialCheck(key: CredentialKey): string {
  // a client the token endpoint accepts may still lack the rights to the resource
  return `check feeds[].${key}${key === OAUTH2_KEY ? " and the client's rights" : ''}`;
}
