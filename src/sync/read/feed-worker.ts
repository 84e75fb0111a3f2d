// A worker thread of feed-thread.ts: reads CSV feed files (openFileSource, readCsv: the reader the
// main thread would run, on the same bytes), one at a time, and sends each one's items on in
// batches, each record as its text (rowText: the header and fields, from which its data is rebuilt
// when needed) with its listing key, so the thread that plans does not parse the file. Paced by
// the reader of the batches: at most `ahead` batches are sent and not yet taken. It lives on for
// the next read (the process's next run), and stops a read when told to.
import { parentPort } from 'node:worker_threads';
import { FeedReadError, formatPlace } from '../../errors.js';
import { readCsv } from '../../feeds/csv/csv-reader.js';
import { openFileSource } from '../../feeds/source/file-source.js';
import type { FeedItem, RecordPosition } from '../../feeds/types.js';
import { compileMapping } from '../../mapping/compile.js';
import { itemKey } from '../../mapping/item-key.js';
import { columnsNeeded } from '../../mapping/columns-needed.js';
import type { FeedBatch, FeedRead, FeedWorkerMessage, FeedWorkerTask, WireFailure, WireItem } from './feed-wire.js';

/** The read under way: its credit (batches it may still send) and whether it was told to stop. */
interface Current {
  id: number;
  credit: number;
  stop: boolean;
  wake?: () => void;
}

function serve(port: NonNullable<typeof parentPort>): void {
  let current: Current | undefined;
  port.on('message', (task: FeedWorkerTask) => {
    if ('read' in task) {
      const c: Current = { id: task.read.id, credit: task.read.ahead, stop: false };
      current = c;
      void read(task.read, c, port).finally(() => {
        if (current === c) current = undefined;
      });
      return;
    }
    if (!current || current.id !== ('took' in task ? task.id : task.stop)) return; // (about a read that ended)
    if ('took' in task) current.credit += task.took;
    else current.stop = true;
    current.wake?.();
  });
}

async function read(task: FeedRead, c: Current, out: NonNullable<typeof parentPort>): Promise<void> {
  const post = (m: FeedWorkerMessage, transfer?: ArrayBuffer[]) => out.postMessage(m, transfer);
  /** false: told to stop meanwhile */
  const send = async (batch: Builder): Promise<boolean> => {
    while (c.credit <= 0 && !c.stop) await new Promise<void>((resolve) => (c.wake = resolve));
    if (c.stop) return false;
    c.credit--;
    const b = batch.done();
    post({ id: c.id, batch: b }, [b.kinds.buffer, b.lines.buffer, b.indexes.buffer]);
    return true;
  };
  // what the reader gave before it failed goes on before its failure, as the items before an error do
  let batch = new Builder(task.batchSize);
  try {
    const compiled = compileMapping(task.mapping);
    const { label, bytes } = openFileSource(task.source, { baseDir: task.baseDir });
    const { delimiter, quote, encoding, maxRecordBytes, maxColumns } = task.source;
    const onHeader = (header: readonly string[]) => post({ id: c.id, header: [...header] });
    // (a record's data is built here only where its key is read from it: the main thread builds its own from the text)
    const columns = columnsNeeded(task.mapping);
    for await (const item of readCsv(
      bytes,
      { label, delimiter, quote, encoding, maxRecordBytes, maxColumns, onHeader, columns },
      { lazy: true },
    )) {
      const key = itemKey(item, compiled, task.keyBy);
      if (item.kind === 'record' && item.text?.startsWith('c')) batch.record(item.text, key, item.position);
      else batch.other(wireItem(item), key);
      if (batch.full) {
        if (!(await send(batch))) return post({ id: c.id, end: 'stopped' }); // (leaving the loop closes the file)
        batch = new Builder(task.batchSize);
      }
      if (c.stop) return post({ id: c.id, end: 'stopped' });
    }
    if (batch.size && !(await send(batch))) return post({ id: c.id, end: 'stopped' });
    post({ id: c.id, end: 'read' });
  } catch (err) {
    if (batch.size && !(await send(batch))) return post({ id: c.id, end: 'stopped' });
    post({ id: c.id, failed: wireFailure(err) });
  }
}

class Builder {
  readonly kinds: Uint8Array<ArrayBuffer>;
  readonly texts: string[] = [];
  readonly keys: Array<string | undefined> = [];
  readonly lines: Int32Array<ArrayBuffer>;
  readonly indexes: Int32Array<ArrayBuffer>;
  readonly others: WireItem[] = [];
  readonly otherKeys: Array<string | undefined> = [];
  size = 0;
  constructor(private readonly capacity: number) {
    this.kinds = new Uint8Array(capacity);
    this.lines = new Int32Array(capacity);
    this.indexes = new Int32Array(capacity);
  }
  get full(): boolean {
    return this.size >= this.capacity;
  }
  record(text: string, key: string | undefined, position: RecordPosition): void {
    this.texts.push(text);
    this.keys.push(key);
    // (a CSV record always has its line)
    this.lines[this.texts.length - 1] = position.line ?? -1;
    this.indexes[this.texts.length - 1] = position.index;
    this.kinds[this.size++] = 0;
  }
  other(item: WireItem, key: string | undefined): void {
    this.others.push(item);
    this.otherKeys.push(key);
    this.kinds[this.size++] = 1;
  }
  done(): FeedBatch {
    const n = this.texts.length;
    return {
      kinds: this.kinds.slice(0, this.size),
      texts: this.texts,
      keys: this.keys,
      lines: this.lines.slice(0, n),
      indexes: this.indexes.slice(0, n),
      others: this.others,
      otherKeys: this.otherKeys,
    };
  }
}

function wireItem(item: FeedItem): WireItem {
  if (item.kind !== 'error') return item;
  const { error, ...rest } = item;
  return { ...rest, error: { reason: error.reason, place: error.place } };
}

function wireFailure(err: unknown): WireFailure {
  if (err instanceof FeedReadError) {
    const prefix = `${formatPlace(err.place)}: `;
    return {
      kind: 'feed',
      reason: err.message.startsWith(prefix) ? err.message.slice(prefix.length) : err.message,
      place: err.place,
      retryable: err.retryable,
      ...(err.status !== undefined && { status: err.status }),
      ...(err.retryAt && { retryAt: err.retryAt.toISOString() }),
      ...(err.credentialKey !== undefined && { credentialKey: err.credentialKey }),
      ...(err.refused && { refused: err.refused }),
    };
  }
  return { kind: 'crash', message: err instanceof Error ? (err.stack ?? err.message) : String(err) };
}

// (last: the classes and functions above are defined by then)
if (parentPort) serve(parentPort);
