// Sends one alert to each channel: a webhook (JSON, signed with an HMAC header), a Slack-compatible
// incoming webhook, or e-mail over SMTP (nodemailer). Each send has a deadline and follows no
// redirect; a channel that fails is logged and the others still get the alert. Every text sent is
// masked of secrets first, and the channels' own secrets are registered so no log shows them.
import { createHmac } from 'node:crypto';
import nodemailer from 'nodemailer';
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
const TIMEOUT_MS = 10_000;

export function registerChannelSecrets(channels: readonly AlertChannel[]): void {
  for (const c of channels) {
    if (c.kind === 'webhook') registerSecret(c.secret);
    if (c.kind === 'slack') registerSecret(new URL(c.url).pathname.length > 8 ? new URL(c.url).pathname : undefined);
    if (c.kind === 'email') registerSecret(c.smtp.pass);
  }
}

export function signBody(body: string, secret: string): string {
  return `sha256=${createHmac('sha256', secret).update(body).digest('hex')}`;
}

export function alertTitle(a: Alert): string {
  return `[feedsync] ${a.status === 'firing' ? 'ALERT' : 'RESOLVED'} ${a.feed}: ${a.condition}`;
}

export function alertText(a: Alert): string {
  return redactSecrets(`${alertTitle(a)} — ${a.message} (chatbot ${a.chatbot}${a.runId ? `, run ${a.runId}` : ''}, since ${a.since}). ${a.hint}`);
}

export async function sendAlert(channels: readonly AlertChannel[], alert: Alert, logger: Logger): Promise<number> {
  let sent = 0;
  await Promise.all(
    channels.map(async (c) => {
      try {
        await sendOne(c, alert);
        sent++;
      } catch (err) {
        logger.warn({ channel: c.kind, err: redactSecrets((err as Error).message), condition: alert.condition, feed: alert.feed }, 'alert could not be sent');
      }
    }),
  );
  return sent;
}

async function sendOne(c: AlertChannel, alert: Alert): Promise<void> {
  switch (c.kind) {
    case 'webhook': {
      const body = JSON.stringify(maskDeep({ type: 'feedsync.alert', ...alert, text: alertText(alert) }, alert.feed));
      return post(c.url, body, { [SIGNATURE_HEADER]: signBody(body, c.secret) });
    }
    case 'slack':
      return post(c.url, JSON.stringify({ text: alertText(alert) }), {});
    case 'email': {
      const transport = nodemailer.createTransport({
        host: c.smtp.host,
        port: c.smtp.port,
        secure: c.smtp.secure,
        ...(c.smtp.user && { auth: { user: c.smtp.user, pass: c.smtp.pass ?? '' } }),
        connectionTimeout: TIMEOUT_MS,
        greetingTimeout: TIMEOUT_MS,
        socketTimeout: TIMEOUT_MS,
      });
      try {
        await transport.sendMail({ from: c.from, to: c.to, subject: redactSecrets(alertTitle(alert)), text: alertText(alert) });
      } finally {
        transport.close();
      }
      return;
    }
  }
}

async function post(url: string, body: string, headers: Record<string, string>): Promise<void> {
  const res = await fetch(url, {
    method: 'POST',
    headers: { 'content-type': 'application/json', ...headers },
    body,
    redirect: 'error',
    signal: AbortSignal.timeout(TIMEOUT_MS),
  });
  await res.body?.cancel();
  if (!res.ok) throw new Error(`${new URL(url).origin} answered HTTP ${res.status}`);
}
