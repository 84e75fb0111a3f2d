// Loaded with --import into a process the bench runs as a user would (`feedsync sync`, the command):
// at its exit, its CPU (every thread's, since its start) and peak RSS, written to the file named by
// BENCH_USAGE_FILE, which the bench reads (a parent has no other portable way to a child's usage).
import { writeFileSync } from 'node:fs';

const file = process.env.BENCH_USAGE_FILE;
if (file)
  process.on('exit', () => {
    const cpu = process.cpuUsage();
    const usage = {
      cpuMs: Math.round((cpu.user + cpu.system) / 1000),
      rssMb: Math.round(process.resourceUsage().maxRSS / 1024),
    };
    writeFileSync(file, JSON.stringify(usage) + '\n');
  });
