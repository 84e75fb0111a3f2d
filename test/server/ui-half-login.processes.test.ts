// A worker given half of the queue UI's login (FEEDSYNC_UI_USER without FEEDSYNC_UI_PASSWORD, or the
// other way round) keeps the UI read-only, as with none. Its ready line said only the generic "set
// FEEDSYNC_UI_TOKEN, or FEEDSYNC_UI_USER and FEEDSYNC_UI_PASSWORD", so the operator who set the user
// looked for a login that never came; it names the variable that is missing.
import '../setup/needs-redis.js';
import { afterAll, expect, it } from 'vitest';
import { oneFeedDeployment } from '../queue/deploy.js';
import { REDIS_URL } from '../queue/helpers.js';
import { spawnWorker } from '../queue/worker-process.js';
import { freshFetch } from '../helpers/fresh-fetch.js';

const cleanups: Array<() => Promise<unknown>> = [];
afterAll(async () => {
  for (const c of cleanups.splice(0).reverse()) await c();
});

it.each([
  ['FEEDSYNC_UI_USER', 'FEEDSYNC_UI_PASSWORD'],
  ['FEEDSYNC_UI_PASSWORD', 'FEEDSYNC_UI_USER'],
])('%s without %s: read-only, and the ready line names the one missing', async (set, missing) => {
  const file = await oneFeedDeployment(`url: "${REDIS_URL}"`, cleanups, { name: 'homes', chatbot: 'SN-H' });
  const w = await spawnWorker(file, { env: { [set]: 'ops-admin-7f3k-horse', [missing]: '', FEEDSYNC_UI_TOKEN: '' } });
  cleanups.push(() => w.kill('SIGTERM'));
  expect(w.logs()).toContain('"ui":"read-only"');
  expect(w.logs()).toContain(`${set} is set without ${missing}: set both`);
  const refused = await freshFetch(`http://127.0.0.1:${w.port}/ui/api/queues/listing-sync/pause`, { method: 'PUT' });
  expect(refused.status).toBe(403);
});
