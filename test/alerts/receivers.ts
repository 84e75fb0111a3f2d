// Alert receivers a test starts on port 0: an HTTP endpoint that keeps every request (webhook and
// Slack-compatible), and an SMTP server (smtp-server) that keeps every message.
import { once } from 'node:events';
import { createServer, type IncomingHttpHeaders } from 'node:http';
import type { AddressInfo } from 'node:net';
import { SMTPServer } from 'smtp-server';

export interface Received {
  path: string;
  headers: IncomingHttpHeaders;
  body: string;
}

export async function startHttpReceiver(status = 200) {
  const received: Received[] = [];
  const server = createServer((req, res) => {
    let body = '';
    req.on('data', (c) => (body += c));
    req.on('end', () => {
      received.push({ path: req.url ?? '', headers: req.headers, body });
      res.statusCode = status;
      res.end('ok');
    });
  });
  server.listen(0, '127.0.0.1');
  await once(server, 'listening');
  const { port } = server.address() as AddressInfo;
  return { url: `http://127.0.0.1:${port}`, received, close: () => new Promise<void>((r) => server.close(() => r())) };
}

export async function startSmtpReceiver() {
  const messages: Array<{ from: string; to: string[]; data: string }> = [];
  /** users that authenticated (their password reached this server) */
  const auths: string[] = [];
  const server = new SMTPServer({
    authOptional: true,
    disabledCommands: ['STARTTLS'],
    // without TLS smtp-server refuses AUTH unless allowInsecureAuth: allowed, so a client that would send it in clear is seen
    allowInsecureAuth: true,
    onAuth: (auth, _session, cb) => {
      auths.push(auth.username ?? '');
      cb(null, { user: auth.username });
    },
    onData(stream, session, cb) {
      let data = '';
      stream.on('data', (c: Buffer) => (data += c.toString('utf8')));
      stream.on('end', () => {
        // quoted-printable soft line breaks joined back, so a test can look for whole sentences
        const text = data
          .replace(/=\r\n/g, '')
          .replace(/=([0-9A-F]{2})/g, (_, h: string) => String.fromCharCode(parseInt(h, 16)));
        messages.push({
          from: session.envelope.mailFrom ? session.envelope.mailFrom.address : '',
          to: session.envelope.rcptTo.map((r) => r.address),
          data: text,
        });
        cb();
      });
    },
  });
  server.listen(0, '127.0.0.1');
  await once(server.server, 'listening');
  const { port } = server.server.address() as AddressInfo;
  return { port, messages, auths, close: () => new Promise<void>((r) => server.close(() => r())) };
}
