// A worker process's memory, read the same way at every tick's end (fleet-ticks.bench.ts, issue 55
// point 5): through the worker's inspector (the worker started with --inspect=0, its address read
// from its log), a full collection first (HeapProfiler.collectGarbage, as `global.gc()` does), then
// its V8 heap and Node's own figures (process.memoryUsage) and its resident memory from
// /proc/<pid>/smaps split by what holds it: V8's heap and malloc's arenas are anonymous memory, the
// main thread's malloc arena is `[heap]`, an LMDB state file's map is that file's, the rest is
// the binary's and libraries' code and data. Linux only (/proc); Node ≥ 22 (the global WebSocket).
import { readFileSync } from 'node:fs';
import { writeFile } from 'node:fs/promises';

/** A worker's memory after a full collection, MB. */
export interface WorkerMemory {
  rss: number;
  /** V8: heap in use, heap committed, memory outside the heap (Buffers, ArrayBuffers) */
  heapUsed: number;
  heapTotal: number;
  external: number;
  arrayBuffers: number;
  /** resident anonymous memory (V8's heap pages, thread arenas of malloc, thread stacks) */
  anon: number;
  /** resident `[heap]` (the main thread's malloc arena, grown by brk) */
  brk: number;
  /** resident pages of mapped files other than code: LMDB maps */
  files: number;
  /** resident code and data of the node binary and shared libraries */
  code: number;
}

/** The inspector's WebSocket address a process printed when it started with --inspect. */
export function inspectorUrl(logs: string): string | undefined {
  return /Debugger listening on (ws:\/\/\S+)/.exec(logs)?.[1];
}

/** One inspector session: a method at a time, answered in order. */
export class Inspector {
  private id = 0;
  private readonly waiting = new Map<number, (r: { result?: unknown; error?: { message: string } }) => void>();
  /** the handler of each event (method) listened to */
  private readonly events = new Map<string, (params: unknown) => void>();
  private constructor(private readonly ws: WebSocket) {
    ws.addEventListener('message', (e: MessageEvent) => {
      const m = JSON.parse(String(e.data)) as {
        id?: number;
        method?: string;
        params?: unknown;
        result?: unknown;
        error?: { message: string };
      };
      if (m.method !== undefined) this.events.get(m.method)?.(m.params);
      if (m.id !== undefined) this.waiting.get(m.id)?.(m);
      if (m.id !== undefined) this.waiting.delete(m.id);
    });
  }

  /** The process's heap snapshot (HeapProfiler.takeHeapSnapshot, which collects first), written to `file`. */
  async heapSnapshot(file: string): Promise<void> {
    const chunks: string[] = [];
    this.events.set('HeapProfiler.addHeapSnapshotChunk', (p) => chunks.push((p as { chunk: string }).chunk));
    try {
      await this.send('HeapProfiler.takeHeapSnapshot', { reportProgress: false });
    } finally {
      this.events.delete('HeapProfiler.addHeapSnapshotChunk');
    }
    await writeFile(file, chunks.join(''));
  }

  static async open(url: string): Promise<Inspector> {
    const ws = new WebSocket(url);
    await new Promise<void>((resolve, reject) => {
      ws.addEventListener('open', () => resolve(), { once: true });
      ws.addEventListener('error', () => reject(new Error(`no inspector at ${url}`)), { once: true });
    });
    return new Inspector(ws);
  }

  async send<T = unknown>(method: string, params: object = {}): Promise<T> {
    const id = ++this.id;
    const reply = new Promise<{ result?: unknown; error?: { message: string } }>((resolve) =>
      this.waiting.set(id, resolve),
    );
    this.ws.send(JSON.stringify({ id, method, params }));
    const r = await reply;
    if (r.error) throw new Error(`${method}: ${r.error.message}`);
    return r.result as T;
  }

  /** An expression's value in the process (JSON-able). */
  async evaluate<T>(expression: string): Promise<T> {
    const r = await this.send<{ result: { value: T }; exceptionDetails?: { text: string } }>('Runtime.evaluate', {
      expression,
      returnByValue: true,
    });
    if (r.exceptionDetails) throw new Error(`${expression}: ${r.exceptionDetails.text}`);
    return r.result.value;
  }

  close(): void {
    this.ws.close();
  }
}

/** Resident memory of process pid by what holds it (kB), from /proc/<pid>/smaps. */
export function residentByKind(pid: number): { anon: number; brk: number; files: number; code: number } {
  const out = { anon: 0, brk: 0, files: 0, code: 0 };
  let kind: keyof typeof out = 'anon';
  for (const line of readFileSync(`/proc/${pid}/smaps`, 'utf8').split('\n')) {
    const head = /^[0-9a-f]+-[0-9a-f]+ (\S{4}) \S+ \S+ \d+\s*(.*)$/.exec(line);
    if (head) {
      const [, perms, path = ''] = head;
      if (path === '[heap]') kind = 'brk';
      else if (path === '' || path.startsWith('[')) kind = 'anon';
      else kind = perms!.includes('x') || /\.so(\.|$)|\/node$/.test(path) ? 'code' : 'files';
      continue;
    }
    const rss = /^Rss:\s+(\d+) kB/.exec(line);
    if (rss) out[kind] += Number(rss[1]);
  }
  return out;
}

/** A worker's memory after a full collection (see the header); `collect` false: as it stands, no collection. */
export async function memoryAfterGc(inspector: Inspector, pid: number, collect = true): Promise<WorkerMemory> {
  if (collect) await inspector.send('HeapProfiler.collectGarbage');
  const mu =
    await inspector.evaluate<Record<'rss' | 'heapUsed' | 'heapTotal' | 'external' | 'arrayBuffers', number>>(
      'process.memoryUsage()',
    );
  const kinds = residentByKind(pid);
  const mb = (b: number) => b / 2 ** 20;
  return {
    rss: mb(mu.rss),
    heapUsed: mb(mu.heapUsed),
    heapTotal: mb(mu.heapTotal),
    external: mb(mu.external),
    arrayBuffers: mb(mu.arrayBuffers),
    anon: kinds.anon / 1024,
    brk: kinds.brk / 1024,
    files: kinds.files / 1024,
    code: kinds.code / 1024,
  };
}
