// The route table: method + path -> handler, with the error envelope and auth each route uses.
// The legacy prefix (/api/openai/v1/...) and the SDK-doubled /v1/v1/messages map onto the same routes.
import type { IncomingMessage, ServerResponse } from 'node:http';
import type { KeyRecord } from '../store/types.ts';
import type { Envelope } from './envelope.ts';
import { GatewayError } from '../gateway-error.ts';

export type RouteAuth = 'key' | 'models' | 'admin' | 'none';
/** Who is calling: the key authentication found (null on routes without one) and the peer address. */
export type ClientInfo = { key: KeyRecord | null; ip: string | null };
export type Handler = (req: IncomingMessage, res: ServerResponse, params: RouteParams, client: ClientInfo) => Promise<void>;
export type RouteParams = { path: string; id: string | null; query: URLSearchParams };
export type Route = { method: string; pattern: string; envelope: Envelope; auth: RouteAuth; handler: Handler };

export type RouteTable = { routes: Route[]; match(method: string, rawUrl: string, legacyPrefix: string): RouteMatch };
export type RouteMatch =
  | { kind: 'ok'; route: Route; params: RouteParams }
  | { kind: 'not_found' | 'method_not_allowed'; envelope: Envelope; path: string; allowed?: string[] };

/** `pattern` is an exact path, a path ending in `/:id`, or a prefix ending in `/*`. */
export function createRouteTable(routes: Route[]): RouteTable {
  return {
    routes,
    match(method, target, legacyPrefix) {
      // The absolute form (POST http://host/v1/messages), which HTTP/1.1 servers must take as well: its path routes.
      const authority = ABSOLUTE_FORM.exec(target);
      const rawUrl = authority === null ? target : `/${target.slice(authority[0].length).replace(/^\//, '')}`;
      const q = rawUrl.indexOf('?');
      let path = q < 0 ? rawUrl : rawUrl.slice(0, q);
      const query = new URLSearchParams(q < 0 ? '' : rawUrl.slice(q + 1));
      if (path.length > 1 && path.endsWith('/')) path = path.slice(0, -1);
      if (legacyPrefix && path.startsWith(`${legacyPrefix}/v1/`)) path = path.slice(legacyPrefix.length);
      if (path.startsWith('/v1/v1/')) path = path.slice(3);
      const allowed: string[] = [];
      for (const r of routes) {
        const id = matchPattern(r.pattern, path);
        if (id === undefined) continue;
        // HEAD is GET without the body (Node leaves the body out): health checks and monitors send it.
        if (r.method !== method && !(method === 'HEAD' && r.method === 'GET')) { if (!allowed.includes(r.method)) allowed.push(r.method); continue; }
        return { kind: 'ok', route: r, params: { path, id, query } };
      }
      const envelope: Envelope = path.startsWith('/v1/messages') ? 'anthropic' : 'openai';
      return allowed.length > 0 ? { kind: 'method_not_allowed', envelope, path, allowed } : { kind: 'not_found', envelope, path };
    },
  };
}

/** The scheme and authority of an absolute-form request target. */
const ABSOLUTE_FORM = /^https?:\/\/[^/?#]*/i;

function matchPattern(pattern: string, path: string): string | null | undefined {
  if (pattern.endsWith('/:id')) {
    const base = pattern.slice(0, -4);
    if (!path.startsWith(`${base}/`)) return undefined;
    const id = decodePathSegment(path.slice(base.length + 1));
    return id.length > 0 ? id : undefined;
  }
  if (pattern.endsWith('/*')) {
    const base = pattern.slice(0, -2);
    return path.startsWith(`${base}/`) && path.length > base.length + 1 ? path.slice(base.length + 1) : undefined;
  }
  return pattern === path ? null : undefined;
}

/** Percent-decodes a path segment; malformed escapes are a 400, never an exception out of routing. */
export function decodePathSegment(s: string): string {
  try { return decodeURIComponent(s); } catch {
    throw new GatewayError('invalid_parameter', `malformed percent-encoding in the path: ${s.slice(0, 100)}`);
  }
}
