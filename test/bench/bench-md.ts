// The benches' figures as the markdown docs/benchmarks.md holds (`BENCH_MD=path npm run bench`):
// each bench writes its section (its tables, each figure beside its reference) into the file
// BENCH_MD_PART names (index.ts sets it per bench), and index.ts puts the run's header (date,
// commit, machine, load average) and the sections between the markers below, in the file BENCH_MD
// names: replacing what stands between them when the file has them (docs/benchmarks.md does),
// else as a new file of that block alone.
import { execFileSync } from 'node:child_process';
import { appendFileSync } from 'node:fs';
import { readFile, writeFile } from 'node:fs/promises';
import { availableParallelism, cpus, loadavg, totalmem } from 'node:os';

export const MD_BEGIN =
  '<!-- bench:begin: written by `BENCH_MD=docs/benchmarks.md npm run bench`; everything up to bench:end is replaced -->';
export const MD_END = '<!-- bench:end -->';

/** A markdown table; `right`: the columns aligned right (numbers). */
export function mdTable(
  head: readonly string[],
  rows: readonly (readonly string[])[],
  right: ReadonlySet<number> = new Set(),
): string {
  const cell = (c: string) => c.replaceAll('|', '\\|');
  const line = (cells: readonly string[]) => `| ${cells.map(cell).join(' | ')} |`;
  return [line(head), line(head.map((_, i) => (right.has(i) ? '---:' : '---'))), ...rows.map(line)].join('\n');
}

/** Appends a bench's markdown to its part (BENCH_MD_PART), when the run writes markdown. */
export function writeMdPart(markdown: string): void {
  const part = process.env.BENCH_MD_PART;
  if (part) appendFileSync(part, markdown.trimEnd() + '\n\n');
}

/** seconds from ms, as the tables give them: 0.13 s, 4.7 s, 153.3 s, 1,023.5 s */
export function sec(ms: number): string {
  const s = ms / 1000;
  if (ms === 0) return '0 s';
  if (s < 1) return `${s.toFixed(2)} s`;
  return `${s.toLocaleString('en-US', { minimumFractionDigits: 1, maximumFractionDigits: 1 })} s`;
}

export const num = (n: number): string => Math.round(n).toLocaleString('en-US');

/** the load average now, as the header states it: 1, 5 and 15 minutes */
export function loadNow(): string {
  return loadavg()
    .map((l) => l.toFixed(2))
    .join(', ');
}

/** Samples the 1-minute load average every `everyMs` while the run goes; the returned function says its range. */
export function sampleLoad(everyMs = 30_000): () => string {
  const seen: number[] = [loadavg()[0]!];
  const timer = setInterval(() => seen.push(loadavg()[0]!), everyMs);
  timer.unref();
  return () => {
    clearInterval(timer);
    seen.push(loadavg()[0]!);
    const mean = seen.reduce((a, b) => a + b, 0) / seen.length;
    return `1-minute load average ${Math.min(...seen).toFixed(1)}–${Math.max(...seen).toFixed(1)} (mean ${mean.toFixed(1)}, ${seen.length} samples)`;
  };
}

/** The run's header: what ran, when, at which commit, on what machine, under which load. */
export function mdHeader(o: {
  root: string;
  benches: readonly string[];
  started: Date;
  ended: Date;
  loadStart: string;
  loadEnd: string;
  loadRange: string;
  failed: number;
}): string {
  const git = (...args: string[]) => {
    try {
      return execFileSync('git', ['-C', o.root, ...args], { encoding: 'utf8' }).trim();
    } catch {
      return '?';
    }
  };
  const dirty = git('status', '--porcelain', '--untracked-files=no') !== '' ? ' (with uncommitted changes)' : '';
  const knobs = Object.entries(process.env)
    .filter(([k]) => k.startsWith('BENCH_') && k !== 'BENCH_MD' && k !== 'BENCH_MD_PART')
    .map(([k, v]) => `\`${k}=${v}\``);
  const utc = (d: Date) => d.toISOString().slice(11, 16);
  const cpu = cpus()[0]?.model.trim() ?? 'unknown CPU';
  return [
    `### The run`,
    '',
    `\`npm run bench\` (${o.benches.join(', ')}) at ${git('rev-parse', '--short', 'HEAD')}${dirty} ("${git('log', '-1', '--format=%s').slice(0, 90)}"), ` +
      `${o.started.toISOString().slice(0, 10)}, ${utc(o.started)}–${utc(o.ended)} UTC (${Math.round((o.ended.getTime() - o.started.getTime()) / 60_000)} min), ` +
      `node ${process.version}, ${availableParallelism()} cores (${cpu}), ${Math.round(totalmem() / 2 ** 30)} GB. ` +
      `Knobs: ${knobs.length ? knobs.join(', ') : 'none (the defaults)'}.${o.failed ? ` **${o.failed} bench(es) failed** (see their output).` : ''}`,
    '',
    `**Load**: load average (1, 5, 15 min) ${o.loadStart} at the start, ${o.loadEnd} at the end; ${o.loadRange} during the run. ` +
      `Wall-clock figures are loose when the load nears or passes the ${availableParallelism()} cores; calls, CPU and peak RSS are steadier, and every ratio is within the run.`,
  ].join('\n');
}

/** Writes the block (header and parts) into `path`: between the markers when the file has them, else as the whole file. */
export async function writeMdBlock(path: string, block: string): Promise<void> {
  const whole = `${MD_BEGIN}\n\n${block.trimEnd()}\n\n${MD_END}`;
  const old = await readFile(path, 'utf8').catch(() => undefined);
  // (found by its start: the marker's wording may change)
  const from = old?.indexOf('<!-- bench:begin') ?? -1;
  const to = old?.indexOf(MD_END, Math.max(from, 0)) ?? -1;
  if (old === undefined || from < 0 || to < from) {
    await writeFile(path, whole + '\n');
    return;
  }
  await writeFile(path, old.slice(0, from) + whole + old.slice(to + MD_END.length));
}
