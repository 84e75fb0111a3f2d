// /status (every feed at a glance) and /status/runs/:runId (one run's changes), as HTML.
import { Router } from 'express';
import { redactSecrets } from '../../log.js';
import { gatherStatus, type StatusDeps } from './status-data.js';
import { renderRun, renderStatus } from './status-page.js';

const RUN_CHANGES_SHOWN = 1000;

export function statusRouter(deps: StatusDeps): Router {
  const router = Router();
  router.get('/', async (_req, res) => {
    try {
      res.type('html').send(renderStatus(await gatherStatus(deps)));
    } catch (err) {
      res.status(503).type('text/plain').send(redactSecrets(`status unavailable: ${(err as Error).message}\n`));
    }
  });
  router.get('/runs/:runId', async (req, res) => {
    try {
      const runId = req.params.runId;
      const { run, changes } = await deps.changeLog.run(runId, RUN_CHANGES_SHOWN);
      res.status(run || changes.length ? 200 : 404).type('html').send(renderRun(runId, run, changes, RUN_CHANGES_SHOWN));
    } catch (err) {
      res.status(503).type('text/plain').send(redactSecrets(`run unavailable: ${(err as Error).message}\n`));
    }
  });
  return router;
}
