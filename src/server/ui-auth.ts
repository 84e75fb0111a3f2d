// Who may act in the queue UI. Without admin access configured the UI is read-only: Bull Board runs
// in read-only mode and every request under /ui other than GET/HEAD is refused here as well, so an
// unauthenticated POST .../add {"force":true} cannot start a forced sync. With FEEDSYNC_UI_TOKEN, or
// FEEDSYNC_UI_USER and FEEDSYNC_UI_PASSWORD, set in the worker's environment, /ui asks for them
// (HTTP Basic, or `Authorization: Bearer <token>`) and then offers every action.
import { createHash, timingSafeEqual } from 'node:crypto';
import type { NextFunction, Request, Response } from 'express';
import type { z } from 'zod';
import { bearerToken, loginPassword } from '../config/secret-length.js';
import { ConfigError, type ConfigIssue } from '../errors.js';
import { registerBasicAuth, registerSecret } from '../secrets.js';

export interface UiAdmin {
  token?: string;
  user?: string;
  password?: string;
}

export const UI_ADMIN_HINT =
  "set FEEDSYNC_UI_TOKEN, or FEEDSYNC_UI_USER and FEEDSYNC_UI_PASSWORD, in the worker's environment to enable the queue UI's actions";

/**
 * What to set for the UI's actions, as the worker's start says it: half of the login (a user without
 * its password, or the other way round) named, since the operator who set it expects a login.
 */
export function uiAdminHint(env: NodeJS.ProcessEnv = process.env): string {
  const [user, password] = [Boolean(env.FEEDSYNC_UI_USER), Boolean(env.FEEDSYNC_UI_PASSWORD)];
  if (user === password) return UI_ADMIN_HINT;
  const [set, missing] = user
    ? ['FEEDSYNC_UI_USER', 'FEEDSYNC_UI_PASSWORD']
    : ['FEEDSYNC_UI_PASSWORD', 'FEEDSYNC_UI_USER'];
  return `${set} is set without ${missing}: set both (or FEEDSYNC_UI_TOKEN) in the worker's environment to enable the queue UI's actions`;
}

/** FEEDSYNC_UI_TOKEN: a bearer token as a feed's push.token is (config/secret-length.ts) */
const UiToken = bearerToken('a long random value, e.g. `openssl rand -hex 32`');
/** FEEDSYNC_UI_PASSWORD: a password a person types into the browser's login */
const UiPassword = loginPassword('a passphrase of several words, or `openssl rand -base64 15`');

/**
 * Admin access from the environment, or undefined (read-only UI). Its values are registered as
 * secrets. A token or password too short to protect anything is a ConfigError (exit 2) naming each
 * such variable and its rule, never a value: a worker does not start behind a login anyone guesses.
 */
export function uiAdminFromEnv(env: NodeJS.ProcessEnv = process.env): UiAdmin | undefined {
  // (read once: the values checked are the values used)
  const login = uiLoginOf(env);
  const { token, user, password } = login;
  if (user && password) registerBasicAuth(user, password);
  registerSecret(token);
  registerSecret(password);
  const short = shortSecrets(login);
  if (short.length) throw new ConfigError(`${short.map((i) => i.message).join('; ')}; the worker did not start`);
  if (!token && !(user && password)) return undefined;
  return { token, ...(user && password && { user, password }) };
}

/**
 * The queue UI's secrets in `env` too short to protect anything, one issue each (its path the
 * variable, never its value): what the worker's start refuses and `feedsync config check` reports.
 */
export function uiSecretIssues(env: NodeJS.ProcessEnv = process.env): ConfigIssue[] {
  return shortSecrets(uiLoginOf(env));
}

/** The login's variables as `env` has them, each read once (unset or empty: undefined). */
function uiLoginOf(env: NodeJS.ProcessEnv): UiAdmin {
  return {
    token: env.FEEDSYNC_UI_TOKEN || undefined,
    user: env.FEEDSYNC_UI_USER || undefined,
    password: env.FEEDSYNC_UI_PASSWORD || undefined,
  };
}

function shortSecrets({ token, password }: UiAdmin): ConfigIssue[] {
  return [
    tooShort('FEEDSYNC_UI_TOKEN', "the queue UI's token", token, UiToken),
    // checked when set alone too: it is a secret someone chose for a login, and half of a login is said at the start
    tooShort('FEEDSYNC_UI_PASSWORD', "the queue UI's password", password, UiPassword),
  ].filter((i) => i !== undefined);
}

function tooShort(
  variable: string,
  what: string,
  value: string | undefined,
  rule: z.ZodString,
): ConfigIssue | undefined {
  if (value === undefined) return undefined;
  const parsed = rule.safeParse(value);
  if (parsed.success) return undefined;
  const rules = parsed.error.issues.map((i) => i.message).join('; ');
  return {
    path: variable,
    message: `${variable} is too short: ${what} ${rules}; set a longer one in the worker's environment (or unset it: the queue UI is then read-only)`,
  };
}

/** Express middleware for /ui: read-only without admin access; with it, every request must authenticate. */
export function uiGuard(admin: UiAdmin | undefined) {
  return (req: Request, res: Response, next: NextFunction): void => {
    if (!admin) {
      if (req.method === 'GET' || req.method === 'HEAD') return next();
      res.status(403).json({ error: `the queue UI is read-only: ${UI_ADMIN_HINT}` });
      return;
    }
    if (adminAuthenticated(req.headers.authorization, admin)) return next();
    res.setHeader('WWW-Authenticate', 'Basic realm="feedsync queue UI", charset="UTF-8"');
    res.status(401).json({
      error: 'the queue UI needs the admin credentials (FEEDSYNC_UI_TOKEN or FEEDSYNC_UI_USER/FEEDSYNC_UI_PASSWORD)',
    });
  };
}

/** Whether a request's Authorization header carries the admin credentials (bearer token, or Basic). */
export function adminAuthenticated(header: string | undefined, admin: UiAdmin): boolean {
  if (!header) return false;
  const [scheme = '', value = ''] = header.split(/\s+/, 2);
  if (/^bearer$/i.test(scheme)) return Boolean(admin.token) && same(value, admin.token!);
  if (!/^basic$/i.test(scheme)) return false;
  const decoded = Buffer.from(value, 'base64').toString('utf8');
  const colon = decoded.indexOf(':');
  if (colon < 0) return false;
  const user = decoded.slice(0, colon);
  const password = decoded.slice(colon + 1);
  if (admin.user && admin.password && same(user, admin.user) && same(password, admin.password)) return true;
  // a browser can send the token as the password of any user name
  return Boolean(admin.token) && same(password, admin.token!);
}

/** Whether a credential sent equals the configured one, in constant time: equal-length digests compared, so neither content nor length shows in the time taken. */
export function sameSecret(sent: string, configured: string): boolean {
  const digest = (s: string) => createHash('sha256').update(s, 'utf8').digest();
  return timingSafeEqual(digest(sent), digest(configured));
}

const same = sameSecret;
