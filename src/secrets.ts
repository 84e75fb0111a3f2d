// The one registry of secret values and the one masking function every output goes through.
// Masking goes by value, not by field or header name: a token configured under any header name
// (X-Api-Auth), in a URL's userinfo or in an ?access_token= query is replaced wherever it would
// appear — logs, tables, --json, error messages, job return values, run history in Redis.
// Short secrets are masked too: a leaked 3-character key is still a leaked key. A one-character value
// is not treated as a secret (it protects nothing and masking it would erase every output).

export const MASK = '[REDACTED]';

const secrets = new Set<string>();
let pattern: RegExp | undefined;

/** Query parameters whose values are credentials (shown masked in URLs, registered as secrets). */
const SECRET_PARAM = /token|secret|pass(word|wd)?|pwd|key|sig(nature)?|auth|credential|session|code/i;

/** Remember a secret so it is masked everywhere. Its common encodings are remembered with it. */
export function registerSecret(value: string | undefined | null): void {
  if (!value) return;
  const forms = [value, value.trim(), encodeURIComponent(value), JSON.stringify(value).slice(1, -1)];
  const bearer = /^(Bearer|Basic|Token)\s+(.+)$/i.exec(value.trim());
  if (bearer?.[2]) forms.push(bearer[2]);
  let added = false;
  for (const f of forms) {
    if (f && f.length >= 2 && !secrets.has(f)) {
      secrets.add(f);
      added = true;
    }
  }
  if (added) pattern = undefined;
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
  if (u.username && u.password) registerSecret(Buffer.from(`${decode(u.username)}:${decode(u.password)}`).toString('base64'));
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
    if (SECRET_KEY_NAME.test(key)) registerSecret(value);
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

/** Basic auth credentials: the user, the password and the header value built from them. */
export function registerBasicAuth(user: string, password: string): void {
  registerSecret(password);
  registerSecret(Buffer.from(`${user}:${password}`).toString('base64'));
}

/** `text` with every registered secret replaced by [REDACTED]. */
export function maskSecrets(text: string): string {
  if (secrets.size === 0) return text;
  pattern ??= new RegExp(
    [...secrets]
      .sort((a, b) => b.length - a.length)
      .map((s) => s.replace(/[.*+?^${}()|[\]\\]/g, '\\$&'))
      .join('|'),
    'g',
  );
  return text.replace(pattern, MASK);
}

/**
 * A JSON-like value with every string value masked; keys and other values as they are, so the
 * structure survives even a one-character secret (masking serialized JSON would not).
 */
export function maskDeep<T>(value: T): T {
  if (secrets.size === 0) return value;
  return walk(value) as T;
}

function walk(value: unknown): unknown {
  if (typeof value === 'string') return maskSecrets(value);
  if (Array.isArray(value)) return value.map(walk);
  if (value && typeof value === 'object') {
    if (value instanceof Error) return maskError(value);
    if (value instanceof Date) return value;
    const proto = Object.getPrototypeOf(value);
    if (proto !== Object.prototype && proto !== null) {
      const json = (value as { toJSON?: () => unknown }).toJSON;
      return typeof json === 'function' ? walk(json.call(value)) : value;
    }
    return Object.fromEntries(Object.entries(value).map(([k, v]) => [k, walk(v)]));
  }
  return value;
}

/** The error with its message (and stack) masked, in place: it may travel on as the same object. */
export function maskError<E>(err: E): E {
  if (err instanceof Error) {
    err.message = maskSecrets(err.message);
    if (err.stack) err.stack = maskSecrets(err.stack);
  }
  return err;
}

/** A URL as it may be shown: no userinfo, secret query values masked, registered secrets masked. */
export function maskUrl(url: string): string {
  const u = parseUrl(url);
  if (!u) return maskSecrets(url);
  u.username = '';
  u.password = '';
  for (const name of [...u.searchParams.keys()]) if (SECRET_PARAM.test(name)) u.searchParams.set(name, MASK);
  return maskSecrets(u.toString().replace(/%5BREDACTED%5D/g, MASK));
}

/**
 * Mask what a stream is given to write: the last line of defence of a process's stdout/stderr, so
 * a report, a table or a stack printed by any command cannot carry a registered secret.
 */
export function maskStream(stream: NodeJS.WriteStream): void {
  const marked = stream as NodeJS.WriteStream & { feedsyncMasked?: boolean };
  if (marked.feedsyncMasked) return;
  marked.feedsyncMasked = true;
  const write = stream.write.bind(stream) as (chunk: unknown, ...rest: unknown[]) => boolean;
  stream.write = ((chunk: unknown, ...rest: unknown[]) => {
    if (secrets.size && (typeof chunk === 'string' || chunk instanceof Uint8Array)) {
      const text = typeof chunk === 'string' ? chunk : Buffer.from(chunk).toString('utf8');
      return write(maskSecrets(text), ...rest);
    }
    return write(chunk, ...rest);
  }) as NodeJS.WriteStream['write'];
}

function parseUrl(url: string | undefined): URL | undefined {
  if (!url) return undefined;
  try {
    return new URL(url);
  } catch {
    return undefined;
  }
}

function decode(s: string): string {
  try {
    return decodeURIComponent(s);
  } catch {
    return s;
  }
}

/** For tests: forget every secret. */
export function clearSecrets(): void {
  secrets.clear();
  pattern = undefined;
}
