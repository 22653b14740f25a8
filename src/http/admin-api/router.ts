// The admin API's own route table under /admin/api/v1 (one gateway route per method hands over the
// whole prefix): each entry names its method, path (`:id` segments), whether only admins may call it,
// and a handler given the authenticated caller and what it may see. A database that cannot be reached
// is a 503 with retry-after on every route (the error path would make it a 500), and so is one that
// stops answering: a call that has not begun its answer after dashboard.answer_timeout_ms.
import type { IncomingMessage, ServerResponse } from 'node:http';
import type { Access } from '../../dashboard/access.ts';
import type { DashboardServices } from '../../dashboard/services.ts';
import { GatewayError } from '../../gateway-error.ts';
import { classifyStoreError } from '../../store/errors.ts';
import type { Route, RouteParams } from '../routes.ts';
import type { Services } from '../services.ts';
import { accessOf, authenticateCaller, dashboardOf, requireAdmin, SECURITY_HEADERS, type Caller } from './context.ts';
import { sendError } from '../envelope.ts';
import { requireJsonLabel } from '../body.ts';
import { refuseNul } from './params.ts';
import { keysApi } from './keys-routes.ts';
import { modelsApi } from './models-routes.ts';
import { requestsApi } from './requests-routes.ts';
import { routerApi } from './router-routes.ts';
import { sessionApi } from './session-routes.ts';
import { usageApi } from './usage-routes.ts';
import { usersApi } from './users-routes.ts';

export type ApiCall = {
  svc: Services; d: DashboardServices; req: IncomingMessage; res: ServerResponse; query: URLSearchParams;
  ids: string[]; caller: Caller; access: Access;
};

export type ApiRoute = {
  method: 'GET' | 'POST' | 'PATCH' | 'DELETE'; path: string;
  /** public: no caller needed (login); admin: admins only; any: every signed-in user (scoped by Access). */
  who: 'public' | 'admin' | 'any';
  handler: (c: ApiCall) => Promise<void>;
};

export const API_PREFIX = '/admin/api/v1';

export function apiRoutes(): ApiRoute[] {
  return [...sessionApi(), ...usersApi(), ...keysApi(), ...usageApi(), ...requestsApi(), ...modelsApi(), ...routerApi()];
}

/** The captured `:id` segments when `path` matches `pattern`, else null. */
export function matchApiPath(pattern: string, path: string): string[] | null {
  const p = pattern.split('/');
  const s = path.split('/');
  if (p.length !== s.length) return null;
  const ids: string[] = [];
  for (let i = 0; i < p.length; i++) {
    if (p[i]!.startsWith(':')) {
      if (s[i] === '') return null;
      try { ids.push(decodeURIComponent(s[i]!)); } catch { return null; }
    } else if (p[i] !== s[i]) return null;
  }
  return ids;
}

/**
 * `work`'s outcome, or storage_unavailable when it has not begun its answer within `ms`. A pooled
 * PostgreSQL connection whose server stopped answering (a partition, a lock held) waits with no end;
 * a stream that has begun (the tail, an export) runs on. The late handler's own answer then fails at
 * its writeHead (headers sent) and is dropped here.
 */
function answeredInTime(work: Promise<void>, res: ServerResponse, ms: number): Promise<void> {
  return new Promise((resolve, reject) => {
    const timer = setTimeout(() => {
      if (res.headersSent) return;
      res.on('error', () => {}); // nothing the late handler writes may reach the process as an error
      reject(new GatewayError('storage_unavailable', `the gateway's database did not answer within ${ms / 1000} s; retry later (a change asked for may still be applied)`, { headers: { 'retry-after': '1' } }));
    }, ms);
    work.then((v) => { clearTimeout(timer); resolve(v); }, (e: unknown) => { clearTimeout(timer); reject(e); });
  });
}

/** Gateway routes (one per method) for everything under /admin/api/. */
export function adminApiRoutes(svc: Services): Route[] {
  const table = apiRoutes();
  const dispatch = async (req: IncomingMessage, res: ServerResponse, params: RouteParams): Promise<void> => {
    try { await answeredInTime(route(req, res, params), res, svc.holder.current.dashboard.answerTimeoutMs); } catch (e) {
      // The database unreachable (PostgreSQL down, SQLite's disk full...): a 503 the caller may retry, not a 500.
      const err = !(e instanceof GatewayError) && classifyStoreError(e) === 'unavailable'
        ? new GatewayError('storage_unavailable', `the gateway's database is unavailable (${(e as Error).message}); retry later`, { headers: { 'retry-after': '1' } })
        : e;
      req.resume();
      // With the headers every answer of the API carries: an error page is framed or sniffed like any other.
      sendError(res, err, 'openai', { ...SECURITY_HEADERS, 'cache-control': 'no-store' });
    }
  };
  const route = async (req: IncomingMessage, res: ServerResponse, params: RouteParams): Promise<void> => {
    const d = dashboardOf(svc);
    const allowed: string[] = [];
    for (const r of table) {
      const ids = matchApiPath(`${API_PREFIX}${r.path}`, params.path);
      if (!ids) continue;
      if (r.method !== req.method) { allowed.push(r.method); continue; }
      for (const [name, v] of params.query) refuseNul(v, name);
      for (const id of ids) refuseNul(id, 'id');
      if (r.who === 'public') {
        requireJsonLabel(req);
        await r.handler({ svc, d, req, res, query: params.query, ids, caller: null as never, access: null as never });
        return;
      }
      const caller = await authenticateCaller(svc, req);
      if (r.who === 'admin') requireAdmin(caller);
      // After who is calling and the CSRF checks: a body on any change must be labelled JSON (415).
      requireJsonLabel(req);
      await r.handler({ svc, d, req, res, query: params.query, ids, caller, access: await accessOf(d, caller) });
      return;
    }
    if (allowed.length) {
      throw new GatewayError('method_not_allowed', `${req.method} is not allowed on ${params.path}; use ${allowed.join(' or ')}`, { headers: { allow: allowed.join(', ') } });
    }
    throw new GatewayError('route_not_found', `no admin API route ${req.method} ${params.path}`);
  };
  // Every method the API's table may be asked with: its own 405 names the methods of the path asked (the server's table would name every method some API route has).
  return (['GET', 'POST', 'PATCH', 'DELETE', 'PUT', 'OPTIONS'] as const).map((method): Route => ({
    method, pattern: '/admin/api/*', envelope: 'openai', auth: 'none', handler: (req, res, p) => dispatch(req, res, p),
  }));
}
