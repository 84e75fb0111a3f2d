// The host's floor under the first sync's reference (sync.bench.ts): a server that does nothing but
// wait the latency a request and answer Success, so that the bare writing client (bare-writer.mjs)
// sent at it measures what this machine's timers, loopback and scheduling add to `latency` with
// nothing of the emulator's work (its checks, its store) and nothing of feedsync's. A first sync can
// come no nearer its latency bound than this pair does here. Plain JavaScript, no dependency;
// the body is read whole before the wait, as the emulator reads it.
//
//   node test/bench/latency-only-server.mjs LATENCY_MS   prints its port, then serves until killed
import http from 'node:http';

const latencyMs = Number(process.argv[2]);
const answer = JSON.stringify({ Success: true, Code: 200, Message: 'ok', Data: {} });
const server = http.createServer((req, res) => {
  req.resume();
  req.on('end', () =>
    setTimeout(() => {
      res.writeHead(200, { 'content-type': 'application/json; charset=utf-8', 'content-length': answer.length });
      res.end(answer);
    }, latencyMs),
  );
});
server.keepAliveTimeout = 60_000;
server.listen(0, '127.0.0.1', () => process.stdout.write(`${server.address().port}\n`));
