// Builds the upstream request for one target: URL from config only (never from the client), the
// provider's declared headers and auth (the client's Authorization is never forwarded).
import type { ModelEntry, Provider } from '../config/types.ts';
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
    const add = TRANSFORMS[a.transform]!({ method: 'POST', url: p.origin + path, headers, body }, a.options);
    Object.assign(headers, add);
  }
  return { origin: p.origin, path, headers, body };
}
