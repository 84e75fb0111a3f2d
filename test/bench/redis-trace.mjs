// Where a worker's wall goes between its Redis commands: every ioredis command a `feedsync worker`
// sends (its start, its answer, its name, its key), written at the worker's exit, then summed by
// phase. A CPU profile shows what the thread computes, not what it waits for; this shows the
// waits, and what a job sends before its first page and after its last (how the fleet's no-change
// tick was found held back by every lane's state reads: docs/benchmarks.md, issue 55 point 6).
//   REDIS_TRACE_DIR=/tmp/trace NODE_OPTIONS="--import ./test/bench/redis-trace.mjs" \
//     BENCH_TICKS_CHATBOTS=100 BENCH_TICKS_FEEDS=1 BENCH_TICKS_WORKERS=1 BENCH_TICKS_KILL=0 npm run bench -- fleet-ticks
//   node test/bench/redis-trace.mjs /tmp/trace/PID.json [FROM_MS TO_MS]   each phase's span and commands (ms from the worker's start)
// (ioredis is loaded from the repository's node_modules, as the worker loads it: the bundle leaves it out)
import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';

const self = fileURLToPath(import.meta.url);

if (process.argv[1] === self) summary(process.argv.slice(2));
else if (process.env.REDIS_TRACE_DIR && process.argv.includes('worker')) record(process.env.REDIS_TRACE_DIR);

function record(dir) {
  const { Redis } = createRequire(join(self, '../../../package.json'))('ioredis');
  const rows = [];
  const send = Redis.prototype.sendCommand;
  Redis.prototype.sendCommand = function (cmd, stream) {
    const at = performance.now();
    const key = String(cmd.args?.[cmd.name === 'evalsha' || cmd.name === 'eval' ? 2 : 0] ?? '').slice(0, 80);
    const done = (ok) => rows.push([at, performance.now(), ok ? cmd.name : `${cmd.name}!`, key]);
    cmd.promise?.then(
      () => done(true),
      () => done(false),
    );
    return send.call(this, cmd, stream);
  };
  process.on('exit', () => {
    mkdirSync(dir, { recursive: true });
    writeFileSync(
      join(dir, `${process.pid}.json`),
      JSON.stringify({
        origin: performance.timeOrigin,
        mono: Number(process.hrtime.bigint() / 1000n) / 1000 - performance.now(),
        rows,
      }),
    );
  });
}

/** A command's phase: the part of a job it serves, by its key. */
function phaseOf([, , name, key]) {
  if (name === 'multi' || name === 'exec') return undefined;
  if (/:budget:/.test(key)) return 'budget';
  if (/:lock:/.test(key) || name === 'zpopmin') return 'locks';
  if (/:changes:|:state:alerts/.test(key)) return 'change log, alerts';
  const state = /:state:([^:]+)/.exec(key);
  if (state) return `state ${state[1]}`;
  if (/:runs:/.test(key)) return 'run history';
  return `${name} (BullMQ, cancels)`;
}

/** Each phase's span over the window (its first command sent, its last answered) and its commands, by first command. */
function summary([file, from = '0', to = 'Infinity']) {
  const phases = new Map();
  for (const r of JSON.parse(readFileSync(file, 'utf8')).rows) {
    const phase = phaseOf(r);
    if (phase === undefined || r[0] < Number(from) || r[0] > Number(to)) continue;
    const p = phases.get(phase) ?? phases.set(phase, { from: r[0], to: r[1], n: 0 }).get(phase);
    p.from = Math.min(p.from, r[0]);
    p.to = Math.max(p.to, r[1]);
    p.n++;
  }
  for (const [phase, p] of [...phases].sort((a, b) => a[1].from - b[1].from))
    process.stdout.write(
      `${p.from.toFixed(0).padStart(8)}..${p.to.toFixed(0).padEnd(8)} ms ${String(Math.round(p.to - p.from)).padStart(6)} ms ${String(p.n).padStart(6)}× ${phase}\n`,
    );
}
