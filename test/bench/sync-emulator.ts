// The emulator for the sync benchmark, in a process of its own so its 100k stored listings do not
// count in the sync's RSS. Sends its URL to the parent over IPC; exits when the parent goes.
import { startEmulator } from '../../src/emulator/index.js';

const emulator = await startEmulator({
  port: 0,
  latencyMs: Number(process.argv[2] ?? 20),
  secretKey: 'bench-secret',
  sessionKey: 'bench-session',
});
process.send?.({ url: emulator.url });
// the parent sets the latency of each scenario (a large first sync seeds at a lower one)
// and asks its CPU time around each run (the emulator shares the machine's cores with the sync)
process.on('message', (m: { latencyMs?: number; cpu?: boolean }) => {
  if (typeof m.latencyMs === 'number') emulator.configure({ latencyMs: m.latencyMs });
  if (m.cpu) {
    const { user, system } = process.cpuUsage();
    process.send?.({ cpuMs: Math.round((user + system) / 1000) });
  }
});
process.on('disconnect', () => void emulator.close().then(() => process.exit(0)));
