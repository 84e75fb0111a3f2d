// A worker thread of page-pool.ts: turns the body of a list page into its rows (decodePage), away
// from the thread that makes the calls. It takes only what plainly is a successful page
// (quickListPage); anything else is answered with no page, and the client checks it as usual (its
// errors, retries).
import { parentPort } from 'node:worker_threads';
import { decodePage, type DecodedPage } from './page-decode.js';
import type { RowOptions } from './remote-rows.js';

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
export type PageReply = { ready: true } | { id: number; page?: DecodedPage };

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
    const page = decodePage(task.status, task.bytes, rowOptions(task.opts));
    if (!page) return port.postMessage({ id: task.id } satisfies PageReply);
    const { rows } = page;
    const moved = [
      rows.ids.buffer,
      rows.hashes.buffer,
      ...(rows.compared ? [rows.compared.utf8.buffer, rows.compared.ends.buffer] : []),
    ];
    port.postMessage({ id: task.id, page } satisfies PageReply, moved);
  });
  port.postMessage({ ready: true } satisfies PageReply);
}
