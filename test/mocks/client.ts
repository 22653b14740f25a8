// Small raw-HTTP helpers for the mock tests: JSON calls and SSE parsing without any SDK, so the
// mocks' wire output is checked byte for byte as a gateway would see it.

export interface RawResponse {
  status: number;
  headers: Headers;
  text: string;
  /** The body parsed as JSON, or undefined when it is not JSON. */
  json: unknown;
}

export async function call(
  url: string,
  body: unknown,
  headers: Record<string, string> = {},
  method = 'POST',
): Promise<RawResponse> {
  const res = await fetch(url, {
    method,
    headers: { 'content-type': 'application/json', ...headers },
    body: method === 'GET' ? undefined : JSON.stringify(body),
  });
  const text = await res.text();
  let json: unknown;
  try {
    json = JSON.parse(text) as unknown;
  } catch {
    json = undefined;
  }
  return { status: res.status, headers: res.headers, text, json };
}

export interface SseEvent {
  event?: string;
  data: string;
}

/** Splits an SSE body into events (blank-line separated; `event:` and `data:` fields). */
export function parseSse(text: string): SseEvent[] {
  const out: SseEvent[] = [];
  for (const block of text.split(/\r?\n\r?\n/)) {
    if (block.trim() === '') continue;
    const ev: SseEvent = { data: '' };
    const data: string[] = [];
    for (const line of block.split(/\r?\n/)) {
      if (line.startsWith('event:')) ev.event = line.slice(6).trim();
      else if (line.startsWith('data:')) data.push(line.slice(5).replace(/^ /, ''));
    }
    ev.data = data.join('\n');
    out.push(ev);
  }
  return out;
}

/** The JSON payloads of an SSE body, skipping non-JSON data such as `[DONE]`. */
export function sseJson(text: string): Record<string, unknown>[] {
  const out: Record<string, unknown>[] = [];
  for (const ev of parseSse(text)) {
    try {
      out.push(JSON.parse(ev.data) as Record<string, unknown>);
    } catch {
      // [DONE] and injected garbage are not JSON.
    }
  }
  return out;
}

/** Reads a response body to the end, resolving with what arrived and whether it broke off. */
export async function readAll(res: Response): Promise<{ text: string; bytes: Buffer; broken: boolean }> {
  const chunks: Uint8Array[] = [];
  let broken = false;
  try {
    for await (const c of res.body ?? []) chunks.push(c as Uint8Array);
  } catch {
    broken = true;
  }
  const bytes = Buffer.concat(chunks);
  return { text: bytes.toString('utf8'), bytes, broken };
}
