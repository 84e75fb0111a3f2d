// Issue 23: a command that used the page pool exits when its work is done, whatever the pool's idle
// timeout (10 minutes here): its loaded, idle workers do not keep the process alive.
import { execFile } from 'node:child_process';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';

describe('an idle page pool does not keep the process alive', () => {
  it('the child exits by itself with its pool loaded and never closed', async () => {
    const out = await new Promise<{ code: number | null; stdout: string; stderr: string }>((resolve) => {
      const child = execFile(
        process.execPath,
        ['--import', 'tsx', join(import.meta.dirname, 'pool-exit.child.ts')],
        { timeout: 60_000, killSignal: 'SIGKILL' },
        (_err, stdout, stderr) => resolve({ code: child.exitCode, stdout, stderr }),
      );
    });
    // killed at the 60 s timeout (well past a normal exit), the code would be null
    expect(out.code, out.stderr).toBe(0);
    expect(out.stdout).toMatch(/^ready [12]\n$/);
  });
});
