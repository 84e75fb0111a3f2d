// The worker's push listener (push.host:push.port): POST /reso/events/<feed> (push-route.ts) and
// nothing else, so the port an MLS is given shows no status page, queue UI or metrics. Anything else
// is 404; every answer carries the same no-sniff, no-framing headers as the worker's other port.
import express, { type Express } from 'express';
import { pushRouter, type PushDeps } from './push-route.js';

export function createPushApp(deps: PushDeps): Express {
  const app = express();
  app.disable('x-powered-by');
  app.set('etag', false);
  app.use((_req, res, next) => {
    res.set('X-Content-Type-Options', 'nosniff');
    res.set('X-Frame-Options', 'DENY');
    res.set('Content-Security-Policy', "default-src 'none'; frame-ancestors 'none'");
    next();
  });
  app.use(pushRouter(deps));
  app.use((_req, res) => {
    res
      .status(404)
      .json({ error: 'this port answers POST /reso/events/<feed> only (pushed EntityEvents, RESO RCP-028)' });
  });
  return app;
}
