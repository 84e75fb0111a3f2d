// `npm run bench`: runs every test/bench/*.bench.ts in a child process of its own, one after the
// other, so each one's peak RSS is its own and one bench's heap does not skew the next.
// BENCH_MD=path: also writes the figures as docs/benchmarks.md holds them (bench-md.ts): the run's
// header (date, commit, machine, load average) and each bench's tables, between the markers of
// `path` when it has them (BENCH_MD=docs/benchmarks.md replaces the latest run there), else as a
// new file.
import { spawn } from 'node:child_process';
import { mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { loadNow, mdHeader, sampleLoad, writeMdBlock } from './bench-md.js';

// (the figures judge the Nodes feedsync supports, package.json's engines; an older one measures
// something else, and fleet-ticks needs its global WebSocket)
const major = Number(process.versions.node.split('.')[0]);
if (major < 22)
  throw new Error(
    `npm run bench needs Node 22 or 24 (package.json engines); this is ${process.version}: put one first on PATH`,
  );

const here = dirname(fileURLToPath(import.meta.url));
const only = process.argv.slice(2);
const files = readdirSync(here)
  .filter((f) => f.endsWith('.bench.ts'))
  .filter((f) => only.length === 0 || only.some((o) => f.includes(o)))
  .sort();

const md = process.env.BENCH_MD ? resolve(process.env.BENCH_MD) : undefined;
const parts = md ? mkdtempSync(join(tmpdir(), 'feedsync-bench-md-')) : undefined;
const started = new Date();
const loadStart = loadNow();
const loadRange = sampleLoad();
let failed = 0;
for (const file of files) {
  process.stdout.write(`\n=== ${file} ===\n`);
  const env = { ...process.env, ...(parts && { BENCH_MD_PART: join(parts, `${file}.md`) }) };
  // (spawned, not spawnSync: the load average is sampled while the bench runs)
  const child = spawn(process.execPath, ['--expose-gc', '--import', 'tsx', join(here, file)], {
    stdio: 'inherit',
    env,
  });
  const status = await new Promise<number | null>((done) => child.once('exit', done));
  if (status !== 0) failed++;
}
if (md && parts) {
  const header = mdHeader({
    root: resolve(here, '../..'),
    benches: files.map((f) => f.replace('.bench.ts', '')),
    started,
    ended: new Date(),
    loadStart,
    loadEnd: loadNow(),
    loadRange: loadRange(),
    failed,
  });
  const sections = files.map((f) => {
    try {
      return readFileSync(join(parts, `${f}.md`), 'utf8').trim();
    } catch {
      return `(${f} wrote no figures)`;
    }
  });
  await writeMdBlock(md, [header, ...sections].join('\n\n'));
  rmSync(parts, { recursive: true, force: true });
  process.stdout.write(`\nthe figures as markdown: ${md}\n`);
}
process.exitCode = failed ? 1 : 0;
