// `npm run bench`: runs every test/bench/*.bench.ts in a child process of its own, one after the
// other, so each one's peak RSS is its own and one bench's heap does not skew the next.
import { spawnSync } from 'node:child_process';
import { readdirSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

const here = dirname(fileURLToPath(import.meta.url));
const only = process.argv.slice(2);
const files = readdirSync(here)
  .filter((f) => f.endsWith('.bench.ts'))
  .filter((f) => only.length === 0 || only.some((o) => f.includes(o)))
  .sort();

let failed = 0;
for (const file of files) {
  process.stdout.write(`\n=== ${file} ===\n`);
  const r = spawnSync(process.execPath, ['--expose-gc', '--import', 'tsx', join(here, file)], { stdio: 'inherit' });
  if (r.status !== 0) failed++;
}
process.exitCode = failed ? 1 : 0;
