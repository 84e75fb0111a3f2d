// /status (every feed at a glance) and /status/runs/:runId (one run's changes), as HTML; with a
// login configured, /status/runs/:runId/undo shows the undo's dry-run plan (GET) and queues the
// undo (POST, same origin only). Without a login the run page shows the command instead.
import express, { Router, type Request } from 'express';
import { causeMessage } from '../../errors.js';
import { redactSecrets } from '../../log.js';
import { gatherStatus, type StatusDeps } from './status-data.js';
import { renderRun, renderStatus, renderUndoPlan, renderUndoQueued, undoCommands } from './status-page.js';

const RUN_CHANGES_SHOWN = 1000;

export function statusRouter(deps: StatusDeps): Router {
  const router = Router();
  router.get('/', async (_req, res) => {
    try {
      res.type('html').send(renderStatus(await gatherStatus(deps)));
    } catch (err) {
      res
        .status(503)
        .type('text/plain')
        .send(redactSecrets(`status unavailable: ${(err as Error).message}\n`));
    }
  });
  router.get('/runs/:runId', async (req, res) => {
    try {
      const runId = req.params.runId;
      const found = await deps.changeLog.run(runId, RUN_CHANGES_SHOWN);
      const { run, changes } = found;
      const undo =
        run && !run.dryRun
          ? { canAct: Boolean(deps.canAct && deps.undo), command: undoCommands(runId, deps.configFile) }
          : undefined;
      res
        .status(run || changes.length ? 200 : 404)
        .type('html')
        .send(renderRun(runId, found, RUN_CHANGES_SHOWN, undo));
    } catch (err) {
      res
        .status(503)
        .type('text/plain')
        .send(redactSecrets(`run unavailable: ${(err as Error).message}\n`));
    }
  });
  // (uiGuard in front: with a login configured every request here is authenticated; without one a POST is refused)
  router.get('/runs/:runId/undo', async (req, res) => {
    const runId = req.params.runId;
    if (!deps.canAct || !deps.undo) {
      res
        .status(403)
        .type('text/plain')
        .send(
          `no login is configured for the worker's UI, so it offers no actions: run\n  ${undoCommands(runId, deps.configFile).join('\n  ')}\n`,
        );
      return;
    }
    try {
      res.type('html').send(renderUndoPlan(await deps.undo.plan(runId)));
    } catch (err) {
      res
        .status(400)
        .type('text/plain')
        .send(redactSecrets(`the undo of run ${runId} cannot be planned: ${causeMessage(err)}\n`));
    }
  });
  router.post('/runs/:runId/undo', express.urlencoded({ extended: false, limit: '4kb' }), async (req, res) => {
    const runId = req.params.runId;
    if (!deps.canAct || !deps.undo) {
      res.status(403).type('text/plain').send("no login is configured for the worker's UI: it offers no actions\n");
      return;
    }
    // a form of this page only: a cross-site POST riding the browser's login is refused
    if (!sameOrigin(req)) {
      res.status(403).type('text/plain').send("refused: the undo form must be sent from this worker's own page\n");
      return;
    }
    const body = (req.body ?? {}) as Record<string, unknown>;
    if (body.confirm !== runId) {
      res.status(400).type('text/plain').send(`refused: the form does not confirm run ${runId}\n`);
      return;
    }
    try {
      const { jobId } = await deps.undo.enqueue(runId, body.force === 'on');
      res.type('html').send(renderUndoQueued(runId, jobId, body.force === 'on'));
    } catch (err) {
      res
        .status(400)
        .type('text/plain')
        .send(redactSecrets(`the undo of run ${runId} could not be queued: ${causeMessage(err)}\n`));
    }
  });
  return router;
}

/** the browser's Origin (or, without one, its Referer) names this host */
function sameOrigin(req: Request): boolean {
  const from = req.get('origin') ?? req.get('referer');
  if (!from) return false;
  try {
    return new URL(from).host === req.get('host');
  } catch {
    return false; // (an Origin that is not a URL names no host of ours)
  }
}
