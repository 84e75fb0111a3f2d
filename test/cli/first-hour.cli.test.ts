// What an ops person evaluating feedsync meets in the first hour, walked from a fresh clone
// (README's setup, `init`, a feed over HTTP, the commands on the results): each rough edge found
// there, held here so it stays fixed. One paragraph a person can act on, the exit status the
// contract gives (docs/contracts.md), no stack trace, no hint naming a command that cannot work.
import { once } from 'node:events';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { feedsync } from '../settings/run-cli.js';

const dirs: string[] = [];
afterAll(async () => {
  for (const dir of dirs) await rm(dir, { recursive: true, force: true });
});

async function tempDir(): Promise<string> {
  const dir = await mkdtemp(join(tmpdir(), 'feedsync-first-hour-'));
  dirs.push(dir);
  return dir;
}

/** A config in a fresh folder syncing feed `name`, a CSV at `url` (`source` more keys of its source), into the embedded emulator. */
async function urlFeedConfig(name: string, url: string, source = ''): Promise<string> {
  const config = join(await tempDir(), 'feedsync.yaml');
  await writeFile(
    config,
    [
      'api: { baseUrl: embedded, secretKey: dev-secret-key, sessionKey: dev-session-key }',
      'chatbots: [{ serialNumber: SN-U }]',
      'feeds:',
      `  - { name: ${name}, chatbot: SN-U, source: { kind: csv, url: "${url}"${source} }, mapping: { fields: { MLSNumber: MLSNumber } } }`,
    ].join('\n'),
  );
  return config;
}

/** One paragraph on stderr, starting `feedsync: `, with no stack frame. */
function paragraph(stderr: string): string {
  expect(stderr).not.toMatch(/^\s+at /m);
  const lines = stderr.trimEnd().split('\n');
  expect(lines, stderr).toHaveLength(1);
  expect(lines[0]).toMatch(/^feedsync: /);
  return lines[0]!;
}

describe('the first hour with feedsync', () => {
  it('a --port out of range is a usage error (exit 2) naming the range, for the emulator and the worker, not a stack', async () => {
    for (const command of ['emulator', 'worker']) {
      const r = await feedsync([command, '--port', '99999']);
      expect(r.stderr, command).not.toMatch(/^\s+at /m);
      expect(r.stderr, command).not.toContain('transient');
      expect(r.stderr.split('\n')[0], command).toBe(
        "error: option '--port <n>' argument '99999' is invalid. must be a port number from 0 to 65535",
      );
      expect(r.code, command).toBe(2);
    }
  });

  it('a negative --limit is a usage error (exit 2), not taken silently', async () => {
    for (const args of [['feed', 'preview', '--feed', 'homes'], ['runs'], ['history']]) {
      const r = await feedsync([...args, '--limit', '-1']);
      expect(r.stderr.split('\n')[0], args[0]).toBe(
        "error: option '--limit <n>' argument '-1' is invalid. must be a whole number, 0 or more",
      );
      expect(r.code, args[0]).toBe(2);
    }
  });

  it('an emulator --max-page-size or --seed out of range is a usage error (exit 2) naming the flag and the range, not taken', async () => {
    const PAGE = 'must be a whole number from 1 to 10000';
    const SEED = 'must be a whole number from 0 to 4294967295';
    for (const [flag, value, range] of [
      ['--max-page-size', '0', PAGE],
      ['--max-page-size', '-5', PAGE],
      ['--max-page-size', '1000000000', PAGE],
      ['--seed', '-1', SEED],
      ['--seed', '4294967296', SEED],
      ['--seed', '1.5', SEED],
    ]) {
      // (a value taken starts the emulator, which runs until stopped: killed, its code is 1)
      const r = await feedsync(['emulator', '--port', '0', flag!, value!], {}, { timeout: 15_000 });
      expect(r.stderr.split('\n')[0], `${flag} ${value}`).toBe(
        `error: option '${flag} <n>' argument '${value}' is invalid. ${range}`,
      );
      expect(r.code, `${flag} ${value}`).toBe(2);
    }
  });

  // (--fault-rate 2 was refused after the parse, without the value; 'abc' said "must be a number", without the range)
  it('an emulator --fault-rate outside 0 to 1, or not a number, is a usage error (exit 2) naming the flag, the value and the range', async () => {
    for (const value of ['2', '-0.5', '1.01', 'abc', '', '0x1', 'Infinity']) {
      const r = await feedsync(['emulator', '--port', '0', '--fault-rate', value], {}, { timeout: 15_000 });
      expect(r.stderr.split('\n')[0], value).toBe(
        `error: option '--fault-rate <f>' argument '${value}' is invalid. must be a fraction from 0 to 1 (0.05: one request in 20)`,
      );
      expect(r.code, value).toBe(2);
    }
  });

  // (--port and --limit read '' as 0 and '0x50' as 80, and every one of them '1e3' as 1000: four rules for one question)
  it('every whole-number option takes decimal digits only: empty, hex or an exponent is a usage error (exit 2)', async () => {
    const PORT = 'must be a port number from 0 to 65535';
    const cases: [string[], string, string][] = [
      [['emulator'], '--port', PORT],
      [['worker'], '--port', PORT],
      [['emulator', '--port', '0'], '--max-page-size', 'must be a whole number from 1 to 10000'],
      [['emulator', '--port', '0'], '--seed', 'must be a whole number from 0 to 4294967295'],
      [['emulator', '--port', '0'], '--latency-ms', 'must be a whole number, 0 or more'],
      [['runs'], '--limit', 'must be a whole number, 0 or more'],
    ];
    for (const [args, flag, range] of cases)
      for (const value of ['', '0x50', '1e3']) {
        // (a value taken starts the emulator or the worker, which run until stopped: killed, the code is 1)
        const r = await feedsync([...args, flag, value], {}, { timeout: 10_000 });
        expect(r.stderr.split('\n')[0], `${args[0]} ${flag} '${value}'`).toBe(
          `error: option '${flag} <n>' argument '${value}' is invalid. ${range}`,
        );
        expect(r.code, `${args[0]} ${flag} '${value}'`).toBe(2);
      }
  }, 240_000);

  it('an emulator --host that does not resolve: which, and what to give instead (exit 1), not a stack', async () => {
    const r = await feedsync(['emulator', '--host', 'no-such-host.invalid', '--port', '0']);
    expect(r.code).toBe(1);
    expect(paragraph(r.stderr)).toBe(
      'feedsync: Host no-such-host.invalid is not a name this machine resolves (ENOTFOUND). Give --host an address of this machine: 127.0.0.1 (the default), or 0.0.0.0 for every interface.',
    );
  });

  it("undo's next steps name no command that cannot run: without Redis, no `pause` (it needs Redis)", async () => {
    const cwd = await tempDir();
    const env = { REDIS_URL: '' };
    expect((await feedsync(['init'], env, { cwd })).code).toBe(0);
    const synced = await feedsync(['sync'], env, { cwd });
    expect(synced.code).toBe(0);
    const run = /runs show (\S+)/.exec(synced.stderr)?.[1];
    expect(run, synced.stderr).toBeDefined();
    const undo = await feedsync(['undo', run!, '--dry-run'], env, { cwd });
    expect(undo.code).toBe(0);
    const next = undo.stderr.split('\n').filter((l) => l.trim().startsWith('next:'));
    expect(next, undo.stderr).toHaveLength(1);
    expect(next[0]).not.toContain('pause');
    expect(next[0]).toContain('to keep the undo, fix the feed before the next sync, or run no sync of it until then');
    // and pause itself, asked anyway, says it needs Redis
    const pause = await feedsync(['pause', '--feed', 'my-feed'], env, { cwd });
    expect(pause.code).toBe(2);
    expect(paragraph(pause.stderr)).toContain('needs Redis');
  });

  it('a feed server that accepts the request and never answers: a warning says so while the run waits, naming the deadline and the setting', async () => {
    const sockets = new Set<import('node:net').Socket>();
    const server: Server = createServer(() => {}); // never answers
    server.on('connection', (s) => sockets.add(s));
    server.listen(0, '127.0.0.1');
    await once(server, 'listening');
    const { port } = server.address() as AddressInfo;
    try {
      const config = await urlFeedConfig(
        'hangs',
        `http://127.0.0.1:${port}/homes.csv`,
        ', timeoutMs: 4000, retries: 0',
      );
      const t0 = Date.now();
      const r = await feedsync(['sync', '--config', config], { REDIS_URL: '', LOG_FORMAT: 'pretty' });
      expect(r.code).toBe(1);
      const waiting = r.stderr.split('\n').find((l) => l.includes('no answer yet'));
      expect(waiting, r.stderr).toContain(
        `GET http://127.0.0.1:${port}/homes.csv: no answer yet after 2 s; waiting up to 4 s in all (feeds[].source.timeoutMs)`,
      );
      expect(r.stderr).toContain('no response within 4000 ms (source.timeoutMs, a total deadline per request)');
      expect(Date.now() - t0).toBeLessThan(30_000);
    } finally {
      for (const s of sockets) s.destroy();
      server.close();
    }
  });

  it('a feed URL the server has nothing at (404, 410): the run fails (exit 1) saying so and naming the setting to check', async () => {
    const server: Server = createServer((req, res) => {
      res.writeHead(req.url === '/gone.csv' ? 410 : 404, { 'content-type': 'text/plain' });
      res.end('not found');
    });
    server.listen(0, '127.0.0.1');
    await once(server, 'listening');
    const { port } = server.address() as AddressInfo;
    try {
      for (const [file, status] of [
        ['homes.csv', '404 Not Found'],
        ['gone.csv', '410 Gone'],
      ] as const) {
        const config = await urlFeedConfig('nowhere', `http://127.0.0.1:${port}/${file}`);
        const r = await feedsync(['sync', '--config', config], { REDIS_URL: '' });
        expect(r.code).toBe(1);
        const first = r.stderr.split('\n').find((l) => l.startsWith('feed nowhere'));
        expect(first).toBe(
          `feed nowhere → chatbot SN-U: failed — the feed was not read whole, so nothing was deleted: http://127.0.0.1:${port}/${file}: HTTP ${status}: not found; the server has no feed at this URL: check feeds[].source.url`,
        );
        // and `runs`, where a person looks next, points at the command that says why
        const run = /runs show (\S+)/.exec(r.stderr)?.[1];
        const runs = await feedsync(['runs', '--config', config], { REDIS_URL: '' });
        expect(runs.code).toBe(0);
        expect(runs.stderr.trimEnd().split('\n').at(-1)).toMatch(
          new RegExp(`^1 of these runs did not end ok; why: \`.*feedsync.* runs show ${run} --config ${config}\`$`),
        );
      }
    } finally {
      server.close();
    }
  });

  // (run as README says in a clone, `npx feedsync sync` before `init` said to run `feedsync init`: not on the PATH there)
  it('hints are written the way feedsync was started: no config yet names init as this process was run', async () => {
    const cwd = await tempDir();
    const bin = join(import.meta.dirname, '../../bin/feedsync.js');
    // (npm_command: as started by node, not npm; `npx vitest` and `npm test` set it for the suite)
    const env = { REDIS_URL: '', npm_command: '' };
    const r = await feedsync(['sync'], env, { cwd });
    expect(r.code).toBe(2);
    expect(paragraph(r.stderr)).toContain(`write a starter one with \`node ${bin} init\``);
    const npx = await feedsync(['sync'], { ...env, npm_command: 'exec' }, { cwd });
    expect(paragraph(npx.stderr)).toContain('write a starter one with `npx feedsync init`');
    const other = await feedsync(['sync', '--config', 'prod.yaml'], env, { cwd });
    expect(paragraph(other.stderr)).toContain(`write a starter one with \`node ${bin} init --config prod.yaml\``);
  });
});
