// fetch for tests, each call on a connection of its own (undici, pipelining 0: no keep-alive). Node's
// global fetch keeps a connection alive between calls; under load a kept-alive one was reset (fetch
// failed, ECONNRESET) when a test held its event loop past the in-process server's keep-alive timeout
// (5 s, node's default): the server's timer, due already, closed the socket as the client sent on it,
// the client's own idle timer (undici's, ticking once a second) not run yet. A fresh connection has
// no such race. The answer is a standard Response (undici's fetch, the one Node's global fetch is).
import { Agent, fetch, type RequestInfo, type RequestInit } from 'undici';

/** The dispatcher of freshFetch: no connection kept between calls. */
export const ONE_CONNECTION_A_CALL = new Agent({ pipelining: 0 });

/** fetch(url, init), on a connection of its own. */
export function freshFetch(url: RequestInfo, init: RequestInit = {}) {
  return fetch(url, { ...init, dispatcher: ONE_CONNECTION_A_CALL });
}
