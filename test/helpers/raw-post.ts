// POST to the emulator by hand (no client): to see exactly what goes over the wire.
export interface RawAnswer {
  status: number;
  headers: Headers;
  body: any;
}

export async function rawPost(url: string, body: unknown, headers: Record<string, string> = {}, method = 'POST'): Promise<RawAnswer> {
  const res = await fetch(url, {
    method,
    headers: { 'content-type': 'application/json', ...headers },
    body: method === 'GET' ? undefined : typeof body === 'string' ? body : JSON.stringify(body),
  });
  const text = await res.text();
  let parsed: unknown = text;
  try {
    parsed = JSON.parse(text);
  } catch {
    // not JSON: the test looks at the text
  }
  return { status: res.status, headers: res.headers, body: parsed };
}
