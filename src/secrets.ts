// The one registry of secret values and the one masking function every output goes through.
// Masking goes by value, not by field or header name: a token configured under any header name
// (X-Api-Auth), in a URL's userinfo or in an ?access_token= query is replaced wherever it would
// appear — logs, tables, --json, error messages, job return values, run history in Redis.
// Short secrets are masked too: a leaked 3-character key is still a leaked key. A one-character value
// is not treated as a secret (it protects nothing and masking it would erase every output).
// Values, never text: masking is applied to string values before they are serialized (maskDeep,
// maskSecrets on one string), so a secret like `":"` cannot break a JSON document. Serialized text
// (a JSON log line, --json on stdout) is masked again only for secrets that cannot change its
// structure (maskText). A secret may belong to a scope (a feed): a server-issued token masks the
// outputs of its own feed, never another feed's.

const MASK = '[REDACTED]';

/** '' is every scope's: configured secrets; other keys are scopes (feed names) */
const secrets = new Map<string, Set<string>>([['', new Set()]]);
const patterns = new Map<string, RegExp | null>();
let count = 0;

function scopeSet(scope: string): Set<string> {
  let set = secrets.get(scope);
  if (!set) secrets.set(scope, (set = new Set()));
  return set;
}

/** Query parameters whose values are credentials (shown masked in URLs, registered as secrets). */
const SECRET_PARAM = /token|secret|pass(word|wd)?|pwd|key|sig(nature)?|auth|credential|session|code/i;

/** Remember a secret so it is masked everywhere. Its common encodings are remembered with it. */
export function registerSecret(value: string | undefined | null, scope = ''): void {
  if (!value) return;
  const set = scopeSet(scope);
  let added = false;
  for (const f of forms(value)) {
    if (f.length >= 2 && !set.has(f)) {
      set.add(f);
      count++;
      added = true;
    }
  }
  if (added) patterns.clear();
}

/** Forget a secret of a scope (an expired token): the registry does not grow with a worker's uptime. */
export function forgetSecret(value: string, scope: string): void {
  const set = secrets.get(scope);
  if (!set) return;
  for (const f of forms(value)) if (set.delete(f)) count--;
  if (set.size === 0 && scope !== '') secrets.delete(scope);
  patterns.clear();
}

function forms(value: string): string[] {
  const out = [value, value.trim(), encodeURIComponent(value), JSON.stringify(value).slice(1, -1)];
  const bearer = /^(Bearer|Basic|Token)\s+(.+)$/i.exec(value.trim());
  if (bearer?.[2]) out.push(bearer[2]);
  return out.filter((f) => f.length > 0);
}

/**
 * Whether a server-issued token may be taken as a secret: long enough and made of the characters
 * tokens are made of. A token endpoint answering `":"` or `Austin` would otherwise mask JSON
 * punctuation or every city of that name; such a token is used but not masked.
 */
export function tokenLike(value: string): boolean {
  return value.length >= 16 && /^[A-Za-z0-9._~+/=-]+$/.test(value) && /[A-Za-z]/.test(value);
}

/**
 * Whether masking `secret` inside serialized JSON keeps it JSON: no structural characters or
 * whitespace, not a piece of a literal (true, false, null), not a piece of a number.
 */
function safeInText(secret: string): boolean {
  if (/["\\{}[\]:,\s]/.test(secret)) return false;
  if (['true', 'false', 'null'].some((lit) => lit.includes(secret))) return false;
  return !/^[0-9.eE+-]+$/.test(secret);
}

/** Every configured header value is a secret, whatever the header's name. */
export function registerHeaderSecrets(headers: Record<string, string> | undefined): void {
  for (const value of Object.values(headers ?? {})) registerSecret(value);
}

/** The userinfo of a URL and the values of its secret query parameters. */
export function registerUrlSecrets(url: string | undefined): void {
  const u = parseUrl(url);
  if (!u) return;
  registerSecret(decode(u.username));
  registerSecret(decode(u.password));
  if (u.username || u.password) registerSecret(`${decode(u.username)}:${decode(u.password)}`);
  if (u.username && u.password)
    registerSecret(Buffer.from(`${decode(u.username)}:${decode(u.password)}`).toString('base64'));
  for (const [name, value] of u.searchParams) if (SECRET_PARAM.test(name)) registerSecret(value);
}

/** Names of config keys whose string values are credentials (secretKey, bearerToken, clientSecret, ...). */
const SECRET_KEY_NAME = /secret|token|password|passwd|sessionkey|apikey|api_key|accesskey|credential/i;

/**
 * Registers every secret of a parsed config (or any plain value): values under secret-named keys,
 * every value of a `headers` map whatever the header is called, and the userinfo and secret query
 * values of every URL. New credential fields (a RESO oauth2 clientSecret) are covered by their name.
 */
export function registerSecretsIn(value: unknown, key = ''): void {
  if (typeof value === 'string') {
    // a tokenUrl is where tokens come from, not a token: it stays readable in errors (its query masked)
    if (SECRET_KEY_NAME.test(key) && !/url$/i.test(key)) registerSecret(value);
    if (/^[a-z][a-z0-9+.-]*:\/\//i.test(value)) registerUrlSecrets(value);
    return;
  }
  if (Array.isArray(value)) {
    for (const v of value) registerSecretsIn(v, key);
    return;
  }
  if (value && typeof value === 'object') {
    for (const [k, v] of Object.entries(value)) {
      if (/^(media)?headers$/i.test(k) && v && typeof v === 'object') {
        for (const h of Object.values(v)) if (typeof h === 'string') registerSecret(h);
      } else {
        registerSecretsIn(v, k);
      }
    }
  }
}

/** Names of environment variables whose values are credentials (FEED_TOKEN, MLS_PASSWORD, BROKER_API_KEY). */
const SECRET_VARIABLE =
  /secret|token|passw(or)?d|pwd|(^|_)pass(_|$)|(^|_)((api|access|session|private)_?)?key(_|$)|apikey|credential|(^|_)auth(_|$)|(^|_)sig(nature)?(_|$)/i;

/** A value the environment gave one `${VAR}` of a config string: `at` is where it starts in the string. */
export interface EnvValue {
  variable: string;
  value: string;
  at: number;
}

/**
 * The values the environment gave the `${VAR}`s of one config string (`text`, after substitution)
 * that are secrets: a variable named as one (MLS_API_TOKEN), and a value that lands in a URL's
 * path and can be a token (mayBeToken), whatever its variable is called — a brokerage feed's token travels there
 * (https://feeds.example.com/export/${FEED_EXPORT_ID}/listings.csv), and a path's other parts are
 * written in the config. Not a value in a URL's scheme, host or port, or a whole URL from one
 * variable (nothing in them is known to be secret; the userinfo and secret query values of every URL
 * are registered by registerUrlSecrets), nor a `${VAR:-default}`'s default (it is written in the
 * config). Registered as the config is read, before it is checked: its errors quote values.
 */
export function registerEnvSecrets(text: string, filled: readonly EnvValue[]): void {
  const path = urlPathRange(text);
  for (const { variable, value, at } of filled)
    if (SECRET_VARIABLE.test(variable) || (path && at >= path.start && at < path.end && mayBeToken(value)))
      registerSecret(value);
}

/**
 * Whether a path's value, from a variable not named as a secret, can be a token: tokenLike, or 8
 * characters or more with a digit (an export ID shorter than a server's token; the config put it where
 * a credential goes). A region, a state, a year or a word (`tx`, `2026`, `listings`) is not, and
 * masking it would blank that word in every line printed (a timestamp's year, a count's noun).
 */
function mayBeToken(value: string): boolean {
  return tokenLike(value) || (value.length >= 8 && /\d/.test(value));
}

/** Where the path of an absolute URL is in `text` (from the first / after its host to its ? or #). */
function urlPathRange(text: string): { start: number; end: number } | undefined {
  const scheme = /^[a-z][a-z0-9+.-]*:\/\/[^/?#]*/i.exec(text);
  if (!scheme) return undefined;
  const start = scheme[0].length;
  const query = text.slice(start).search(/[?#]/);
  return { start, end: query < 0 ? text.length : start + query };
}

/** Basic auth credentials: the user, the password and the header value built from them. */
export function registerBasicAuth(user: string, password: string): void {
  registerSecret(password);
  registerSecret(Buffer.from(`${user}:${password}`).toString('base64'));
}

/**
 * The secrets that apply: every configured one, and those of `scope` (a feed), or of every scope
 * when the output belongs to no feed. `text`: only those safe to mask in serialized text.
 */
function patternFor(scope: string | undefined, text: boolean): RegExp | null {
  const id = `${text ? 't' : 'v'}:${scope ?? '*'}`;
  const cached = patterns.get(id);
  if (cached !== undefined) return cached;
  const chosen: string[] = [];
  for (const [name, set] of secrets)
    if (name === '' || scope === undefined || name === scope)
      for (const v of set) if (!text || safeInText(v)) chosen.push(v);
  const alternatives = [...new Set(chosen)]
    .sort((a, b) => b.length - a.length)
    .map((v) => v.replace(/[.*+?^${}()|[\]\\]/g, '\\$&'));
  // in text, never right after an escaping backslash: that would break the escape (`\n` of a "n1" secret)
  const pattern = alternatives.length
    ? new RegExp(`${text ? '(?<!(?:^|[^\\\\])(?:\\\\\\\\)*\\\\)' : ''}(?:${alternatives.join('|')})`, 'g')
    : null;
  patterns.set(id, pattern);
  return pattern;
}

/** A string value with every registered secret (configured, and `scope`'s or every scope's) replaced by [REDACTED]. */
export function maskSecrets(value: string, scope?: string): string {
  if (count === 0) return value;
  const pattern = patternFor(scope, false);
  return pattern ? value.replace(pattern, MASK) : value;
}

/**
 * Serialized text (a JSON log line, a document on stdout) masked as the last line of defence: only
 * secrets whose masking cannot change the text's structure. Mask values before serializing them.
 */
export function maskText(text: string): string {
  if (count === 0) return text;
  const pattern = patternFor(undefined, true);
  return pattern ? text.replace(pattern, MASK) : text;
}

/**
 * Whether serialized JSON may hold a registered secret (configured, or `scope`'s or every scope's)
 * in one of its strings. false means maskDeep would leave every value as it is, so the text is
 * already what serializing the masked value gives: a string holding a secret holds it escaped in
 * the JSON (escaping is character by character), and that escaped form is registered with it
 * (forms). true may be wrong (a match across a key and a value): mask the value then.
 */
export function mayHoldSecret(json: string, scope?: string): boolean {
  if (count === 0) return false;
  const pattern = patternFor(scope, false);
  // (search ignores the pattern's global state)
  return pattern !== null && json.search(pattern) >= 0;
}

/** JSON.stringify(maskDeep(value, scope)), serialized once when no secret can be in it (mayHoldSecret). */
export function maskedJson(value: unknown, scope?: string): string {
  const text = JSON.stringify(value);
  return mayHoldSecret(text, scope) ? JSON.stringify(maskDeep(value, scope)) : text;
}

/**
 * A JSON-like value with every string value masked; keys and other values as they are, so the
 * structure survives even a one-character secret (masking serialized JSON would not). `scope`: the
 * feed the value belongs to (its tokens masked, no other feed's).
 */
export function maskDeep<T>(value: T, scope?: string): T {
  if (count === 0) return value;
  return walk(value, scope) as T;
}

function walk(value: unknown, scope: string | undefined): unknown {
  if (typeof value === 'string') return maskSecrets(value, scope);
  if (Array.isArray(value)) return value.map((v) => walk(v, scope));
  if (value && typeof value === 'object') {
    if (value instanceof Error) return maskError(value, scope);
    if (value instanceof Date) return value;
    const proto = Object.getPrototypeOf(value);
    if (proto !== Object.prototype && proto !== null) {
      const json = (value as { toJSON?: () => unknown }).toJSON;
      return typeof json === 'function' ? walk(json.call(value), scope) : value;
    }
    return Object.fromEntries(Object.entries(value).map(([k, v]) => [k, walk(v, scope)]));
  }
  return value;
}

/** The error with its message (and stack) masked, in place: it may travel on as the same object. */
export function maskError<E>(err: E, scope?: string): E {
  if (err instanceof Error) {
    err.message = maskSecrets(err.message, scope);
    if (err.stack) err.stack = maskSecrets(err.stack, scope);
  }
  return err;
}

/** A URL as it may be shown: no userinfo, secret query values masked, registered secrets masked. */
export function maskUrl(url: string): string {
  const u = parseUrl(url);
  return maskSecrets(u ? withoutCredentials(u) : url);
}

/**
 * A URL as it may be kept (a state key or value): no userinfo, secret query values masked, the same
 * whatever secrets this process knows; a URL that holds neither is returned as it is, unparsed.
 */
export function credentialFreeUrl(url: string): string {
  const u = parseUrl(url);
  const holds = u && (u.username || u.password || [...u.searchParams.keys()].some((name) => SECRET_PARAM.test(name)));
  return u && holds ? withoutCredentials(u) : url;
}

function withoutCredentials(u: URL): string {
  u.username = '';
  u.password = '';
  for (const name of [...u.searchParams.keys()]) if (SECRET_PARAM.test(name)) u.searchParams.set(name, MASK);
  return u.toString().replace(/%5BREDACTED%5D/g, MASK);
}

/**
 * Mask what a stream is given to write: the last line of defence of a process's stdout/stderr, so
 * a report, a table or a stack printed by any command cannot carry a registered secret. `text`: the
 * stream carries serialized documents (stdout's --json), masked with maskText only.
 */
export function maskStream(stream: NodeJS.WriteStream, mode: 'text' | 'values' = 'values'): void {
  const marked = stream as NodeJS.WriteStream & { feedsyncMasked?: boolean };
  if (marked.feedsyncMasked) return;
  marked.feedsyncMasked = true;
  const write = stream.write.bind(stream) as (chunk: unknown, ...rest: unknown[]) => boolean;
  stream.write = ((chunk: unknown, ...rest: unknown[]) => {
    if (count && (typeof chunk === 'string' || chunk instanceof Uint8Array)) {
      const text = typeof chunk === 'string' ? chunk : Buffer.from(chunk).toString('utf8');
      return write(mode === 'text' ? maskText(text) : maskSecrets(text), ...rest);
    }
    return write(chunk, ...rest);
  }) as NodeJS.WriteStream['write'];
}

function parseUrl(url: string | undefined): URL | undefined {
  if (!url) return undefined;
  try {
    return new URL(url);
  } catch {
    return undefined; // (not a URL: nothing in it to register)
  }
}

function decode(s: string): string {
  try {
    return decodeURIComponent(s);
  } catch {
    return s; // (not percent-encoded: the text as it is)
  }
}

/** For tests: forget every secret. */
export function clearSecrets(): void {
  secrets.clear();
  secrets.set('', new Set());
  patterns.clear();
  count = 0;
}
