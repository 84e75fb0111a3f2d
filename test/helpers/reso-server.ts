// A small RESO Web API (OData) server for tests: serves `records` (kept ordered by
// ModificationTimestamp then ListingKey) in pages with @odata.nextLink, honours
// `$filter=ModificationTimestamp ge <ts>`, `$top` and `Prefer: odata.maxpagesize` (capped by
// `maxPageSize`: a server that sends fewer records a page than asked), checks a bearer token,
// gzips when asked, and can fail the first requests with a status.
import { createServer, type IncomingMessage, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { gzipSync } from 'node:zlib';

export interface ResoServerOptions {
  records: Record<string, unknown>[];
  /** most records the server puts on a page, whatever is asked (default 100) */
  maxPageSize?: number;
  token?: string;
  gzip?: boolean;
  /** answer the first N requests with this status (e.g. [503]) */
  failFirst?: number[];
}

export interface ResoRequest {
  url: string;
  filter?: string;
  top?: number;
  prefer?: string;
  authorization?: string;
  acceptEncoding?: string;
}

export interface ResoServer {
  url: string;
  requests: ResoRequest[];
  records: Record<string, unknown>[];
  close(): Promise<void>;
}

export async function startResoServer(opts: ResoServerOptions): Promise<ResoServer> {
  const state = { records: sortRecords(opts.records) };
  const requests: ResoRequest[] = [];
  const failures = [...(opts.failFirst ?? [])];
  const server: Server = createServer((req: IncomingMessage, res) => {
    const url = new URL(req.url ?? '/', 'http://localhost');
    const filter = url.searchParams.get('$filter') ?? undefined;
    const top = url.searchParams.has('$top') ? Number(url.searchParams.get('$top')) : undefined;
    const prefer = req.headers.prefer === undefined ? undefined : String(req.headers.prefer);
    requests.push({ url: req.url ?? '', filter, top, prefer, authorization: req.headers.authorization, acceptEncoding: req.headers['accept-encoding'] as string | undefined });
    const failure = failures.shift();
    if (failure) {
      res.writeHead(failure, { 'content-type': 'text/plain' }).end('try later');
      return;
    }
    if (opts.token && req.headers.authorization !== `Bearer ${opts.token}`) {
      res.writeHead(401, { 'content-type': 'application/json' }).end(JSON.stringify({ error: { message: 'bad token' } }));
      return;
    }
    const ge = filter && /ModificationTimestamp ge (\S+?)\)?(?:\s|$)/.exec(filter)?.[1];
    const matching = ge ? state.records.filter((r) => Date.parse(String(r.ModificationTimestamp)) >= Date.parse(ge)) : state.records;
    const skip = Number(url.searchParams.get('$skip') ?? 0);
    const asked = Number(/odata\.maxpagesize=(\d+)/.exec(String(prefer ?? ''))?.[1] ?? top ?? 100);
    const size = Math.min(asked, opts.maxPageSize ?? 100);
    const value = matching.slice(skip, skip + size);
    const body: Record<string, unknown> = { '@odata.context': '$metadata#Property', value };
    if (skip + size < matching.length) {
      const next = new URL(url.toString());
      next.searchParams.set('$skip', String(skip + size));
      body['@odata.nextLink'] = `http://${req.headers.host}${next.pathname}${next.search}`;
    }
    const json = Buffer.from(JSON.stringify(body));
    if (opts.gzip && /gzip/.test(String(req.headers['accept-encoding'] ?? ''))) {
      res.writeHead(200, { 'content-type': 'application/json', 'content-encoding': 'gzip' }).end(gzipSync(json));
    } else {
      res.writeHead(200, { 'content-type': 'application/json' }).end(json);
    }
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}/reso/odata`,
    requests,
    get records() {
      return state.records;
    },
    set records(next: Record<string, unknown>[]) {
      state.records = sortRecords(next);
    },
    close: () => new Promise<void>((resolve, reject) => server.close((err) => (err ? reject(err) : resolve()))),
  };
}

function sortRecords(records: Record<string, unknown>[]): Record<string, unknown>[] {
  return [...records].sort((a, b) => {
    const t = Date.parse(String(a.ModificationTimestamp)) - Date.parse(String(b.ModificationTimestamp));
    return t || (String(a.ListingKey) < String(b.ListingKey) ? -1 : String(a.ListingKey) > String(b.ListingKey) ? 1 : 0);
  });
}
