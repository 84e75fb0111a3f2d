// Ctrl-C in the middle of a `feedsync sync` (README, exit status; runbook, "Stopping"): the calls in
// flight finish, nothing new is sent, and the run reports what it did — exit 1, outcome `aborted`,
// a rerun helps and says so — with no stack trace; the next run goes on from what was written.
import { spawn } from 'node:child_process';
import { once } from 'node:events';
import { writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { beforeAll, describe, expect, it } from 'vitest';
import { feedsync } from '../settings/run-cli.js';
import { csv, rows, SN, useEmulatorSync, writeHomesConfig } from '../sync/helpers/feed.js';

const BIN = join(import.meta.dirname, '../../bin/feedsync.js');
const sync = useEmulatorSync({ perFile: true, emulator: { latencyMs: 100 } });
let config = '';
beforeAll(async () => {
  await writeFile(join(sync.env().dir, 'homes.csv'), csv(rows(200)));
  config = await writeHomesConfig(sync, { top: ['  concurrency: 2'] });
});

const creates = async () => (await sync.te().stats()).requests['/chat/Chatbot/RealEstateCreate']?.['200'] ?? 0;

describe('feedsync sync stopped by SIGINT', () => {
  it('finishes the calls in flight, reports aborted (exit 1, rerun to finish), and the rerun writes the rest', async () => {
    const child = spawn(process.execPath, [BIN, 'sync', '--config', config, '--json'], {
      env: { ...process.env, LOG_LEVEL: 'warn' },
    });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (d: Buffer) => (stdout += d.toString()));
    child.stderr.on('data', (d: Buffer) => (stderr += d.toString()));
    const exited = once(child, 'exit') as Promise<[number | null, string | null]>;
    for (let i = 0; i < 600 && (await creates()) < 6; i++) await sleep(50);
    child.kill('SIGINT');
    const [code] = await exited;

    expect(code, stderr).toBe(1);
    expect(stderr).not.toMatch(/^\s+at /m);
    const { reports } = JSON.parse(stdout) as {
      reports: Array<{ outcome: string; retryable: boolean; message: string; counts: { created: number } }>;
    };
    expect(reports).toHaveLength(1);
    const [report] = reports;
    expect(report).toMatchObject({ outcome: 'aborted', retryable: true });
    expect(report!.message).toBe(
      'stopped by a signal: calls in flight were finished, nothing new was sent; the next run goes on from what was written',
    );
    // what it says it wrote is what the chatbot holds: no call was left half done
    const held = (await sync.te().listings(SN)).length;
    expect(report!.counts.created).toBe(held);
    expect(held).toBeGreaterThanOrEqual(6);
    expect(held).toBeLessThan(200);

    const rerun = await feedsync(['sync', '--config', config, '--json']);
    expect(rerun.code, rerun.stderr).toBe(0);
    expect(JSON.parse(rerun.stdout).reports[0].counts.created).toBe(200 - held);
    expect(await sync.te().listings(SN)).toHaveLength(200);
  });
});
