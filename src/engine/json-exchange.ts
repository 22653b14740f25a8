// One JSON request to a provider outside the attempt flow (count_tokens, /v1/responses/compact): the
// provider's declared client headers go along, signing credentials are awaited off the event loop,
// and the answer is collected whole within the engine's bounds (UPSTREAM_LIMITS): an error body is
// kept to its first 64 KiB, an answer past the JSON limit is an error, never unbounded memory.
import type { IncomingHttpHeaders } from 'node:http';
import type { ModelEntry, UpstreamSettings } from '../config/types.ts';
import { GatewayError } from '../gateway-error.ts';
import { UPSTREAM_LIMITS } from './limits.ts';
import { exchange, type ResponseHeaders } from './transport.ts';
import { buildRequest, upstreamReady } from './upstream.ts';

export type JsonExchange = { status: number; headers: ResponseHeaders; text: string } | { error: Error };

/** The client's headers that the provider declares in forward_headers, joined as one value each. */
export function forwardedHeaders(entry: ModelEntry, clientHeaders: IncomingHttpHeaders): Record<string, string> {
  const out: Record<string, string> = {};
  for (const h of entry.provider.forwardHeaders) {
    const v = clientHeaders[h];
    if (v !== undefined) out[h] = Array.isArray(v) ? v.join(',') : v;
  }
  return out;
}

/** POSTs `body` to `path` (relative to the provider's base) and resolves with the whole answer or the failure. */
export async function exchangeJson(entry: ModelEntry, path: string, body: unknown, clientHeaders: IncomingHttpHeaders, signal: AbortSignal, settings: UpstreamSettings): Promise<JsonExchange> {
  const wait = upstreamReady(entry.provider);
  if (wait !== null) { try { await wait; } catch (e) { return { error: e as Error }; } }
  const built = buildRequest(entry.provider, entry, path, JSON.stringify(body), forwardedHeaders(entry, clientHeaders));
  return new Promise((resolve) => {
    const chunks: Buffer[] = [];
    let bytes = 0;
    let limit: number = UPSTREAM_LIMITS.jsonBodyBytes;
    let status = 0;
    let headers: ResponseHeaders = {};
    exchange({ ...built, method: 'POST', signal, settings, firstByteTimeoutMs: settings.firstByteTimeoutMs }, {
      start: (s, h) => { status = s; headers = h; if (s >= 400) limit = UPSTREAM_LIMITS.errorBodyBytes; },
      data: (c) => {
        if (bytes + c.length <= limit) { chunks.push(c); bytes += c.length; return; }
        if (status < 400) throw new GatewayError('upstream_error', `${entry.provider.name} sent an answer larger than ${limit} bytes`);
        if (bytes < limit) { chunks.push(c.subarray(0, limit - bytes)); bytes = limit; }
      },
      end: () => resolve({ status, headers, text: Buffer.concat(chunks).toString('utf8') }),
      error: (e) => resolve({ error: e }),
    });
  });
}
