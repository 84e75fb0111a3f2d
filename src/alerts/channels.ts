// Sends one alert to each channel: a webhook (JSON, signed with an HMAC header), a Slack-compatible
// incoming webhook, or e-mail over SMTP (nodemailer). Each send has a deadline and follows no
// redirect; a channel that fails is logged and the others still get the alert. Every text sent is
// masked of secrets first, and the channels' own secrets are registered so no log shows them.
// - Webhook: X-Feedsync-Timestamp (Unix seconds) and X-Feedsync-Signature: sha256=<hex HMAC-SHA256
//   of "<timestamp>.<body>">, so a receiver can refuse a replayed body (an old timestamp).
// - Slack: `&`, `<` and `>` escaped as Slack documents (https://api.slack.com/reference/surfaces/
//   formatting#escaping), and the alert's message, which carries feed text, in a code span: a value
//   `<!channel>` or `<https://evil.test|click>` reaches the channel as text, never as a ping or a link.
// - E-mail: with smtp.user set, STARTTLS is required (requireTLS): the password never goes in clear.
import { createHmac } from 'node:crypto';
import { causeMessage } from '../errors.js';
import type { Logger } from '../log.js';
import { redactSecrets, registerSecret } from '../log.js';
import { maskDeep } from '../secrets.js';
import type { AlertChannel } from './config-schema.js';
import type { Notice } from './rules.js';

export interface Alert extends Notice {
  feed: string;
  chatbot: string;
  runId?: string;
  at: string;
  /** where to look: the status page, `feedsync runs show RUN` */
  hint: string;
}

export const SIGNATURE_HEADER = 'x-feedsync-signature';
export const TIMESTAMP_HEADER = 'x-feedsync-timestamp';
const TIMEOUT_MS = 10_000;

export function registerChannelSecrets(channels: readonly AlertChannel[]): void {
  for (const c of channels) {
    if (c.kind === 'webhook') registerSecret(c.secret);
    if (c.kind === 'slack') registerSecret(new URL(c.url).pathname.length > 8 ? new URL(c.url).pathname : undefined);
    if (c.kind === 'email') registerSecret(c.smtp.pass);
  }
}

/** The signature of a webhook body sent at `timestamp` (Unix seconds): both are signed, so neither can be replayed alone. */
function signBody(body: string, secret: string, timestamp: number): string {
  return `sha256=${createHmac('sha256', secret).update(`${timestamp}.${body}`).digest('hex')}`;
}

/** Slack's control characters as the entities Slack documents; nothing else is encoded. */
function slackEscape(text: string): string {
  return text.replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;');
}

/** The Slack text of an alert: feed text in a code span (its backticks turned into ʼ so the span cannot be closed early). */
export function slackText(a: Alert): string {
  const message = a.message.replace(/`/g, 'ʼ').replace(/\s+/g, ' ');
  return slackEscape(
    redactSecrets(
      `${alertTitle(a)} — \`${message}\` (chatbot ${a.chatbot}${a.runId ? `, run ${a.runId}` : ''}, since ${a.since}). ${a.hint}`,
    ),
  );
}

function alertTitle(a: Alert): string {
  return `[feedsync] ${a.status === 'firing' ? 'ALERT' : 'RESOLVED'} ${a.feed}: ${a.condition}`;
}

function alertText(a: Alert): string {
  return redactSecrets(
    `${alertTitle(a)} — ${a.message} (chatbot ${a.chatbot}${a.runId ? `, run ${a.runId}` : ''}, since ${a.since}). ${a.hint}`,
  );
}

export async function sendAlert(channels: readonly AlertChannel[], alert: Alert, logger: Logger): Promise<number> {
  let sent = 0;
  await Promise.all(
    channels.map(async (c) => {
      try {
        await sendOne(c, alert);
        sent++;
      } catch (err) {
        logger.warn(
          { channel: c.kind, err: redactSecrets((err as Error).message), condition: alert.condition, feed: alert.feed },
          'alert could not be sent',
        );
      }
    }),
  );
  return sent;
}

async function sendOne(c: AlertChannel, alert: Alert): Promise<void> {
  switch (c.kind) {
    case 'webhook': {
      const body = JSON.stringify(maskDeep({ type: 'feedsync.alert', ...alert, text: alertText(alert) }, alert.feed));
      const timestamp = Math.floor(Date.now() / 1000);
      return post(c.url, body, {
        [TIMESTAMP_HEADER]: String(timestamp),
        [SIGNATURE_HEADER]: signBody(body, c.secret, timestamp),
      });
    }
    case 'slack':
      return post(c.url, JSON.stringify({ text: slackText(alert) }), {});
    case 'email': {
      // loaded when an e-mail is sent, not with every run: nodemailer is a tenth of a second of CPU to import
      const { default: nodemailer } = await import('nodemailer');
      const transport = nodemailer.createTransport({
        host: c.smtp.host,
        port: c.smtp.port,
        secure: c.smtp.secure,
        // with credentials, STARTTLS or nothing: a server that offers no TLS never gets the password
        ...(c.smtp.user && { auth: { user: c.smtp.user, pass: c.smtp.pass ?? '' }, requireTLS: true }),
        connectionTimeout: TIMEOUT_MS,
        greetingTimeout: TIMEOUT_MS,
        socketTimeout: TIMEOUT_MS,
      });
      try {
        await transport.sendMail({
          from: c.from,
          to: c.to,
          subject: redactSecrets(alertTitle(alert)),
          text: alertText(alert),
        });
      } finally {
        transport.close();
      }
      return;
    }
  }
}

/** One POST; a failure names the channel's origin (never its path or query: a Slack URL's path is its token) and why. */
async function post(url: string, body: string, headers: Record<string, string>): Promise<void> {
  const origin = new URL(url).origin;
  let res: Response;
  try {
    res = await fetch(url, {
      method: 'POST',
      headers: { 'content-type': 'application/json', ...headers },
      body,
      redirect: 'error',
      signal: AbortSignal.timeout(TIMEOUT_MS),
    });
  } catch (err) {
    // (fetch says only "fetch failed": the reason is its cause, e.g. ECONNREFUSED or "unexpected redirect")
    const why = causeMessage(err);
    const fix = /redirect/i.test(why) ? ' (alert channels follow no redirect: configure the final URL)' : '';
    throw new Error(`POST ${origin} failed: ${why}${fix}`, { cause: err });
  }
  await res.body?.cancel();
  if (!res.ok) throw new Error(`${origin} answered HTTP ${res.status}`);
}
