// A Chatbot Service that lies about its listings, for the remote side's tests: answers
// RealEstateList from `listings` with a VirtualCount of its choosing, can ignore PageNumber (every
// page is page 1) or invent fresh full pages without end, and answers 401 to everything when
// told. Only RealEstateList is served. Listens on 127.0.0.1, port 0; counts list calls.
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { toListItem } from '../../src/emulator/list-item.js';
import type { StoredListing } from '../../src/emulator/chatbot-listings.js';
import { sampleListing } from './emulator.js';

export interface ListServerOptions {
  /** the listings really held */
  count: number;
  serialNumber?: string;
  /** what every answer claims (default: the truth) */
  virtualCount?: number;
  /** every page answers page 1 */
  ignorePageNumber?: boolean;
  /** pages past the real ones are full of new listings, forever */
  endless?: boolean;
  /** answer every call with this HTTP status and an error envelope */
  status?: number;
  /** answer the list with a proxy's HTML page (HTTP 200), not JSON */
  html?: boolean;
}

export interface ListServer {
  url: string;
  listCalls: number;
  close(): Promise<void>;
}

export async function startListServer(opts: ListServerOptions): Promise<ListServer> {
  const sn = opts.serialNumber ?? 'SN-1';
  const listing = (id: number): StoredListing => ({
    ...sampleListing({ SerialNumber: sn, MLSNumber: `L${id}`, Url: `https://lie.test/${id}` }),
    ID: id,
  });
  const state: ListServer = {
    url: '',
    listCalls: 0,
    close: () => new Promise<void>((resolve, reject) => server.close((err) => (err ? reject(err) : resolve()))),
  };
  const server: Server = createServer((req, res) => {
    let body = '';
    req.on('data', (c: Buffer) => (body += c.toString('utf8')));
    req.on('end', () => {
      const send = (status: number, envelope: unknown) =>
        res.writeHead(status, { 'content-type': 'application/json' }).end(JSON.stringify(envelope));
      if (opts.status)
        return send(opts.status, {
          Data: null,
          Version: '1',
          Success: false,
          Code: opts.status,
          Message: 'unauthorized',
        });
      if (opts.html)
        return void res.writeHead(200, { 'content-type': 'text/html' }).end('<html><body>Gateway login</body></html>');
      if (!req.url?.endsWith('/RealEstateList'))
        return send(404, { Data: null, Version: '1', Success: false, Code: 404, Message: 'not here' });
      state.listCalls++;
      const q = JSON.parse(body || '{}') as { PageNumber?: number; PageSize?: number };
      const size = q.PageSize ?? 20;
      const page = opts.ignorePageNumber ? 1 : (q.PageNumber ?? 1);
      const from = (page - 1) * size;
      const last = opts.endless ? from + size : Math.min(opts.count, from + size);
      const List = Array.from({ length: Math.max(0, last - from) }, (_, i) => toListItem(listing(from + i + 1)));
      send(200, {
        Data: { List, VirtualCount: opts.virtualCount ?? opts.count },
        Version: '1',
        Success: true,
        Code: 200,
        Message: null,
      });
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  state.url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  return state;
}
