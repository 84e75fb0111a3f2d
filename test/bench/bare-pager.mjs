// The bench's reference for a no-change rerun (sync.bench.ts): the least a client can do to read a
// chatbot's whole list, as a new process (its start included in its time). Plain JavaScript, no
// dependency: node:http (bare-post.mjs), `concurrency` pages in flight in page order (the sync's paging: the
// first page, then as many as its VirtualCount leads to expect, until a short page), each page's
// body parsed with JSON.parse and its items counted. No checks, no retries, no state: the floor.
// The request is the one src/api/schemas.ts gives (RealEstateList, ListRequest: POST with
// SerialNumber, PageNumber, PageSize; the session key in the ChatRobot-SessionKey header, AUTH_HEADER).
//
//   node test/bench/bare-pager.mjs URL SERIAL SESSION_KEY PAGE_SIZE CONCURRENCY   prints {"listings","pages","cpuMs","pagingMs"}
// (cpuMs: the process's CPU since it started, its start included; pagingMs: from its first request to its last page's
// items counted, its start left out: what a process already running, a queue worker, would take to page the list)
import { barePost } from './bare-post.mjs';

const [url, serial, sessionKey, pageSizeArg, concurrencyArg] = process.argv.slice(2);
const pageSize = Number(pageSizeArg);
const concurrency = Number(concurrencyArg);
const post = barePost(url, concurrency);
const headers = { 'content-type': 'application/json', accept: 'application/json', 'chatrobot-sessionkey': sessionKey };

async function page(n) {
  const res = await post(
    '/chat/Chatbot/RealEstateList',
    headers,
    JSON.stringify({ SerialNumber: serial, PageNumber: n, PageSize: pageSize }),
  );
  const body = JSON.parse(res.text);
  if (!body.Success) throw new Error(`page ${n}: ${res.status} ${body.Message}`);
  return { items: body.Data.List.length, virtualCount: body.Data.VirtualCount };
}

const t0 = performance.now();
const first = await page(1);
let listings = first.items;
let pages = 1;
if (first.items === pageSize) {
  const expected = Math.ceil(first.virtualCount / pageSize);
  let next = 2;
  let ended = false;
  const ahead = new Map();
  while (!ended || ahead.size > 0) {
    while (!ended && ahead.size < concurrency && (next <= expected || ahead.size === 0)) ahead.set(next, page(next++));
    const [n, pending] = ahead.entries().next().value;
    const p = await pending;
    ahead.delete(n);
    pages++;
    listings += p.items;
    if (p.items < pageSize) ended = true;
  }
}
const pagingMs = Math.round(performance.now() - t0);
const cpu = process.cpuUsage();
process.stdout.write(
  JSON.stringify({ listings, pages, cpuMs: Math.round((cpu.user + cpu.system) / 1000), pagingMs }) + '\n',
);
