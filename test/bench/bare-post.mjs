// The bare clients' one request (bare-pager.mjs, bare-writer.mjs): a JSON POST over node:http with a
// keep-alive agent, its answer read whole as text. Plain JavaScript, no dependency, the least
// a client can spend on a call here: against a server that only waits 10 ms, 16 in flight,
// it takes about a third of the CPU of Node's fetch and comes nearer the latency bound
// (1.06 × against fetch's 1.19 ×, 8,000 calls, 7 Dec 2026; feedsync's client, undici's request,
// 1.08 ×). A reference that spends more than it must would flatter what it is compared with.
import http from 'node:http';

export function barePost(url, concurrency) {
  const agent = new http.Agent({ keepAlive: true, maxSockets: concurrency });
  return (path, headers, body) =>
    new Promise((resolve, reject) => {
      const req = http.request(new URL(path, url), { method: 'POST', agent, headers }, (res) => {
        let text = '';
        res.setEncoding('utf8');
        res.on('data', (chunk) => (text += chunk));
        res.on('end', () => resolve({ status: res.statusCode, text }));
        res.on('error', reject);
      });
      req.on('error', reject);
      req.end(body);
    });
}
