// A child process for malloc-trim.test.ts: fragments malloc's main arena with many small Buffers
// (each calloc'd below glibc's mmap threshold), frees all but every 50th and the last (so the
// arena's top stays in use and glibc's own trimming at the top gives nothing back), then goes idle
// with the worker's idle collection: the full collection and, where there is one, malloc_trim(0).
// Prints one JSON line: the main arena's resident MB before the idle collection, after the full
// collection (before the trim) and after the trim, and the bytes the trim reported given back.
import { readFileSync } from 'node:fs';
import { fullCollection, idleCollection } from '../../src/queue/idle-collection.js';
import { loadMallocTrim } from '../../src/queue/malloc-trim.js';

/** Resident MB of the main arena ([heap] in /proc/self/smaps). */
function mainArenaMb(): number {
  let inHeap = false;
  let kb = 0;
  for (const line of readFileSync('/proc/self/smaps', 'utf8').split('\n')) {
    if (/^[0-9a-f]+-[0-9a-f]+ /.test(line)) inHeap = line.endsWith('[heap]');
    const rss = inHeap && /^Rss:\s+(\d+) kB/.exec(line);
    if (rss) kb += Number(rss[1]);
  }
  return kb / 1024;
}

const COUNT = Number(process.argv[2] ?? 60_000);
const kept: Buffer[] = [];
let all: Array<Buffer | undefined> = [];
for (let i = 0; i < COUNT; i++) all.push(Buffer.alloc(1024 + (i % 3072)));
all.forEach((b, i) => {
  if (i % 50 === 0 || i === COUNT - 1) kept.push(b!);
});
all = [];

const mallocTrim = await loadMallocTrim();
const out: Record<string, unknown> = { before: mainArenaMb(), kept: kept.length };
if ('skipped' in mallocTrim) out.skipped = mallocTrim.skipped;
const collect = fullCollection();
// (the idle collection's timer does not hold the process: this does, until it has run)
const hold = setInterval(() => {}, 1000);
await new Promise<void>((resolve) => {
  const idle = idleCollection({
    afterMs: 10,
    collect: () => {
      collect();
      out.collected = mainArenaMb();
    },
    ...('trim' in mallocTrim && { trim: mallocTrim.trim }),
    onTrimmed: ({ bytes }) => {
      out.trimmedBytes = bytes;
      out.trimmed = mainArenaMb();
      resolve();
    },
    onCollected: () => {
      if (!('trim' in mallocTrim)) resolve();
    },
  });
  idle.started();
  idle.ended();
});
clearInterval(hold);
process.stdout.write(JSON.stringify(out) + '\n');
