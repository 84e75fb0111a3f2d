// undici as the bundle holds it (scripts/bundle.js): the names src/ imports of it, from undici's own
// modules, without the rest of its index: fetch, WebSocket, EventSource, the caches, the mocks and
// the interceptors, half of its 1.1 MB that every start would parse, ~20 ms of CPU (and its cookies
// read globalThis.Headers, which loads Node's own copy of undici as well). src/ imports a name this
// file does not export: the build fails (esbuild: "No matching export"), it never runs without it.
// test/net/undici-entry.test.ts holds these names to the index's.
import Agent from 'undici/lib/dispatcher/agent.js';
import Dispatcher from 'undici/lib/dispatcher/dispatcher.js';
import api from 'undici/lib/api/index.js';
import errors from 'undici/lib/core/errors.js';
import util from 'undici/lib/core/util.js';
import globalDispatcher from 'undici/lib/global.js';

const { getGlobalDispatcher } = globalDispatcher;
const { InvalidArgumentError } = errors;

// (as the index does: a dispatcher has request(), stream(), pipeline(), connect() and upgrade())
Object.assign(Dispatcher.prototype, api);

/** The index's request: undici/index.js makeDispatcher(api.request), as it is there (undici 7). */
function request(url, opts, handler) {
  if (typeof opts === 'function') {
    handler = opts;
    opts = null;
  }
  if (!url || (typeof url !== 'string' && typeof url !== 'object' && !(url instanceof URL)))
    throw new InvalidArgumentError('invalid url');
  if (opts != null && typeof opts !== 'object') throw new InvalidArgumentError('invalid opts');
  if (opts && opts.path != null) {
    if (typeof opts.path !== 'string') throw new InvalidArgumentError('invalid opts.path');
    let path = opts.path;
    if (!opts.path.startsWith('/')) path = `/${path}`;
    url = new URL(util.parseOrigin(url).origin + path);
  } else {
    if (!opts) opts = typeof url === 'object' ? url : {};
    url = util.parseURL(url);
  }
  const { agent, dispatcher = getGlobalDispatcher() } = opts;
  if (agent) throw new InvalidArgumentError('unsupported opts.agent. Did you mean opts.client?');
  return api.request.call(
    dispatcher,
    {
      ...opts,
      origin: url.origin,
      path: url.search ? `${url.pathname}${url.search}` : url.pathname,
      method: opts.method || (opts.body ? 'PUT' : 'GET'),
    },
    handler,
  );
}

export { Agent, request };
