// What the worker's HTTP face answers, and how its pages may be shown.
// - Host names: only those configured (localhost, 127.0.0.1, ::1, worker.host, worker.allowedHosts).
//   A page on another site whose name resolves to this worker (DNS rebinding) sends its own Host
//   and is refused (421), so it cannot read /status or the queue UI through a browser on this host.
//   /healthz and /metrics answer any Host: probes and scrapers address the worker by IP or service
//   name, and neither shows feed data. So does /reso/events/ (push-route.ts): an MLS posts to the
//   worker's public name, and every request there needs the feed's bearer token, which a page in a
//   browser does not have.
// - Every answer: X-Frame-Options DENY and a Content-Security-Policy (no framing, scripts from this
//   origin only; the status page and the queue UI use inline styles, the UI Google's fonts).
import type { NextFunction, Request, Response } from 'express';

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
    if (ANY_HOST_PATHS.has(req.path) || req.path.startsWith(PUSH_PATH)) return next();
    const name = hostName(req.headers.host);
    if (name !== undefined && names.has(name)) return next();
    res
      .status(421)
      .type('text/plain')
      .send(`this worker answers the host names ${[...names].join(', ')}; add ${JSON.stringify(name ?? '')} to worker.allowedHosts to reach it by that name\n`);
  };
}
