// The queue UI's login is an admin login: `FEEDSYNC_UI_TOKEN=x` was accepted (a one-character token
// anyone guesses, and one the secrets registry never masks). A worker given a token shorter than a
// push token's 32 characters, or a password shorter than 15, refuses to start as for any bad setting:
// exit 2, naming the variable and the minimum, never its value.
import '../setup/needs-redis.js';
import { afterAll, expect, it } from 'vitest';
import { oneFeedDeployment } from '../queue/deploy.js';
import { REDIS_URL } from '../queue/helpers.js';
import { feedsync } from '../settings/run-cli.js';

const cleanups: Array<() => Promise<unknown>> = [];
afterAll(async () => {
  for (const c of cleanups.splice(0).reverse()) await c();
});

it.each([
  ['a one-character token', { FEEDSYNC_UI_TOKEN: 'x' }, 'FEEDSYNC_UI_TOKEN', 'x', 32],
  ['a short token', { FEEDSYNC_UI_TOKEN: 'ui-tok-7f3kq9' }, 'FEEDSYNC_UI_TOKEN', 'ui-tok-7f3kq9', 32],
  [
    'a short password',
    { FEEDSYNC_UI_USER: 'ops', FEEDSYNC_UI_PASSWORD: 'pw-7f3kq9z' },
    'FEEDSYNC_UI_PASSWORD',
    'pw-7f3kq9z',
    15,
  ],
])(
  '%s: the worker refuses to start (exit 2), naming the variable and the minimum',
  async (_, env, name, value, min) => {
    const file = await oneFeedDeployment(`url: "${REDIS_URL}"`, cleanups, { name: 'homes', chatbot: 'SN-L' });
    const unset = { FEEDSYNC_UI_TOKEN: '', FEEDSYNC_UI_USER: '', FEEDSYNC_UI_PASSWORD: '' };
    // a worker that starts runs until stopped: the timeout ends it (then its code is not 2)
    const r = await feedsync(['worker', '--config', file, '--port', '0'], { ...unset, ...env }, { timeout: 20_000 });
    expect(r.stderr).not.toContain('worker ready');
    expect(r.code).toBe(2);
    expect(r.stderr).toContain(name);
    expect(r.stderr).toContain(`at least ${min} characters`);
    // the value itself is never printed ('x' is a letter of every line: only the longer ones are looked for)
    if (value.length > 1) expect(r.stdout + r.stderr).not.toContain(value);
  },
  30_000,
);

it('a short token and a short password: the worker names each variable, never a value', async () => {
  const file = await oneFeedDeployment(`url: "${REDIS_URL}"`, cleanups, { name: 'homes', chatbot: 'SN-L' });
  const env = { FEEDSYNC_UI_TOKEN: 'ui-tok-7f3kq9', FEEDSYNC_UI_USER: 'ops', FEEDSYNC_UI_PASSWORD: 'pw-7f3kq9z' };
  const r = await feedsync(['worker', '--config', file, '--port', '0'], env, { timeout: 20_000 });
  expect(r.code).toBe(2);
  expect(r.stderr).toContain('FEEDSYNC_UI_TOKEN is too short');
  expect(r.stderr).toContain('FEEDSYNC_UI_PASSWORD is too short');
  for (const value of [env.FEEDSYNC_UI_TOKEN, env.FEEDSYNC_UI_PASSWORD])
    expect(r.stdout + r.stderr).not.toContain(value);
}, 30_000);

it.each([
  ['a short token', { FEEDSYNC_UI_TOKEN: 'ui-tok-7f3kq9' }, 'FEEDSYNC_UI_TOKEN', 32],
  ['a short password', { FEEDSYNC_UI_USER: 'ops', FEEDSYNC_UI_PASSWORD: 'pw-7f3kq9z' }, 'FEEDSYNC_UI_PASSWORD', 15],
])(
  '%s: config check says what the worker would refuse (exit 2), naming the variable and the minimum',
  async (_, env, name, min) => {
    const file = await oneFeedDeployment(`url: "${REDIS_URL}"`, cleanups, { name: 'homes', chatbot: 'SN-L' });
    const unset = { FEEDSYNC_UI_TOKEN: '', FEEDSYNC_UI_USER: '', FEEDSYNC_UI_PASSWORD: '' };
    const r = await feedsync(['config', 'check', '--config', file], { ...unset, ...env });
    expect(r.code).toBe(2);
    expect(r.stderr).toContain(`${name} is too short`);
    expect(r.stderr).toContain(`at least ${min} characters`);
    for (const value of Object.values(env)) if (value.length > 3) expect(r.stdout + r.stderr).not.toContain(value);
  },
  30_000,
);

it('a user without its password: config check says what the worker start says, and passes (exit 0)', async () => {
  const file = await oneFeedDeployment(`url: "${REDIS_URL}"`, cleanups, { name: 'homes', chatbot: 'SN-L' });
  const r = await feedsync(['config', 'check', '--config', file], {
    FEEDSYNC_UI_TOKEN: '',
    FEEDSYNC_UI_USER: 'ops',
    FEEDSYNC_UI_PASSWORD: '',
  });
  expect(r.code).toBe(0);
  expect(r.stderr).toContain('FEEDSYNC_UI_USER is set without FEEDSYNC_UI_PASSWORD');
}, 30_000);
