// Peak RSS of `feedsync sync` over a CSV feed of N records (default 1,000,000), all rejected by
// validation (Bedrooms: "lots") or all valid, into an emulator in this process (so the child's peak
// is feedsync's own): `node --import tsx test/bench/rejected-rss.ts [rejected|valid] [N] [bin]`.
// `bin`: the feedsync to run (default this checkout's bin/feedsync.js), to compare two checkouts.
import { execFile } from 'node:child_process';
import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { startTestEmulator, TEST_SECRET_KEY, TEST_SESSION_KEY } from '../helpers/emulator.js';
import { COLUMNS, csv, row } from '../sync/helpers/feed.js';

const [kind = 'rejected', n = '1000000', bin = join(import.meta.dirname, '../../bin/feedsync.js')] =
  process.argv.slice(2);
const count = Number(n);
const dir = await mkdtemp(join(tmpdir(), 'feedsync-rejected-rss-'));
const te = await startTestEmulator();
try {
  const lines: string[] = [];
  for (let at = 0; at < count; at += 50_000) {
    const part = Array.from({ length: Math.min(50_000, count - at) }, (_, i) =>
      row(at + i + 1, kind === 'rejected' ? { Bedrooms: 'lots' } : {}),
    );
    lines.push(
      csv(part)
        .split('\n')
        .slice(at === 0 ? 0 : 1)
        .join('\n')
        .replace(/\n$/, ''),
    );
  }
  await writeFile(join(dir, 'homes.csv'), lines.join('\n') + '\n');
  const config = join(dir, 'feedsync.yaml');
  await writeFile(
    config,
    [
      `api: { baseUrl: "${te.url}", secretKey: ${TEST_SECRET_KEY}, sessionKey: ${TEST_SESSION_KEY}, concurrency: 8, ratePerSecond: 10000 }`,
      'feeds:',
      '  - name: homes',
      '    chatbot: SN-RSS',
      '    source: { kind: csv, path: homes.csv }',
      `    mapping: { fields: { ${COLUMNS.map((c) => `${c}: ${c}`).join(', ')} } }`,
    ].join('\n'),
  );
  const peakFile = join(dir, 'peak');
  const started = Date.now();
  const out = await new Promise<string>((resolve, reject) =>
    execFile(
      process.execPath,
      ['--import', join(import.meta.dirname, 'peak-rss.mjs'), bin, 'sync', '--config', config, '--json'],
      { env: { ...process.env, BENCH_PEAK_RSS_FILE: peakFile, LOG_LEVEL: 'warn' }, maxBuffer: 64 * 1024 ** 2 },
      (err, stdout, stderr) =>
        stdout.trim().startsWith('{')
          ? resolve(stdout)
          : reject(new Error(`${err?.message}\n${stderr.slice(0, 2000)}`)),
    ),
  );
  const counts = JSON.parse(out).reports[0].counts;
  const peakMb = Number(await readFile(peakFile, 'utf8')) / 1024;
  console.log(
    `${count} ${kind} records: peak RSS ${peakMb.toFixed(0)} MB, ${((Date.now() - started) / 1000).toFixed(1)} s, counts ${JSON.stringify({ valid: counts.valid, rejected: counts.rejected, created: counts.created })}`,
  );
} finally {
  await te.close();
  await rm(dir, { recursive: true, force: true });
}
