// Strings that keep no parent (src/feeds/own-string.ts): a listing key read from a record (kept by
// the run for every listing: src/mapping/compile.ts keyOf, keyOfText) and a change the change
// log's recorder buffers (src/change-log/recorder.ts) keep their own strings, equal to what they
// held, and no longer the chunks of text a reader cut them from.
import { setFlagsFromString } from 'node:v8';
import { runInNewContext } from 'node:vm';
import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { ownString, ownStrings } from '../../src/feeds/own-string.js';
import { createFileChangeLog } from '../../src/change-log/file-change-log.js';
import { createChangeRecorder } from '../../src/change-log/recorder.js';
import { silentLogger } from '../../src/log.js';
import { compileMapping, keyOfText } from '../../src/mapping/compile.js';
import { MappingConfig } from '../../src/mapping/config-schema.js';

setFlagsFromString('--expose-gc');
const gc = runInNewContext('gc') as () => void;

describe('ownString / ownStrings', () => {
  it('leaves every value equal, the keys in order and the prototype as they were', () => {
    const json = fc.jsonValue({ maxDepth: 3 });
    fc.assert(
      fc.property(fc.dictionary(fc.string(), json), fc.boolean(), (dict, bare) => {
        const data: Record<string, unknown> = bare ? Object.assign(Object.create(null) as object, dict) : { ...dict };
        const before = structuredClone(dict);
        const keys = Object.keys(data);
        const proto: unknown = Object.getPrototypeOf(data);
        ownStrings(data);
        expect(Object.keys(data)).toEqual(keys);
        expect(Object.getPrototypeOf(data)).toBe(proto);
        expect({ ...data }).toEqual(before);
      }),
    );
    fc.assert(
      fc.property(fc.string({ unit: 'binary' }), fc.string({ unit: 'binary' }), (a, b) => {
        // (a slice of 13 characters or more, as readers cut fields: a view of its parent)
        const s = (a + b + 'thirteen or more').slice(a.length);
        expect(ownString(s)).toBe(s);
      }),
    );
  });

  it('leaves what is not an object literal or an array as it is', () => {
    const when = new Date(0);
    const bytes = Buffer.from('a long enough buffer of bytes');
    const data = { when, bytes };
    ownStrings(data);
    expect(data.when).toBe(when);
    expect(data.bytes).toBe(bytes);
  });
});

/** MB of heap in use after a full collection */
function heapMb(): number {
  gc();
  gc();
  return process.memoryUsage().heapUsed / 2 ** 20;
}

/** 1 MB of text, as a reader's chunk of a file, its fields cut from it: record i's */
function chunkOf(i: number): string {
  // (the cons string the repeat made is flattened by the first slice: each record pins a flat 1 MB)
  return `${String(i).padStart(4, '0')},${'A Street Name Long Enough '.repeat(40_000)}`.slice(0, 2 ** 20);
}

describe('listing keys', () => {
  it('keep their own text, not the chunk of the feed they were read from (a URL key: 13 characters or more)', () => {
    const compiled = compileMapping(MappingConfig.parse({ fields: { MLSNumber: 'MLSNumber', Url: 'Url' } }));
    const CHUNKS = 48;
    const base = heapMb();
    const keys = new Set<string>();
    for (let i = 0; i < CHUNKS; i++) {
      const chunk = chunkOf(i);
      // (as a record's data holds its fields, and as a CSV record's key column is read from its text)
      keys.add(compiled.keyOf({ MLSNumber: chunk.slice(0, 4), Url: chunk.slice(0, 40) }, 'URL')!);
      keys.add(keyOfText(chunk.slice(0, 60))!);
    }
    const held = heapMb() - base;
    expect(keys.size).toBe(2 * CHUNKS);
    expect([...keys].slice(0, 2)).toEqual([chunkOf(0).slice(0, 40).trim(), chunkOf(0).slice(0, 60)]);
    expect(held).toBeLessThan(CHUNKS / 4);
  });
});

describe("the change log's recorder", () => {
  it('buffers changes that keep their own strings, not the chunks of the feed their values were cut from', async () => {
    const dir = await mkdtemp(join(tmpdir(), 'own-changes-'));
    try {
      const log = await createFileChangeLog(join(dir, 'changes.jsonl'));
      const rec = createChangeRecorder(
        log,
        { runId: 'r1', feed: 'f1', chatbot: 'SN-1', dryRun: false },
        { maxPerRun: 1000, logger: silentLogger },
      );
      const CHUNKS = 48;
      const base = heapMb();
      // fewer than a batch (500): every change waits in the buffer until finish
      for (let i = 0; i < CHUNKS; i++) {
        const chunk = chunkOf(i);
        rec.sink({
          op: 'update',
          key: chunk.slice(0, 4),
          reason: 'fields',
          changes: [{ field: 'Address', old: 'An old street name, long', new: chunk.slice(5, 45) }],
          headline: { MLSNumber: chunk.slice(0, 4), Address: chunk.slice(5, 45), Url: chunk.slice(50, 90) },
        });
      }
      const held = heapMb() - base;
      await rec.finish({ startedAt: 'a', finishedAt: 'b', durationMs: 1, outcome: 'ok', summary: 's', counts: {} });
      const lines = (await readFile(join(dir, 'changes.jsonl'), 'utf8')).trim().split('\n');
      expect(lines.filter((l) => l.includes('"op":"update"'))).toHaveLength(CHUNKS);
      expect(lines[0]).toContain('"new":"A Street Name Long Enough A Street Name "');
      expect(held).toBeLessThan(CHUNKS / 4);
      await log.close();
    } finally {
      await rm(dir, { recursive: true, force: true });
    }
  });
});
