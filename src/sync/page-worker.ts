// A worker thread of page-pool.ts: turns the body of a list page into its rows (rowsOf), away from
// the thread that makes the calls. It takes only what plainly is a successful page (quickListPage);
// anything else is answered with no page, and the client checks it as usual (its errors, retries).
import { parentPort } from 'node:worker_threads';
import { quickListPage } from '../api/envelope.js';
import { rowsOf, type RemoteRows, type RowOptions } from './remote-rows.js';

/** What the pool sends: one response body, copied (the client keeps it in case the page is not taken), and how to make its rows. */
export interface PageTask {
  id: number;
  status: number;
  bytes: Uint8Array;
  opts: PageWorkerOptions;
}

/** RowOptions as they cross to a worker (a Set does not cross as itself) */
export interface PageWorkerOptions {
  keyBy: 'MLSNumber' | 'URL';
  ignore: string[];
  keepCompared: boolean;
  keepOtherKey: boolean;
}

/** What the worker answers: once that it is loaded (pages go to it from then on), then per task the page's rows, or no page. */
export type PageReply = { ready: true } | { id: number; page?: { rows: RemoteRows; virtualCount: number } };

/** the ignore lists seen, as sets (a chatbot's pages all come with the same one) */
const ignoreSets = new Map<string, ReadonlySet<string>>();
const rowOptions = (o: PageWorkerOptions): RowOptions => {
  const key = o.ignore.join('\n');
  let ignore = ignoreSets.get(key);
  if (!ignore) {
    if (ignoreSets.size >= 64) ignoreSets.clear();
    ignoreSets.set(key, (ignore = new Set(o.ignore)));
  }
  return { ...o, ignore };
};

const port = parentPort;
if (port) {
  port.on('message', (task: PageTask) => {
    // Buffer's decoding, as the client's res.text(): a BOM stays and fails the JSON, as it would there
    const text = Buffer.from(task.bytes.buffer, task.bytes.byteOffset, task.bytes.byteLength).toString('utf8');
    const list = quickListPage(task.status, text);
    if (!list) return port.postMessage({ id: task.id } satisfies PageReply);
    const rows = rowsOf(list.List, rowOptions(task.opts));
    const moved = [rows.ids.buffer, rows.hashes.buffer, ...(rows.compared ? [rows.compared.utf8.buffer, rows.compared.ends.buffer] : [])];
    port.postMessage({ id: task.id, page: { rows, virtualCount: list.VirtualCount } } satisfies PageReply, moved);
  });
  port.postMessage({ ready: true } satisfies PageReply);
}
