// docker-compose.yml (no Docker engine here: its shape is checked by parsing; the Dockerfile's in
// test/release/support.test.ts),
// and the stack as compose runs it, without Docker: `feedsync emulator` and `feedsync worker
// --config fixtures/compose.yaml` as processes, then the ops commands a person would type.
import '../setup/needs-redis.js';
import { execFile, spawn, type ChildProcess } from 'node:child_process';
import { once } from 'node:events';
import { existsSync, mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { afterAll, describe, expect, it } from 'vitest';
import { parse } from 'yaml';
import { parseConfig } from '../../src/config/load.js';
import { dropPrefix, REDIS_URL, testRedis, uniquePrefix, until } from '../queue/helpers.js';
import { freePort } from './redis-server.js';
import { freshFetch } from '../helpers/fresh-fetch.js';

const REPO = fileURLToPath(new URL('../..', import.meta.url));
/** What docker-compose.yml gives the worker and the emulator (the emulator's development keys). */
const DEV_KEYS = { CHATBOT_SECRET_KEY: 'dev-secret-key', CHATBOT_SESSION_KEY: 'dev-session-key' };
const run = promisify(execFile);

describe('docker compose', () => {
  const compose = parse(readFileSync(`${REPO}/docker-compose.yml`, 'utf8'));

  it('has redis (AOF, noeviction, a volume), the emulator and a worker on the sample config', () => {
    const { redis, emulator, worker } = compose.services;
    expect(redis.image).toBe('redis:7-alpine');
    expect(redis.command.join(' ')).toContain('--appendonly yes');
    expect(redis.command.join(' ')).toContain('--maxmemory-policy noeviction');
    expect(redis.volumes[0]).toMatch(/^redis-data:\/data$/);
    expect(Object.keys(compose.volumes)).toEqual(['redis-data', 'emulator-data']);
    // the emulator keeps its data in a volume across restarts
    expect(emulator.command).toEqual([
      'emulator',
      '--host',
      '0.0.0.0',
      '--port',
      '8787',
      '--data-file',
      '/data/emulator.json',
      '--sessions',
      'SN-DEMO-1:1001',
    ]);
    // a one-shot service syncs the feeds and pushes the settings the smoke checks
    expect(compose.services.setup.command[0]).toContain(
      'enqueue sync --config /app/fixtures/compose.yaml --wait && node bin/feedsync.js enqueue settings',
    );
    expect(compose.services.setup.depends_on.worker.condition).toBe('service_healthy');
    expect(emulator.volumes).toEqual(['emulator-data:/data']);
    expect(worker.command).toEqual(['worker', '--config', '/app/fixtures/compose.yaml', '--port', '9464']);
    expect(worker.environment.REDIS_URL).toBe('redis://redis:6379');
    expect(Object.keys(worker.depends_on).sort()).toEqual(['emulator', 'redis']);
    expect(worker.ports).toEqual(['127.0.0.1:9464-9473:9464']);
    expect(emulator.ports).toEqual(['127.0.0.1:8787:8787']);
    // how to run your own config instead of the sample
    const text = readFileSync(`${REPO}/docker-compose.yml`, 'utf8');
    expect(text).toContain('./feedsync.yaml:/config/feedsync.yaml:ro');
    expect(text).toContain('command: ["worker", "--config", "/config/feedsync.yaml", "--port", "9464"]');
  });

  it('the sample config points at the emulator service and the redis service', () => {
    const config = parseConfig(readFileSync(`${REPO}/fixtures/compose.yaml`, 'utf8'), 'compose.yaml', DEV_KEYS);
    expect(config.api.baseUrl).toBe('http://emulator:8787');
    expect(config.redis?.url).toBe('redis://redis:6379');
    expect(config.feeds.map((f) => f.name)).toEqual(['austin-csv', 'zillow-xml', 'listhub-xml', 'reso-replay']);
    for (const f of config.feeds) expect(existsSync(`${REPO}/fixtures/${f.source.path}`)).toBe(true);
  });
});

describe('the compose stack without Docker', () => {
  const prefix = uniquePrefix();
  const redis = testRedis();
  const procs: ChildProcess[] = [];
  let env: NodeJS.ProcessEnv;
  let configFile: string;

  afterAll(async () => {
    for (const p of procs) {
      if (p.exitCode === null && p.signalCode === null) {
        const exited = once(p, 'exit');
        p.kill('SIGTERM');
        await exited;
      }
    }
    await dropPrefix(redis, prefix);
    await redis.quit();
  });

  async function spawnUntil(args: string[], ready: RegExp): Promise<{ proc: ChildProcess; logs: () => string }> {
    const proc = spawn(process.execPath, ['bin/feedsync.js', ...args], {
      cwd: REPO,
      env,
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    procs.push(proc);
    let logs = '';
    proc.stdout!.on('data', (d: Buffer) => (logs += d.toString()));
    proc.stderr!.on('data', (d: Buffer) => (logs += d.toString()));
    await until(`${args[0]} to start`, async () => {
      if (proc.exitCode !== null) throw new Error(`${args[0]} exited: ${logs}`);
      return ready.test(logs);
    });
    return { proc, logs: () => logs };
  }

  it('worker + enqueue --wait + runs + /metrics, as a person would use them', async () => {
    const emulatorPort = await freePort();
    env = {
      ...process.env,
      ...DEV_KEYS,
      REDIS_URL,
      FEEDSYNC_PREFIX: prefix,
      FEEDSYNC_API_URL: `http://127.0.0.1:${emulatorPort}`,
      LOG_LEVEL: 'info',
    };
    // the emulator as compose starts it (its --sessions too), on a free port and without a data file: fresh
    const composeArgs: string[] = parse(readFileSync(`${REPO}/docker-compose.yml`, 'utf8')).services.emulator.command;
    const sessions = composeArgs[composeArgs.indexOf('--sessions') + 1]!;
    await spawnUntil(
      ['emulator', '--host', '127.0.0.1', '--port', String(emulatorPort), '--sessions', sessions],
      new RegExp(String(emulatorPort)),
    );
    // The sample config without its schedules (a scheduled run during the test would add to the
    // counts), its feed paths made absolute for the copy in a temp dir.
    const dir = mkdtempSync(join(tmpdir(), 'feedsync-compose-'));
    configFile = join(dir, 'compose.yaml');
    const text = readFileSync(`${REPO}/fixtures/compose.yaml`, 'utf8')
      .split('\n')
      .filter((l) => !/^\s+schedule:/.test(l))
      .join('\n')
      .replaceAll('path: feeds/', `path: ${REPO}/fixtures/feeds/`);
    writeFileSync(configFile, text);
    const worker = await spawnUntil(['worker', '--config', configFile, '--port', '0'], /worker ready/);
    const port = Number(/"port":(\d+)/.exec(worker.logs())![1]);

    const cli = (...args: string[]) =>
      run(process.execPath, ['bin/feedsync.js', ...args, '--config', configFile], { cwd: REPO, env });
    const enq = await cli('enqueue', 'sync', '--feed', 'austin-csv', '--wait');
    const jobId = enq.stdout.trim();
    expect(jobId).toMatch(/^sync-austin-csv-/);
    expect(enq.stderr).toMatch(/synced austin-csv → SN-DEMO-1: 293 created, 0 updated, 0 deleted, 0 failed/);

    const runs = JSON.parse((await cli('runs', '--feed', 'austin-csv', '--json')).stdout);
    expect(runs.runs).toHaveLength(1);
    expect(runs.runs[0]).toMatchObject({
      jobId,
      job: 'listing-sync',
      feed: 'austin-csv',
      chatbot: 'SN-DEMO-1',
      outcome: 'ok',
    });

    const metrics = await (await freshFetch(`http://127.0.0.1:${port}/metrics`)).text();
    expect(metrics).toContain('feedsync_runs_total{job="listing-sync",outcome="ok"} 1');
    expect(metrics).toContain('feedsync_listings_total{feed="austin-csv",op="created"} 293');
    expect(metrics).toMatch(/feedsync_feed_last_success_timestamp_seconds\{feed="austin-csv"\} \d/);

    // What the compose `setup` service does, then the smoke of the sample config passes on this fresh emulator.
    await cli('enqueue', 'settings', '--wait');
    const smoke = await cli('smoke').catch((e: { code: number; stderr: string }) => e);
    expect(smoke.stderr).toContain('smoke: 1 passed, 0 failed');

    // A feed that is not in the config: exit status 2 before anything is queued.
    const unknown = await cli('enqueue', 'sync', '--feed', 'nope').catch((e: { code: number; stderr: string }) => e);
    expect(unknown).toMatchObject({ code: 2, stderr: expect.stringContaining('unknown feed nope') });
  }, 90_000);
});
