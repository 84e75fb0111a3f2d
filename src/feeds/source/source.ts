// Where a feed's bytes come from: a local file (relative to the config's folder) or an http(s) URL,
// gunzipped when the file is .gz, the server says application/gzip, or config says gzip: true, always
// within source.maxBytes and source.maxCompressionRatio (a Content-Encoding: gzip body is decoded,
// within the same bounds, by http.ts).
import { registerUrlSecrets } from '../../secrets.js';
import type { FeedSource } from '../config-schema.js';
import { boundedGunzip } from './decompress.js';
import { openFileSource } from './file-source.js';
import { displayUrl, httpGet } from './http.js';
import { sourceBudget } from './source-budget.js';
import type { FeedContext } from '../types.js';

export interface OpenedSource {
  /** printable name: the path as configured, or the URL without its query */
  label: string;
  bytes: AsyncIterable<Buffer>;
}

export { feedPath } from './file-source.js';

export function openSource(source: FeedSource, ctx: FeedContext): OpenedSource {
  if (source.path) return openFileSource({ ...source, path: source.path }, ctx);
  const url = source.url!;
  const label = displayUrl(url);
  return { label, bytes: urlBytes(url, label, source, ctx) };
}

async function* urlBytes(url: string, label: string, source: FeedSource, ctx: FeedContext): AsyncIterable<Buffer> {
  registerUrlSecrets(url); // (its userinfo, a ?token=: httpGet leaves a URL's secrets to who configured it)
  const { response, body, cancel } = await httpGet(url, {
    headers: source.headers,
    bearerToken: source.bearerToken,
    timeoutMs: source.timeoutMs,
    retries: source.retries,
    maxBytes: source.maxBytes,
    maxCompressionRatio: source.maxCompressionRatio,
    signal: ctx.signal,
    logger: ctx.logger,
    budget: sourceBudget(source, ctx),
    notFoundHint: 'the server has no feed at this URL: check feeds[].source.url',
  });
  const type = response.headers.get('content-type') ?? '';
  const gzip = source.gzip ?? (/application\/(x-)?gzip/i.test(type) || /\.gz$/i.test(new URL(url).pathname));
  try {
    yield* gzip ? boundedGunzip(body, source, label, cancel) : body;
  } finally {
    cancel();
  }
}
