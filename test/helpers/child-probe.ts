// Runs rss-probe.ts in a child process and returns what it printed.
import { execFile } from 'node:child_process';
import { fileURLToPath } from 'node:url';

const PROBE = fileURLToPath(new URL('./rss-probe.ts', import.meta.url));

export interface ProbeResult {
  value?: unknown;
  error?: { name: string; message: string };
  peakRssMb: number;
}

/** `nodeArgs`: e.g. a heap cap (--max-old-space-size=64): off-heap buffering shows in the RSS all the same */
export function runProbe(probe: unknown, timeoutMs = 120_000, nodeArgs: string[] = []): Promise<ProbeResult> {
  return new Promise((resolve, reject) => {
    execFile(
      process.execPath,
      [...nodeArgs, '--import', 'tsx', PROBE, JSON.stringify(probe)],
      { timeout: timeoutMs, maxBuffer: 1 << 20 },
      (err, stdout, stderr) => {
        const line = stdout.trim().split('\n').pop() ?? '';
        try {
          resolve(JSON.parse(line) as ProbeResult);
        } catch {
          reject(new Error(`probe failed: ${err?.message ?? ''}\n${stderr}`));
        }
      },
    );
  });
}
