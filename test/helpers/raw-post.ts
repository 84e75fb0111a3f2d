// POST to the emulator by hand (no client): to see exactly what goes over the wire.
import { freshFetch } from './fresh-fetch.js';
export interface RawAnswer {
  status: number;
  headers: Headers;
  /** the envelope's fields as they came (each checked by the test); {} when the answer was not JSON */
  body: RawEnvelope;
  text: string;
}

/** The service's envelope as it came over the wire, unchecked: every field may be missing. */
export interface RawEnvelope {
  Version?: unknown;
  Success?: unknown;
  Code?: unknown;
  Message?: string;
  Data?: { List?: Array<{ MLSNumber?: string }>; VirtualCount?: number } & Record<string, unknown>;
}

export async function rawPost(
  url: string,
  body: unknown,
  headers: Record<string, string> = {},
  method = 'POST',
): Promise<RawAnswer> {
  const res = await freshFetch(url, {
    method,
    headers: { 'content-type': 'application/json', ...headers },
    body: method === 'GET' ? undefined : typeof body === 'string' ? body : JSON.stringify(body),
  });
  const text = await res.text();
  return { status: res.status, headers: res.headers, body: envelopeOf(text), text };
}

/** The fields of a JSON object answer, each still to be checked by the test; {} for anything else. */
function envelopeOf(text: string): RawEnvelope {
  try {
    const parsed: unknown = JSON.parse(text);
    return parsed !== null && typeof parsed === 'object' && !Array.isArray(parsed) ? parsed : {};
  } catch {
    return {};
  }
}
