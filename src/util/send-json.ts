// Writes one complete JSON answer (status, content type and length, extra headers). Shared by the
// HTTP layer and the engine, which relays upstream answers without importing src/http/.
import type { ServerResponse } from 'node:http';

/** `body` is sent as is when it is already JSON text, else serialised. */
export function sendJson(res: ServerResponse, status: number, body: unknown, headers: Record<string, string> = {}): void {
  const text = typeof body === 'string' ? body : JSON.stringify(body);
  res.writeHead(status, { 'content-type': 'application/json', 'content-length': Buffer.byteLength(text), ...headers });
  res.end(text);
}
