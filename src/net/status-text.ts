// node:http's module required, not imported: an ES import of node:http (`import { STATUS_CODES }
// from 'node:http'`) makes its module namespace, which reads every export, and the WebSocket,
// CloseEvent and MessageEvent getters among them load Node's internal undici: 45-50 ms of CPU at the
// start of every command that loads the feed reader (`sync` included), for a table read only when a
// request fails. A require of a built-in makes no namespace. (Not process.getBuiltinModule: it came
// in Node 22.3, and engines allows 22.0.)
import { createRequire } from 'node:module';

const requireBuiltin = createRequire(import.meta.url);
// kept once required: a require resolves its name again on every call, and the API client asks on
// every call (1-6 µs a call in a loop; 15-23 ms over a 100k paging's 1,000 calls in its profile, Node 24)
let http: typeof import('node:http') | undefined;
let https: typeof import('node:https') | undefined;

/** node:http, as Node keeps it (loaded once). */
export function nodeHttp(): typeof import('node:http') {
  return (http ??= requireBuiltin('node:http') as typeof import('node:http'));
}

/** node:https, required as node:http is (read when a pool first meets an https URL). */
export function nodeHttps(): typeof import('node:https') {
  return (https ??= requireBuiltin('node:https') as typeof import('node:https'));
}

/** `status`'s reason phrase, or '' for a status node:http does not name. */
export function statusText(status: number): string {
  return nodeHttp().STATUS_CODES[status] ?? '';
}
