// Each channel against a real receiver started here: the webhook's body is signed (HMAC-SHA256 of
// the exact body), Slack gets {text}, e-mail goes over SMTP to a local smtp-server; a failing
// channel does not keep the others from their alert; no secret is in anything sent.
import { createHmac } from 'node:crypto';
import { Writable } from 'node:stream';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { sendAlert, SIGNATURE_HEADER, slackText, TIMESTAMP_HEADER, type Alert } from '../../src/alerts/channels.js';
import { AlertsConfig } from '../../src/alerts/config-schema.js';
import { createLogger, registerSecret, silentLogger } from '../../src/log.js';
import { redirect, useHostileServers } from '../helpers/hostile-server.js';
import { startHttpReceiver, startSmtpReceiver } from './receivers.js';

let http: Awaited<ReturnType<typeof startHttpReceiver>>;
let smtp: Awaited<ReturnType<typeof startSmtpReceiver>>;
beforeAll(async () => {
  http = await startHttpReceiver();
  smtp = await startSmtpReceiver();
});
afterAll(async () => {
  await http.close();
  await smtp.close();
});

const API_SECRET = 'sk-alert-test-51ab77c';
const alert: Alert = {
  status: 'firing',
  condition: 'guard',
  feed: 'austin',
  chatbot: 'SN-1',
  runId: 'run-1',
  at: '2026-11-22T10:00:00Z',
  since: '2026-11-22T10:00:00Z',
  message: `a delete guard held deletes back: would have deleted 149 listing(s); key ${API_SECRET}`,
  hint: 'Details: feedsync runs show run-1',
};

describe('alert channels', () => {
  it('webhook (signed), Slack and e-mail each get the alert, secrets masked', async () => {
    registerSecret(API_SECRET);
    const config = AlertsConfig.parse({
      channels: [
        { kind: 'webhook', url: `${http.url}/hook`, secret: 'whsec-0123456789' },
        { kind: 'slack', url: `${http.url}/services/T000/B000/XXXXSLACKTOKEN` },
        {
          kind: 'email',
          smtp: { host: '127.0.0.1', port: smtp.port },
          from: 'feedsync@example.com',
          to: ['oncall@example.com'],
        },
      ],
    });
    const before = Math.floor(Date.now() / 1000);
    expect(await sendAlert(config.channels, alert, silentLogger)).toBe(3);

    const hook = http.received.find((r) => r.path === '/hook')!;
    // the timestamp is signed with the body: a replayed body carries an old timestamp, or a wrong signature
    const timestamp = Number(hook.headers[TIMESTAMP_HEADER]);
    expect(timestamp).toBeGreaterThanOrEqual(before);
    const expected = `sha256=${createHmac('sha256', 'whsec-0123456789').update(`${timestamp}.${hook.body}`).digest('hex')}`;
    expect(hook.headers[SIGNATURE_HEADER]).toBe(expected);
    expect(hook.headers['content-type']).toBe('application/json');
    const doc = JSON.parse(hook.body);
    expect(doc).toMatchObject({
      type: 'feedsync.alert',
      status: 'firing',
      condition: 'guard',
      feed: 'austin',
      runId: 'run-1',
    });

    const slack = http.received.find((r) => r.path.startsWith('/services/'))!;
    expect(JSON.parse(slack.body).text).toMatch(
      /^\[feedsync\] ALERT austin: guard — `a delete guard held deletes back/,
    );

    expect(smtp.messages).toHaveLength(1);
    expect(smtp.messages[0]!.to).toEqual(['oncall@example.com']);
    expect(smtp.messages[0]!.data).toContain('Subject: [feedsync] ALERT austin: guard');
    expect(smtp.messages[0]!.data).toContain('feedsync runs show run-1');

    for (const text of [hook.body, slack.body, smtp.messages[0]!.data]) {
      expect(text).not.toContain(API_SECRET);
      expect(text).toContain('[REDACTED]');
    }
  });

  it('with smtp.user set, a server offering no STARTTLS never gets the password: the e-mail fails', async () => {
    const config = AlertsConfig.parse({
      channels: [
        {
          kind: 'email',
          smtp: { host: '127.0.0.1', port: smtp.port, user: 'ops', pass: 'smtp-pass-1234' },
          from: 'feedsync@example.com',
          to: ['oncall@example.com'],
        },
      ],
    });
    const sent = smtp.messages.length;
    expect(await sendAlert(config.channels, alert, silentLogger)).toBe(0);
    expect(smtp.messages).toHaveLength(sent);
    expect(smtp.auths).toEqual([]);
  });

  it('Slack: a feed value `<!channel>` or a disguised link reaches the channel as text, in a code span', async () => {
    const hostile: Alert = {
      ...alert,
      condition: 'unmapped',
      message:
        'lookup values no map covers: PropertyType: "<!channel> & <https://evil.test|click to fix the feed>", Status: "`x`"',
    };
    const config = AlertsConfig.parse({ channels: [{ kind: 'slack', url: `${http.url}/services/T1/B1/SLACKESCAPE` }] });
    expect(await sendAlert(config.channels, hostile, silentLogger)).toBe(1);
    const text: string = JSON.parse(http.received.find((r) => r.path === '/services/T1/B1/SLACKESCAPE')!.body).text;
    expect(text).toBe(slackText(hostile));
    expect(text).not.toMatch(/[<>]/);
    expect(text).toContain('&lt;!channel&gt; &amp; &lt;https://evil.test|click to fix the feed&gt;');
    // one code span around the message: the feed's own backticks cannot close it
    expect(text).toMatch(/— `lookup values no map covers: [^`]*ʼxʼ[^`]*` \(chatbot SN-1/);
  });

  it('a channel that fails is logged; the others still get the alert', async () => {
    const down = await startHttpReceiver(500);
    const before = http.received.length;
    const config = AlertsConfig.parse({
      channels: [
        { kind: 'slack', url: `${down.url}/services/down` },
        { kind: 'webhook', url: `${http.url}/hook2`, secret: 'whsec-0123456789' },
      ],
    });
    expect(await sendAlert(config.channels, { ...alert, status: 'resolved' }, silentLogger)).toBe(1);
    expect(http.received.length).toBe(before + 1);
    await down.close();
  });

  it('a channel that fails is logged with why and where (its origin, never its path or query): a redirect, a refused connection', async () => {
    const hostile = useHostileServers();
    const moved = await hostile((_req, res) => redirect(res, 302, 'https://elsewhere.example/hook'));
    const closed = await hostile(() => {});
    await closed.close(); // nothing listens on its port any more
    const lines: string[] = [];
    const logger = createLogger({
      level: 'warn',
      destination: new Writable({ write: (c, _e, done) => (lines.push(String(c)), done()) }),
    });
    const config = AlertsConfig.parse({
      channels: [
        { kind: 'slack', url: `${moved.origin}/services/T9/B9/MOVEDSLACKTOKEN` },
        { kind: 'webhook', url: `${closed.origin}/hook?token=QUERYTOKEN42`, secret: 'whsec-0123456789' },
      ],
    });
    expect(await sendAlert(config.channels, alert, logger)).toBe(0);
    const warned = lines.map((l) => JSON.parse(l) as { channel: string; err: string });
    const slack = warned.find((w) => w.channel === 'slack')!;
    const hook = warned.find((w) => w.channel === 'webhook')!;
    expect(slack.err).toContain(moved.origin);
    expect(slack.err).toMatch(/redirect/);
    expect(hook.err).toContain(closed.origin);
    expect(hook.err).toMatch(/ECONNREFUSED/);
    expect(lines.join('')).not.toMatch(/MOVEDSLACKTOKEN|QUERYTOKEN42|\/services\/T9/);
  });
});
