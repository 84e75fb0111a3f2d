// A reader that closes its end of the pipe early (`feedsync --help | head -3`, `feedsync sync | head`)
// wants no more output; it is not the command's failure. Node ignores SIGPIPE, so a write to the
// closed pipe is an 'error' event (EPIPE): unhandled, it ended the process with a stack trace and
// status 1, and a sync in the middle of its writes would stop there. The command finishes and ends
// with its own status, nothing said about the pipe.
import { execFileSync, spawn } from 'node:child_process';
import { cpSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, describe, expect, it } from 'vitest';

const root = fileURLToPath(new URL('../../', import.meta.url));
const BIN = join(root, 'bin/feedsync.js');
const dir = mkdtempSync(join(tmpdir(), 'feedsync-closed-stdout-'));
for (const f of ['demo.yaml', 'feeds']) cpSync(join(root, 'fixtures', f), join(dir, f), { recursive: true });
afterAll(() => rmSync(dir, { recursive: true, force: true }));
// (the demo's runs are recorded beside its state file; with REDIS_URL set, as in CI, `runs` reads Redis's instead)
const { REDIS_URL: _redis, ...rest } = process.env;
const env = { ...rest, NO_COLOR: '1' };

/** Runs `feedsync ...args` with its stdout's reader gone before it writes: its status and stderr. */
function withReaderGone(args: string[]): Promise<{ code: number | null; stderr: string }> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [BIN, ...args], { cwd: dir, env });
    let stderr = '';
    child.stderr.on('data', (d: Buffer) => (stderr += d.toString()));
    child.stdout.destroy();
    child.on('error', reject);
    child.on('close', (code) => resolve({ code, stderr }));
  });
}

describe('a closed stdout', () => {
  it('--help whose reader is gone ends with status 0 and no stack', async () => {
    const r = await withReaderGone(['--help']);
    expect(r.stderr).not.toMatch(/EPIPE|Unhandled|at /);
    expect(r.code).toBe(0);
  });

  it('a sync --json whose stdout is gone from the start runs every feed to its end: status 0, no stack', async () => {
    const r = await withReaderGone(['sync', '--config', 'demo.yaml', '--json']);
    expect(r.stderr).not.toMatch(/EPIPE|Unhandled|ERR_STREAM/);
    expect(r.code).toBe(0);
    // the change log has each of the demo's four feeds' runs, ended ok
    const runs = execFileSync(process.execPath, [BIN, 'runs', '--config', 'demo.yaml', '--json'], {
      cwd: dir,
      env,
      encoding: 'utf8',
    });
    const outcomes = (JSON.parse(runs) as { runs: Array<{ feed: string; outcome: string }> }).runs.map(
      (x) => `${x.feed} ${x.outcome}`,
    );
    expect(outcomes.sort()).toEqual(['austin-csv ok', 'listhub-xml ok', 'reso-replay ok', 'zillow-xml ok']);
  });
});
