// The start of a cron `feedsync sync` (issue 55 point 6b; README's start figure): installations of
// the command, each a folder with bin/feedsync.js (an installed package: node_modules, bin/, dist/,
// no src/), run in turn against one emulator, each a no-change sync of a 300-record CSV feed (the
// demo's austin-csv mapping) to a chatbot of its own: 4 list calls, no writes. Each turn runs every
// installation once, in alternating order; each one's first run (Node's compile cache filled, its
// chatbot seeded) is not counted. Per installation, the medians (and ranges) of: spawn to the first
// API call (the emulator's clock), the CPU until it (first-call.mjs, preloaded), spawn to exit, and
// the process's CPU; and each one's paired median difference from the first installation's, turn
// by turn (a loaded machine moves both of a turn alike).
//
//   node --import tsx test/bench/start-turns.ts [--turns=N] DIR...   (default 10 turns; DIR's bin/feedsync.js)
//   node --import tsx test/bench/start-turns.ts --package=DEST       DEST: this repository's build as a package
//                                                                    (bin/, dist/, package.json; node_modules linked)
import { spawn } from 'node:child_process';
import { cpSync, mkdirSync, mkdtempSync, readFileSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { loadavg, tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { parse, stringify } from 'yaml';
import { generateCsv, writeFeed } from '../../fixtures/generate.js';
import { startEmulator } from '../../src/emulator/index.js';

const root = fileURLToPath(new URL('../../', import.meta.url));
const args = process.argv.slice(2);
const packageTo = args.find((a) => a.startsWith('--package='))?.slice('--package='.length);
if (packageTo) {
  const dest = resolve(packageTo);
  rmSync(dest, { recursive: true, force: true });
  mkdirSync(dest, { recursive: true });
  for (const f of ['bin', 'dist', 'package.json']) cpSync(join(root, f), join(dest, f), { recursive: true });
  symlinkSync(join(root, 'node_modules'), join(dest, 'node_modules'), 'dir');
  process.stdout.write(`${dest}: this repository's build as a package\n`);
  process.exit(0);
}
const turns = Number(args.find((a) => a.startsWith('--turns='))?.slice('--turns='.length) ?? 10);
const dirs = args.filter((a) => !a.startsWith('--')).map((d) => resolve(d));
if (dirs.length === 0) throw new Error('usage: start-turns.ts [--turns=N] DIR...');

interface Run {
  firstMs: number;
  firstCpuMs: number;
  wallMs: number;
  cpuMs: number;
}

const now = () => performance.timeOrigin + performance.now();
let firstRequest = 0;
const emulator = await startEmulator({
  port: 0,
  secretKey: 'start-secret',
  sessionKey: 'start-session',
  onRequest: () => {
    firstRequest ||= now();
  },
});
const work = mkdtempSync(join(tmpdir(), 'feedsync-start-'));
try {
  await writeFeed(join(work, 'feed.csv'), generateCsv(300, { seed: 7 }));
  const demo = parse(readFileSync(join(root, 'fixtures/demo.yaml'), 'utf8')) as {
    feeds: Array<Record<string, unknown>>;
  };
  const austin = demo.feeds.find((f) => f.name === 'austin-csv')!;
  const configs = dirs.map((_, i) => {
    const serial = `SN-START-${i}`;
    const config = join(work, `feedsync-${i}.yaml`);
    const unscheduled = Object.fromEntries(Object.entries(austin).filter(([k]) => k !== 'schedule'));
    const feed = { ...unscheduled, name: 'start', chatbot: serial, source: { kind: 'csv', path: 'feed.csv' } };
    const doc = {
      api: { baseUrl: emulator.url, secretKey: 'start-secret', sessionKey: 'start-session' },
      state: { file: join(work, `state-${i}`, 'state.lmdb') },
      chatbots: [{ serialNumber: serial }],
      feeds: [feed],
    };
    writeFileSync(config, stringify(doc));
    return config;
  });

  const once = (i: number) =>
    new Promise<Run>((done, fail) => {
      firstRequest = 0;
      const t0 = now();
      const child = spawn(
        process.execPath,
        [
          '--import',
          join(root, 'test/bench/first-call.mjs'),
          join(dirs[i]!, 'bin/feedsync.js'),
          'sync',
          '--config',
          configs[i]!,
        ],
        { stdio: ['ignore', 'ignore', 'pipe'], env: { ...process.env, LOG_LEVEL: 'warn' } },
      );
      let stderr = '';
      child.stderr.on('data', (d: Buffer) => (stderr += d.toString()));
      child.on('exit', (code) => {
        const t1 = now();
        const m = /FIRST_CALL (\S+) (\S+) EXIT (\S+) (\S+)/.exec(stderr);
        if (code !== 0 || !m) return fail(new Error(`${dirs[i]}: exit ${code}\n${stderr}`));
        done({ firstMs: firstRequest - t0, firstCpuMs: Number(m[2]), wallMs: t1 - t0, cpuMs: Number(m[4]) });
      });
    });

  for (let i = 0; i < dirs.length; i++) await once(i); // (the compile cache filled, the chatbot seeded)
  const runs: Run[][] = dirs.map(() => []);
  const load: number[] = [];
  for (let t = 0; t < turns; t++) {
    const order = dirs.map((_, i) => i);
    if (t % 2 === 1) order.reverse();
    for (const i of order) runs[i]!.push(await once(i));
    load.push(loadavg()[0]!);
  }

  const median = (xs: number[]) => {
    const s = [...xs].sort((a, b) => a - b);
    const mid = s.length >> 1;
    return s.length % 2 ? s[mid]! : (s[mid - 1]! + s[mid]!) / 2;
  };
  const ms = (x: number) => `${Math.round(x)} ms`;
  const figure = (xs: number[]) => `${ms(median(xs))} (${ms(Math.min(...xs))}–${ms(Math.max(...xs))})`;
  const keys: Array<[keyof Run, string]> = [
    ['firstMs', 'spawn to the first API call'],
    ['firstCpuMs', 'CPU until the first API call'],
    ['wallMs', 'spawn to exit'],
    ['cpuMs', 'CPU, whole process'],
  ];
  process.stdout.write(
    `${turns} turns, Node ${process.version}, 1-minute load ${Math.min(...load).toFixed(1)}–${Math.max(...load).toFixed(1)}\n`,
  );
  dirs.forEach((dir, i) => {
    process.stdout.write(`\n${dir}\n`);
    for (const [key, what] of keys) {
      const mine = runs[i]!.map((r) => r[key]);
      const paired =
        i === 0 ? '' : `   paired median difference ${ms(median(mine.map((x, t) => x - runs[0]![t]![key])))}`;
      process.stdout.write(`  ${what.padEnd(30)} ${figure(mine)}${paired}\n`);
    }
  });
} finally {
  await emulator.close();
  rmSync(work, { recursive: true, force: true });
}
