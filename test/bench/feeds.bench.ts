// Feed benchmark: records/s and peak RSS of read + map + validate for CSV and XML on a generated
// 200k-listing feed, beside the bare parser on the same file in the same run (bare csv-parse, bare
// saxes streaming), each case the median of BENCH_REPEAT runs (default 3).
//   targets: CSV pipeline >= 50% of bare csv-parse; XML pipeline >= 50% of bare saxes;
//            XML peak RSS < 300 MB on a 1 GB feed
// MITS: records/s of the MITS reader (a record per ILS_Unit, joined to its property and floorplan)
// and of read + map + validate with the mits preset, beside bare saxes on the same generated
// 100k-unit file (fixtures/generate-mits.ts; BENCH_MITS_UNITS=N changes 100k).
//   BENCH_XML_1GB=1 also runs the 1 GB XML feed (generation takes a while); BENCH_FEED_N=N changes 200k.
//   BENCH_FEED_CASES=csv,xml,mits runs only those (default: all).
import { parse } from 'csv-parse';
import { SaxesParser } from 'saxes';
import { createReadStream } from 'node:fs';
import { mkdtemp, rm, stat } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { generateCsv, generateXml, writeFeed } from '../../fixtures/generate.js';
import { mitsModel, renderMits } from '../../fixtures/generate-mits.js';
import { readMits } from '../../src/feeds/mits/mits-reader.js';
import { MappingConfig } from '../../src/mapping/config-schema.js';
import { loadConfig } from '../../src/config/load.js';
import { openFeed } from '../../src/feeds/index.js';
import { readXml } from '../../src/feeds/xml/xml-reader.js';
import { silentLogger } from '../../src/log.js';
import { compileMapping, mapFeed } from '../../src/mapping/index.js';
import { mdTable, num, writeMdPart } from './bench-md.js';

const N = Number(process.env.BENCH_FEED_N ?? 200_000);
const MITS_UNITS = Number(process.env.BENCH_MITS_UNITS ?? 100_000);
const CASES = new Set((process.env.BENCH_FEED_CASES ?? 'csv,xml,mits').split(','));
const REPEAT = Math.max(1, Number(process.env.BENCH_REPEAT ?? 3));
const demo = fileURLToPath(new URL('../../fixtures/demo.yaml', import.meta.url));

interface Row {
  case: string;
  records: number;
  seconds: number;
  perSecond: number;
  /** CPU time of the process (user + system): steadier than wall time on a shared machine */
  cpuSeconds: number;
  perCpuSecond: number;
  peakRssMb: number;
  note?: string;
}

/** Median of REPEAT runs of `fn`; peak RSS while they run, sampled every 20 ms. */
async function measure(name: string, fn: () => Promise<number>, note?: string): Promise<Row> {
  const runs: { records: number; seconds: number; cpuSeconds: number }[] = [];
  let peak = 0;
  for (let k = 0; k < REPEAT; k++) {
    (globalThis as { gc?: () => void }).gc?.();
    peak = Math.max(peak, process.memoryUsage().rss);
    const timer = setInterval(() => (peak = Math.max(peak, process.memoryUsage().rss)), 20);
    const t0 = process.hrtime.bigint();
    const c0 = process.cpuUsage();
    const records = await fn();
    const cpu = process.cpuUsage(c0);
    runs.push({
      records,
      seconds: Number(process.hrtime.bigint() - t0) / 1e9,
      cpuSeconds: (cpu.user + cpu.system) / 1e6,
    });
    clearInterval(timer);
    peak = Math.max(peak, process.memoryUsage().rss);
  }
  const median = (key: 'seconds' | 'cpuSeconds') =>
    runs.map((r) => r[key]).sort((a, b) => a - b)[Math.floor(runs.length / 2)]!;
  const records = runs[0]!.records;
  const seconds = median('seconds');
  const cpuSeconds = median('cpuSeconds');
  const row = {
    case: name,
    records,
    seconds,
    perSecond: records / seconds,
    cpuSeconds,
    perCpuSecond: records / cpuSeconds,
    peakRssMb: peak / 1024 / 1024,
    note,
  };
  process.stdout.write(
    `  ${name}: ${records} records in ${seconds.toFixed(2)} s, ${cpuSeconds.toFixed(2)} CPU-s (medians of ${runs.length})\n`,
  );
  return row;
}

/** one case against its reference: by CPU time (wall time on a shared machine measures the neighbours too) */
function ratio(r: Row, ref: Row): string {
  return `${((r.perCpuSecond / ref.perCpuSecond) * 100).toFixed(0)}% (wall ${((r.perSecond / ref.perSecond) * 100).toFixed(0)}%)`;
}

/** ratio() of the reference named `of`, against a target share of its CPU rate, judged */
function judged(r: Row, ref: Row, of: string, target: number): string {
  const share = r.perCpuSecond / ref.perCpuSecond;
  return `${ratio(r, ref)} of ${of} (target >= ${target * 100}%) ${share >= target ? '✓' : '✗'}`;
}

async function bareCsv(file: string): Promise<number> {
  let n = 0;
  for await (const _ of createReadStream(file, { highWaterMark: 256 * 1024 }).pipe(parse({ columns: true, bom: true })))
    n++;
  return n;
}

/** saxes over the same file: every event handled (as a record builder would need), records counted. */
async function bareSaxes(file: string): Promise<number> {
  const parser = new SaxesParser({ xmlns: false, position: true });
  let n = 0;
  let depth = 0;
  parser.on('opentag', () => void depth++);
  parser.on('closetag', () => void (--depth === 1 && n++));
  parser.on('text', () => {});
  parser.on('cdata', () => {});
  for await (const chunk of createReadStream(file, { encoding: 'utf8', highWaterMark: 256 * 1024 }))
    parser.write(chunk as string);
  parser.close();
  return n;
}

/** Our XML reader alone: records built, not mapped. */
async function ourXmlReader(file: string, recordPath = 'Listings.Listing'): Promise<number> {
  let n = 0;
  for await (const item of readXml(createReadStream(file, { highWaterMark: 256 * 1024 }), {
    label: file,
    recordPath,
  })) {
    if (item.kind === 'record') n++;
  }
  return n;
}

async function pipeline(feedName: string, path: string, dir: string): Promise<number> {
  const { config } = await loadConfig(demo);
  const feed = config.feeds.find((f) => f.name === feedName)!;
  const opened = openFeed(feed.name, { ...feed.source, path } as typeof feed.source, {
    baseDir: dir,
    logger: silentLogger,
  });
  const mapping = compileMapping(feed.mapping);
  let n = 0;
  let valid = 0;
  for await (const item of mapFeed(opened.items, mapping, { serialNumber: feed.chatbot!, keyBy: feed.keyBy })) {
    n++;
    if (item.kind === 'listing') valid++;
  }
  if (valid !== n) throw new Error(`${feedName}: only ${valid} of ${n} generated records mapped to valid listings`);
  return n;
}

/** The MITS reader alone: unit records built and joined, not mapped. */
async function ourMitsReader(file: string): Promise<number> {
  let n = 0;
  for await (const item of readMits(createReadStream(file, { highWaterMark: 256 * 1024 }), {
    label: file,
    recordPer: 'unit',
  })) {
    if (item.kind === 'record') n++;
  }
  return n;
}

/** Read + map + validate with the mits preset: every unit record mapped (available ones listed, the others skipped). */
async function mitsPipeline(file: string): Promise<number> {
  const mapping = compileMapping(MappingConfig.parse({ preset: 'mits' }));
  let n = 0;
  let bad = 0;
  for await (const item of mapFeed(
    readMits(createReadStream(file, { highWaterMark: 256 * 1024 }), { label: file, recordPer: 'unit' }),
    mapping,
    {
      serialNumber: 'SN-BENCH',
      keyBy: 'MLSNumber',
    },
  )) {
    n++;
    if (item.kind !== 'listing' && item.kind !== 'skipped') bad++;
  }
  if (bad) throw new Error(`mits: ${bad} of ${n} generated unit records were neither listed nor skipped`);
  return n;
}

async function mitsCases(dir: string): Promise<Row[]> {
  const file = join(dir, 'mits.xml');
  const perProperty = 200;
  const properties = Math.ceil(MITS_UNITS / perProperty);
  // the model is dropped before measuring: peak RSS is the reader's, not the generator's
  const bytes = await writeFeed(file, renderMits(mitsModel({ seed: 7, properties, unitsPerProperty: perProperty }), 5));
  const units = properties * perProperty;
  process.stdout.write(`  mits ${(bytes / 1e6).toFixed(0)} MB: ${properties} properties, ${units} units\n`);
  // saxes counts the root's children (properties): its rate is stated per unit of the same file
  const bare = await measure('mits: bare saxes streaming', () => bareSaxes(file));
  Object.assign(bare, {
    records: units,
    perSecond: units / bare.seconds,
    perCpuSecond: units / bare.cpuSeconds,
    note: 'the same file, its units over saxes time',
  });
  const xmlReader = await measure('mits: our XML reader alone (properties built, not joined)', () =>
    ourXmlReader(file, 'PhysicalProperty.Property'),
  );
  Object.assign(xmlReader, {
    records: units,
    perSecond: units / xmlReader.seconds,
    perCpuSecond: units / xmlReader.cpuSeconds,
  });
  xmlReader.note = `${ratio(xmlReader, bare)} of bare saxes; its units over its time`;
  const reader = await measure('mits: our reader (unit records joined)', () => ourMitsReader(file));
  reader.note = `${ratio(reader, bare)} of bare saxes`;
  const pipe = await measure('mits: read + map + validate (preset mits)', () => mitsPipeline(file));
  pipe.note = `${ratio(pipe, bare)} of bare saxes`;
  reader.note += `; ${ratio(reader, xmlReader)} of our XML reader`;
  return [bare, xmlReader, reader, pipe];
}

async function main() {
  const dir = await mkdtemp(join(tmpdir(), 'feedsync-bench-'));
  const rows: Row[] = [];
  const sizes: string[] = [];
  try {
    if (CASES.has('csv')) {
      const csv = join(dir, 'listings.csv');
      process.stdout.write(`generating ${N} listings as CSV in ${dir}\n`);
      const csvBytes = await writeFeed(csv, generateCsv(N, { seed: 7 }));
      process.stdout.write(`  csv ${(csvBytes / 1e6).toFixed(0)} MB\n`);
      sizes.push(`CSV ${(csvBytes / 1e6).toFixed(0)} MB`);
      const bare = await measure('csv: bare csv-parse (columns: true)', () => bareCsv(csv));
      const pipe = await measure('csv: read + map + validate', () => pipeline('austin-csv', csv, dir));
      pipe.note = judged(pipe, bare, 'bare csv-parse', 0.5);
      rows.push(bare, pipe);
    }

    if (CASES.has('xml')) {
      const xml = join(dir, 'zillow.xml');
      process.stdout.write(`generating ${N} listings as Zillow XML in ${dir}\n`);
      const xmlBytes = await writeFeed(xml, generateXml(N, { format: 'zillow', seed: 7 }));
      process.stdout.write(`  xml ${(xmlBytes / 1e6).toFixed(0)} MB\n`);
      sizes.push(`Zillow-style XML ${(xmlBytes / 1e6).toFixed(0)} MB`);
      const bareX = await measure('xml: bare saxes streaming', () => bareSaxes(xml));
      const readerX = await measure('xml: our reader alone (records built)', () => ourXmlReader(xml));
      readerX.note = `${ratio(readerX, bareX)} of bare saxes`;
      const pipeX = await measure('xml: read + map + validate', () => pipeline('zillow-xml', xml, dir));
      pipeX.note = judged(pipeX, bareX, 'bare saxes', 0.5);
      rows.push(bareX, readerX, pipeX);
    }

    if (CASES.has('mits')) {
      process.stdout.write(`generating a MITS feed of ${MITS_UNITS} units in ${dir}\n`);
      rows.push(...(await mitsCases(dir)));
    }

    if (process.env.BENCH_XML_1GB === '1') {
      const big = join(dir, 'zillow-1gb.xml');
      const n = 760_000;
      process.stdout.write(`generating ~1 GB XML (${n} listings)\n`);
      await writeFeed(big, generateXml(n, { format: 'zillow', seed: 9, batch: 2000 }));
      const size = (await stat(big)).size;
      const r = await measure(`xml ${(size / 1e9).toFixed(2)} GB: read + map + validate`, () =>
        pipeline('zillow-xml', big, dir),
      );
      r.note = `peak RSS ${r.peakRssMb < 300 ? '<' : '>='} 300 MB target`;
      rows.push(r);
      await rm(big, { force: true });
    } else {
      process.stdout.write('  (set BENCH_XML_1GB=1 to run the 1 GB XML case)\n');
    }
  } finally {
    await rm(dir, { recursive: true, force: true });
  }

  process.stdout.write('\n');
  const head = ['case', 'records', 'seconds', 'records/s', 'CPU-s', 'records/CPU-s', 'peak RSS MB', 'note'];
  const num = (n: number) => Math.round(n).toLocaleString('en-US');
  const table = rows.map((r) => [
    r.case,
    String(r.records),
    r.seconds.toFixed(2),
    num(r.perSecond),
    r.cpuSeconds.toFixed(2),
    num(r.perCpuSecond),
    r.peakRssMb.toFixed(0),
    r.note ?? '',
  ]);
  const widths = head.map((h, i) => Math.max(h.length, ...table.map((t) => t[i]!.length)));
  const line = (cols: string[]) =>
    cols.map((c, i) => (i === 0 || i === head.length - 1 ? c.padEnd(widths[i]!) : c.padStart(widths[i]!))).join('  ');
  process.stdout.write(
    `${line(head)}\n${widths.map((w) => '-'.repeat(w)).join('  ')}\n${table.map(line).join('\n')}\n`,
  );
  writeMdPart(feedsMarkdown(rows, sizes));
}

/** The feeds' section of docs/benchmarks.md: each case beside its reference (the bare parser on the same file). */
function feedsMarkdown(rows: readonly Row[], sizes: readonly string[]): string {
  const table = (of: readonly Row[]) =>
    mdTable(
      ['case', 'records/s (wall)', 'records/CPU-s', 'peak RSS', 'vs reference'],
      of.map((r) => [
        r.case,
        num(r.perSecond),
        num(r.perCpuSecond),
        `${Math.round(r.peakRssMb)} MB`,
        r.note ?? 'reference',
      ]),
      new Set([1, 2, 3]),
    );
  const mits = rows.filter((r) => r.case.startsWith('mits'));
  const rest = rows.filter((r) => !r.case.startsWith('mits'));
  return [
    '### Feeds',
    '',
    `\`test/bench/feeds.bench.ts\`: a generated ${num(N)}-listing feed (${sizes.join(', ') || 'no CSV or XML case run'}), medians of ${REPEAT}; read + map + validate against the bare parser on the same file, by CPU time (wall in brackets). Target: at least 50% of the bare parser's speed.`,
    '',
    rest.length ? table(rest) : '(no CSV or XML case run)',
    ...(mits.length
      ? [
          '',
          `MITS (rentals): a generated MITS feed of ${num(MITS_UNITS)} units (200 units a property, 4 floorplans each), medians of ${REPEAT}. The bare parser and our XML reader count the file's properties; their rows state the same units over their time, so every row compares per unit.`,
          '',
          table(mits),
        ]
      : []),
  ].join('\n');
}

await main();
