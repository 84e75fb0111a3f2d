// The worker's HTTP face: /healthz, /metrics, the queue UI (Bull Board) at /ui and the status page at
// /status, for loopback and worker.allowFrom (or the admin login: http-guard.ts peerGuard). Pushed
// events (POST /reso/events/<feed>) are answered on a listener of their own (push-app.ts), not here.
import { createBullBoard } from '@bull-board/api';
import { BullMQAdapter } from '@bull-board/api/bullMQAdapter';
import { ExpressAdapter } from '@bull-board/express';
import express, { type Express } from 'express';
import type { Queues } from '../queue/index.js';
import { checkHealth, type HealthDeps } from './health.js';
import { allowedHosts, httpGuard, peerGuard } from './http-guard.js';
import { uiGuard, type UiAdmin } from './ui-auth.js';
import type { WorkerMetrics } from './metrics.js';
import { statusRouter } from './status/routes.js';
import type { StatusDeps } from './status/status-data.js';
import { STATUS_PATH } from './status/status-page.js';

const UI_PATH = '/ui';

/**
 * `admin`: who may act in the queue UI (ui-auth.ts); without it the UI is read-only. /healthz stays
 * open; /metrics, /ui and /status answer loopback and `allowFrom` (worker.allowFrom), others only
 * with the admin login. `hosts`: the Host names answered (http-guard.ts); default the local ones.
 */
export function createApp(
  deps: HealthDeps & {
    queues: Queues;
    metrics: WorkerMetrics;
    status?: StatusDeps;
    admin?: UiAdmin;
    hosts?: readonly string[];
    allowFrom?: readonly string[];
  },
): Express {
  const app = express();
  app.disable('x-powered-by');
  app.use(httpGuard(deps.hosts ?? allowedHosts('127.0.0.1')));
  app.use(peerGuard(deps.allowFrom ?? [], deps.admin));

  app.get('/healthz', async (_req, res) => {
    const health = await checkHealth(deps);
    res.status(health.ok ? 200 : 503).json(health);
  });

  app.get('/metrics', async (_req, res) => {
    try {
      const body = await deps.metrics.registry.metrics();
      res.type(deps.metrics.registry.contentType).send(body);
    } catch (err) {
      res
        .status(503)
        .type('text/plain')
        .send(`metrics unavailable: ${(err as Error).message}\n`);
    }
  });

  const board = new ExpressAdapter();
  board.setBasePath(UI_PATH);
  createBullBoard({
    queues: Object.values(deps.queues).map((q) => new BullMQAdapter(q, { readOnlyMode: !deps.admin })),
    serverAdapter: board,
    options: { uiConfig: { boardTitle: 'feedsync' } },
  });
  app.use(UI_PATH, uiGuard(deps.admin), board.getRouter());

  // the status page follows the queue UI's rule: open to read without admin access, else behind it
  if (deps.status)
    app.use(STATUS_PATH, uiGuard(deps.admin), statusRouter({ ...deps.status, canAct: Boolean(deps.admin) }));

  app.get('/', (_req, res) => res.redirect(UI_PATH));
  return app;
}
