// Builds the upstream request for one target: URL from config only (never from the client), the
// provider's declared headers and auth (the client's Authorization is never forwarded).
import type { ModelEntry, Provider } from '../config/types.ts';
import type { ClientFormat } from '../formats/codec.ts';
import { relayCodecFor } from '../formats/registry.ts';
import { TRANSFORMS } from '../transforms/index.ts';

export type BuiltRequest = { origin: string; path: string; headers: Record<string, string>; body: string | Buffer };

/** `{model}` in a path template becomes the URL-encoded upstream model name. */
export function fillPath(template: string, upstreamModel: string): string {
  return template.includes('{model}') ? template.replaceAll('{model}', encodeURIComponent(upstreamModel)) : template;
}

function withQuery(path: string, extra: string): string {
  if (!extra) return path;
  return path + (path.includes('?') ? '&' : '?') + extra;
}

/** At most this many dropped query parameters are named in x-gateway-adjustments (the rest are counted). */
const MAX_DROPPED_NAMED = 8;

/**
 * The client's query parameters (`clientQuery`, the raw text after `?`) that go to `p`: those its
 * forward_query declares, on pass-through (the client speaks the provider's own format, so the
 * parameter means the same upstream) or from a client format its `from` names. Every other one is
 * returned in `dropped` as an adjustment (`?name=dropped`, the name percent-encoded: client text).
 */
export function relayedQuery(p: Provider, client: ClientFormat, clientQuery: string): { query: string; dropped: string[] } {
  const params = new URLSearchParams(clientQuery);
  const out = new URLSearchParams();
  const dropped: string[] = [];
  let unnamed = 0;
  let passthrough: boolean | null = null;
  for (const name of new Set(params.keys())) {
    const rule = p.forwardQuery.find((f) => f.name === name);
    if (rule && (rule.from.includes(client) || (passthrough ??= relayCodecFor(p, client) !== undefined))) {
      for (const v of params.getAll(name)) out.append(name, v);
    } else if (dropped.length < MAX_DROPPED_NAMED) dropped.push(`?${encodeURIComponent(name.slice(0, 64))}=dropped`);
    else unnamed++;
  }
  if (unnamed > 0) dropped.push(`?(${unnamed} more)=dropped`);
  return { query: out.toString(), dropped };
}

/** `path` with `query` (already encoded) appended. */
export const withRelayedQuery = (path: string, query: string): string => (query === '' ? path : `${path}${path.includes('?') ? '&' : '?'}${query}`);

/** `relPath` is relative to the provider's base URL and may carry its own query. */
export function buildRequest(p: Provider, entry: ModelEntry, relPath: string, body: string | Buffer, extraHeaders?: Record<string, string>): BuiltRequest {
  let query = p.query;
  const headers: Record<string, string> = { 'content-type': 'application/json', accept: 'application/json, text/event-stream', ...p.headers, ...extraHeaders };
  const a = p.auth;
  if (p.apiKey) {
    if (a.type === 'bearer') headers.authorization = `Bearer ${p.apiKey}`;
    else if (a.type === 'header') headers[a.name.toLowerCase()] = `${a.prefix}${p.apiKey}`;
    else if (a.type === 'query') query = query ? `${query}&${a.name}=${encodeURIComponent(p.apiKey)}` : `${a.name}=${encodeURIComponent(p.apiKey)}`;
  }
  const path = withQuery(p.basePath + fillPath(relPath, entry.upstream), query);
  if (a.type === 'transform') {
    const add = TRANSFORMS[a.transform]!.apply({ method: 'POST', url: p.origin + path, headers, body }, a.options);
    Object.assign(headers, add);
  }
  return { origin: p.origin, path, headers, body };
}

/**
 * null when a request to `p` can be built now: every provider but one whose auth transform still
 * loads what it signs with (AWS credentials on a cold start, or expired). Else a promise to await
 * before buildRequest, rejecting with a GatewayError when that cannot be had. One field read for
 * providers without a transform.
 */
export function upstreamReady(p: Provider): Promise<void> | null {
  const a = p.auth;
  return a.type === 'transform' ? TRANSFORMS[a.transform]!.ready?.(a.options) ?? null : null;
}

/** Starts loading what the providers' auth transforms need, in the background (at start and after each reload). */
export function warmUpstreams(providers: Iterable<Provider>): void {
  for (const p of providers) {
    const a = p.auth;
    if (a.type === 'transform') TRANSFORMS[a.transform]!.warm?.(a.options);
  }
}
