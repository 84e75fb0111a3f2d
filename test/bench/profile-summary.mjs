// Where a CPU profile's time went (BENCH_PROF=dir writes one per feedsync run of the sync bench):
// the sampled time summed by function and by file (self time: the function itself, not what it
// called), and with --callers=REGEX the stacks that lead to the functions whose name or file
// matches. The profiler samples the main thread by the clock, so on a loaded machine a blocking
// call (a write, a syscall) counts the time the thread waited too: compare shares within a profile.
// A function of a bundle's chunk (scripts/bundle.js: what the CLI and the sync bench run) is named
// by its compiled module and line, through the chunk's source map beside it (the sync bench keeps
// its build in BENCH_PROF's folder for this).
//
//   node test/bench/profile-summary.mjs FILE.cpuprofile [TOP]              self time by function and file
//   node test/bench/profile-summary.mjs FILE.cpuprofile --callers=writeSync  the stacks to writeSync
//   node test/bench/profile-summary.mjs FILE.cpuprofile --last=5             only the profile's last 5 s (a worker's
//                                                                             last ticks, its profile written at its exit)
//   node test/bench/profile-summary.mjs FILE.cpuprofile --from=1.2 --to=2    only from 1.2 s to 2 s after the profile's start
//                                                                             (a run's stretch after its last page: its report's remoteMs)
//   node test/bench/profile-summary.mjs FILE.cpuprofile --inclusive          the time under each function (itself and what it
//                                                                             called, once a stack), not its self time
import { existsSync, readFileSync } from 'node:fs';
import { SourceMap } from 'node:module';
import { fileURLToPath } from 'node:url';

const [file, ...args] = process.argv.slice(2);
if (!file) {
  process.stderr.write('usage: node test/bench/profile-summary.mjs FILE.cpuprofile [TOP] [--callers=REGEX]\n');
  process.exit(2);
}
const callers = args.find((a) => a.startsWith('--callers='))?.slice('--callers='.length);
const top = Number(args.find((a) => /^\d+$/.test(a)) ?? 40);
const last = Number(args.find((a) => a.startsWith('--last='))?.slice('--last='.length) ?? Infinity);
/** seconds from the profile's start: the samples between them only */
const from = Number(args.find((a) => a.startsWith('--from='))?.slice('--from='.length) ?? 0);
const to = Number(args.find((a) => a.startsWith('--to='))?.slice('--to='.length) ?? Infinity);
const inclusive = args.includes('--inclusive');
const profile = JSON.parse(readFileSync(file, 'utf8'));
const maps = new Map();
/** The source map beside a script (a bundle's chunk.js.map), or undefined. */
function mapOf(url) {
  if (!maps.has(url)) {
    const file = url.startsWith('file:') ? fileURLToPath(url) + '.map' : undefined;
    maps.set(url, file && existsSync(file) ? new SourceMap(JSON.parse(readFileSync(file, 'utf8'))) : undefined);
  }
  return maps.get(url);
}
for (const { callFrame: cf } of profile.nodes) {
  const at = mapOf(cf.url)?.findEntry(cf.lineNumber, cf.columnNumber);
  if (!at?.originalSource) continue;
  cf.url = new URL(at.originalSource, cf.url).href;
  cf.lineNumber = at.originalLine;
  cf.columnNumber = at.originalColumn;
}
const byId = new Map(profile.nodes.map((n) => [n.id, n]));
const parent = new Map();
for (const n of profile.nodes) for (const c of n.children ?? []) parent.set(c, n.id);

/** sampled µs per node (self), and the total */
const self = new Map();
let total = 0;
let at = profile.startTime;
profile.samples.forEach((id, i) => {
  const dt = profile.timeDeltas[i] ?? 0;
  at += dt;
  if (at < profile.endTime - last * 1e6 || at < profile.startTime + from * 1e6 || at > profile.startTime + to * 1e6)
    return;
  self.set(id, (self.get(id) ?? 0) + dt);
  total += dt;
});

/** a file as the tables name it: from src/ or node_modules/ on, else node's own name */
const fileOf = (cf) => cf.url.replace(/^.*?\/(src|node_modules|test)\//, '$1/') || `(${cf.functionName})`;
const nameOf = (cf) => `${cf.functionName || '(anonymous)'} ${fileOf(cf)}:${cf.lineNumber + 1}`;
const ms = (us) => `${(us / 1000).toFixed(0).padStart(7)} ms ${((100 * us) / total).toFixed(1).padStart(5)}%`;

function show(title, sums, n) {
  process.stdout.write(`\n== ${title} (of ${(total / 1e6).toFixed(2)} s sampled)\n`);
  for (const [k, us] of [...sums].sort((a, b) => b[1] - a[1]).slice(0, n)) process.stdout.write(`${ms(us)}  ${k}\n`);
}

if (callers) {
  const re = new RegExp(callers);
  const stacks = new Map();
  for (const [id, us] of self) {
    let x = id;
    while (x !== undefined && !re.test(nameOf(byId.get(x).callFrame))) x = parent.get(x);
    if (x === undefined) continue;
    const chain = [];
    for (let y = x; y !== undefined && chain.length < 8; y = parent.get(y)) chain.push(nameOf(byId.get(y).callFrame));
    const key = chain.join(' < ');
    stacks.set(key, (stacks.get(key) ?? 0) + us);
  }
  show(`stacks to ${callers} (the time under them)`, stacks, top);
} else {
  const fns = new Map();
  const files = new Map();
  for (const [id, us] of self) {
    const cf = byId.get(id).callFrame;
    files.set(fileOf(cf), (files.get(fileOf(cf)) ?? 0) + us);
    // (inclusive: the sample counts for every function on its stack, a recursive one once)
    const names = new Set([nameOf(cf)]);
    for (let x = parent.get(id); inclusive && x !== undefined; x = parent.get(x))
      names.add(nameOf(byId.get(x).callFrame));
    for (const name of names) fns.set(name, (fns.get(name) ?? 0) + us);
  }
  show(inclusive ? 'time under each function' : 'self time by function', fns, top);
  show('self time by file', files, Math.min(top, 30));
}
