// The reason phrase of an HTTP status ("Not Found"), from node:http's own table. Read through
// process.getBuiltinModule, not `import { STATUS_CODES } from 'node:http'`: an ES import of node:http
// makes its module namespace, which reads every export, and the WebSocket/CloseEvent/MessageEvent
// getters among them load Node's internal undici: 45-50 ms of CPU at the start of every command
// that loads the feed reader (`sync` included), for a table read only when a request fails.

/** `status`'s reason phrase, or '' for a status node:http does not name. */
export function statusText(status: number): string {
  return process.getBuiltinModule('node:http').STATUS_CODES[status] ?? '';
}
