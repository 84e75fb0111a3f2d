// What the worker's HTTP face answers, and how its pages may be shown.
// - Who asks: /status, /ui and /metrics answer a peer (the socket's address, never a header) that is
//   loopback or in worker.allowFrom; any other peer needs the admin login (ui-auth.ts) when one is
//   set, and is refused (403) when none is. /healthz answers anyone (it shows no feed data).
// - Host names: only those configured (localhost, 127.0.0.1, ::1, worker.host, worker.allowedHosts).
//   A page on another site whose name resolves to this worker (DNS rebinding) sends its own Host
//   and is refused (421), so it cannot read /status or the queue UI through a browser on this host.
//   /healthz and /metrics answer any Host: probes and scrapers address the worker by IP or service
//   name. Pushed events (push-route.ts) have a listener of their own (push-app.ts), which answers
//   nothing else.
// - Every answer: X-Frame-Options DENY and a Content-Security-Policy (no framing, scripts from this
//   origin only; the status page and the queue UI use inline styles, the UI Google's fonts).
import type { NextFunction, Request, Response } from 'express';
import { peerAllowed } from '../net/peer-address.js';
import { adminAuthenticated, type UiAdmin } from './ui-auth.js';

const ALWAYS = ['localhost', '127.0.0.1', '::1'];
const ANY_HOST_PATHS = new Set(['/healthz', '/metrics']);
/** where pushed EntityEvents are posted (push-route.ts) */
export const PUSH_PATH = '/reso/events/';

const CONTENT_SECURITY_POLICY = [
  "default-src 'self'",
  "script-src 'self'",
  "style-src 'self' 'unsafe-inline' https://fonts.googleapis.com",
  "font-src 'self' https://fonts.gstatic.com data:",
  "img-src 'self' data:",
  "connect-src 'self'",
  "frame-ancestors 'none'",
  "base-uri 'self'",
  "form-action 'self'",
].join('; ');

/** The Host names the worker answers: the always-local ones, the address it listens on (not a wildcard), and the configured ones. */
export function allowedHosts(listenHost: string, configured: readonly string[] = []): string[] {
  const wildcard = listenHost === '0.0.0.0' || listenHost === '::' || listenHost === '';
  return [...new Set([...ALWAYS, ...(wildcard ? [] : [listenHost]), ...configured].map((h) => h.toLowerCase()))];
}

/** The name of a Host header without its port (`[::1]:9464` → `::1`). */
function hostName(header: string | undefined): string | undefined {
  if (!header) return undefined;
  const h = header.trim().toLowerCase();
  if (h.startsWith('[')) return h.slice(1, h.indexOf(']') > 0 ? h.indexOf(']') : undefined);
  const colon = h.indexOf(':');
  return colon < 0 ? h : h.slice(0, colon);
}

export function httpGuard(allowed: readonly string[]) {
  const names = new Set(allowed);
  return (req: Request, res: Response, next: NextFunction): void => {
    res.set('X-Frame-Options', 'DENY');
    res.set('Content-Security-Policy', CONTENT_SECURITY_POLICY);
    res.set('X-Content-Type-Options', 'nosniff');
    if (ANY_HOST_PATHS.has(req.path)) return next();
    const name = hostName(req.headers.host);
    if (name !== undefined && names.has(name)) return next();
    res
      .status(421)
      .type('text/plain')
      .send(
        `this worker answers the host names ${[...names].join(', ')}; add ${JSON.stringify(name ?? '')} to worker.allowedHosts to reach it by that name\n`,
      );
  };
}

/**
 * /status, /ui and /metrics: a loopback peer or one of worker.allowFrom reads them as before; another
 * needs the admin login when one is set (the pages' own guard asks for it; /metrics here), and is
 * refused when none is. /healthz answers anyone.
 */
export function peerGuard(allowFrom: readonly string[], admin: UiAdmin | undefined) {
  const allowed = peerAllowed(allowFrom);
  return (req: Request, res: Response, next: NextFunction): void => {
    if (req.path === '/healthz' || allowed(req.socket.remoteAddress)) return next();
    if (admin) {
      if (req.path !== '/metrics' || adminAuthenticated(req.headers.authorization, admin)) return next();
      res.setHeader('WWW-Authenticate', 'Basic realm="feedsync queue UI", charset="UTF-8"');
      res
        .status(401)
        .type('text/plain')
        .send(
          '/metrics from this address needs the admin login (FEEDSYNC_UI_TOKEN as a bearer token, or FEEDSYNC_UI_USER/FEEDSYNC_UI_PASSWORD)\n',
        );
      return;
    }
    res
      .status(403)
      .type('text/plain')
      .send(
        `this worker's pages answer loopback and worker.allowFrom only (this request came from ${req.socket.remoteAddress ?? 'an unknown address'}); add the address to worker.allowFrom, or set FEEDSYNC_UI_TOKEN to reach them with the admin login\n`,
      );
  };
}
