// A feed over HTTP for tests, hostile on request: answers `status` (401 for a wrong token), or the
// `body` it is given (a CSV cut short, anything). Listens on 127.0.0.1, port 0; counts requests.
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';

export interface FeedServer {
  url: string;
  requests: number;
  /** what the next requests get */
  answer: { status: number; body: string | Buffer; contentType?: string };
  close(): Promise<void>;
}

export async function startFeedServer(answer: FeedServer['answer']): Promise<FeedServer> {
  const state: FeedServer = {
    url: '',
    requests: 0,
    answer,
    close: () => new Promise<void>((resolve, reject) => server.close((err) => (err ? reject(err) : resolve()))),
  };
  const server: Server = createServer((req, res) => {
    state.requests++;
    const a = state.answer;
    res.writeHead(a.status, { 'content-type': a.contentType ?? 'text/csv' }).end(a.body);
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  state.url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/feed.csv`;
  return state;
}
