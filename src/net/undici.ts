// undici's values, in a module of their own: net/request.ts imports it at the first exchange read
// as a stream (a feed's download, a photo, the streamed answer), so a process whose calls are all
// read whole, over node:http (a `sync` of a file feed), never loads undici (its client, parsers and
// the node modules they require: ~12 ms of CPU at every start, Node 24).
export { Agent, request } from 'undici';
