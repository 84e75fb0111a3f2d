// The body of a refusal (4xx/5xx) as a person can read it: at most ERROR_BODY_BYTES read, decoded
// as the server says (gzip, deflate, br; or gzip by its magic bytes, as MLS Grid compresses every
// answer), capped again after decoding; its OData `error.message` when it is OData JSON, its text
// when it is text, and never raw bytes.
import { brotliDecompressSync, constants, gunzipSync, inflateRawSync, inflateSync } from 'node:zlib';

/** Most bytes of an error body read from the wire, and kept after decoding. */
const ERROR_BODY_BYTES = 64 * 1024;
/** Most characters of it shown. */
const ERROR_TEXT_CHARS = 300;

/** Reads at most ERROR_BODY_BYTES of `body`, then drops the rest. */
export async function readErrorBody(body: AsyncIterable<Buffer>, cancel: () => void): Promise<Buffer> {
  const chunks: Buffer[] = [];
  let size = 0;
  try {
    for await (const c of body) {
      chunks.push(c);
      size += c.length;
      if (size >= ERROR_BODY_BYTES) break;
    }
  } catch {
    // a body that breaks off: what came is still worth showing
  } finally {
    cancel();
  }
  return Buffer.concat(chunks).subarray(0, ERROR_BODY_BYTES);
}

/** The message of an error body, or undefined when it holds nothing readable. */
export function errorBodyMessage(raw: Buffer, contentEncoding: string | null): string | undefined {
  if (raw.length === 0) return undefined;
  const bytes = decode(raw, (contentEncoding ?? '').trim().toLowerCase());
  if (!bytes || bytes.length === 0)
    return `(${raw.length} bytes the server sent compressed in a way that does not decode)`;
  const text = bytes.toString('utf8');
  if (!isText(text)) return `(${bytes.length} bytes of binary data)`;
  const message = odataMessage(text) ?? text.trim().replace(/\s+/g, ' ');
  if (!message) return undefined;
  return message.length > ERROR_TEXT_CHARS ? `${message.slice(0, ERROR_TEXT_CHARS)}…` : message;
}

function decode(raw: Buffer, encoding: string): Buffer | undefined {
  const opts = { maxOutputLength: ERROR_BODY_BYTES, finishFlush: constants.Z_SYNC_FLUSH };
  const gz = raw.length >= 2 && raw[0] === 0x1f && raw[1] === 0x8b;
  try {
    if (gz || encoding === 'gzip' || encoding === 'x-gzip') return gunzipSync(raw, opts);
    if (encoding === 'deflate') {
      // "deflate" is zlib-wrapped by the standard and raw by some servers
      // (a zlib stream that decodes past the cap is that, not raw deflate: the same words as gzip's)
      try {
        return inflateSync(raw, opts);
      } catch (err) {
        if (tooLarge(err)) throw err;
        return inflateRawSync(raw, opts);
      }
    }
    if (encoding === 'br')
      return brotliDecompressSync(raw, {
        maxOutputLength: ERROR_BODY_BYTES,
        finishFlush: constants.BROTLI_OPERATION_FLUSH,
      });
    return raw;
  } catch (err) {
    // more than the cap decoded: keep what the cap allowed is not offered by zlib; say so
    if (tooLarge(err)) return Buffer.from('(an error body larger than 64 KiB once decoded)');
    return undefined;
  }
}

/** zlib's word for output past maxOutputLength (gzip, deflate and br alike). */
function tooLarge(err: unknown): boolean {
  return err instanceof RangeError || (err as { code?: string } | null)?.code === 'ERR_BUFFER_TOO_LARGE';
}

/** Text, not bytes: no NUL and few control characters. */
function isText(s: string): boolean {
  if (s.includes('\u0000')) return false;
  const controls = s.match(/[\u0001-\u0008\u000e-\u001f\ufffd]/g)?.length ?? 0;
  return controls <= s.length / 50;
}

/** OData's `{ "error": { "code", "message" } }` (and the plain `{ "message" }` / `{ "error": "…" }` some servers send). */
function odataMessage(text: string): string | undefined {
  let json: unknown;
  try {
    json = JSON.parse(text);
  } catch {
    return undefined; // (not JSON: the body is shown as text)
  }
  if (json === null || typeof json !== 'object') return undefined;
  const o = json as Record<string, unknown>;
  const err = o.error;
  if (err && typeof err === 'object') {
    const e = err as Record<string, unknown>;
    const message =
      typeof e.message === 'string'
        ? e.message
        : typeof (e.message as Record<string, unknown>)?.value === 'string'
          ? String((e.message as Record<string, unknown>).value)
          : undefined;
    // a code that is not the HTTP status again names the vendor's own error
    if (message)
      return typeof e.code === 'string' && /\D/.test(e.code) && !message.includes(e.code)
        ? `${message} (code ${e.code})`
        : message;
  }
  if (typeof err === 'string') return typeof o.error_description === 'string' ? `${err}: ${o.error_description}` : err;
  if (typeof o.message === 'string') return o.message;
  return undefined;
}
