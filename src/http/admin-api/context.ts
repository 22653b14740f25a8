// Who is calling the admin API and what they may see: a dashboard session (cookie; changes need the
// session's CSRF token and a same-origin request) or the admin key (Bearer, for scripts). Also the
// cookie, security headers and client address rules shared by the admin API and the dashboard pages.
import type { IncomingMessage, ServerResponse } from 'node:http';
import { presentedKeyFromHeaders } from '../../auth/keys.ts';
import { verifyAdminKey } from '../admin-auth.ts';
import { GatewayError } from '../../gateway-error.ts';
import type { Access } from '../../dashboard/access.ts';
import type { DashboardServices } from '../../dashboard/services.ts';
import { Sessions, type Session } from '../../dashboard/sessions.ts';
import type { UserView } from '../../dashboard/ui/api-types.ts';
import type { Services } from '../services.ts';

export type Caller =
  | { via: 'session'; user: UserView; session: Session; token: string }
  | { via: 'admin_key'; user: UserView };

/** The admin key acts as an admin user without an account. */
export const ADMIN_KEY_USER: UserView = {
  id: 'admin-key', email: 'admin-key', name: 'Admin key', role: 'admin', created_at: '1970-01-01T00:00:00.000Z',
  password_changed_at: '1970-01-01T00:00:00.000Z', disabled_at: null,
};

export const COOKIE = 'gw_session';
/** With Secure, the __Host- prefix also pins the cookie to this host and path /. */
export const SECURE_COOKIE = '__Host-gw_session';

export function dashboardOf(svc: Services): DashboardServices {
  if (!svc.dashboard) throw new GatewayError('not_implemented', 'the dashboard is disabled (dashboard.enabled: false) or storage is not configured');
  return svc.dashboard;
}

/** TLS here, or (with dashboard.trust_proxy) a proxy that says it terminated TLS. */
export function isSecure(svc: Services, req: IncomingMessage): boolean {
  if ((req.socket as { encrypted?: boolean }).encrypted) return true;
  return svc.holder.current.dashboard.trustProxy > 0 && String(req.headers['x-forwarded-proto'] ?? '').split(',')[0]!.trim() === 'https';
}

/**
 * The client's address (the sign-in limits count per address). Behind `trust_proxy: N` proxies it is
 * the N-th X-Forwarded-For entry from the right: each proxy appends the address it saw, so the entries
 * left of those are the client's to write. Before 2026-11-29 the leftmost was taken, and a client could
 * send a new address with every guess to dodge the per-address limit.
 */
export function clientIp(svc: Services, req: IncomingMessage): string {
  const hops = svc.holder.current.dashboard.trustProxy;
  if (hops > 0) {
    const seen = String(req.headers['x-forwarded-for'] ?? '').split(',').map((x) => x.trim()).filter((x) => x !== '');
    const f = seen.length === 0 ? '' : seen[Math.max(0, seen.length - hops)]!;
    if (f) return f.slice(0, 64);
  }
  return req.socket.remoteAddress ?? 'unknown';
}

export function readCookie(req: IncomingMessage, name: string): string | undefined {
  const raw = req.headers.cookie;
  if (!raw) return undefined;
  for (const part of raw.split(';')) {
    const eq = part.indexOf('=');
    if (eq > 0 && part.slice(0, eq).trim() === name) return part.slice(eq + 1).trim();
  }
  return undefined;
}

export function sessionCookie(svc: Services, req: IncomingMessage, token: string, maxAgeS: number): string {
  const secure = isSecure(svc, req);
  return `${secure ? SECURE_COOKIE : COOKIE}=${token}; Path=/; HttpOnly; SameSite=Strict; Max-Age=${maxAgeS}${secure ? '; Secure' : ''}`;
}

export const clearCookies = (): string[] => [
  `${COOKIE}=; Path=/; HttpOnly; SameSite=Strict; Max-Age=0`, `${SECURE_COOKIE}=; Path=/; HttpOnly; SameSite=Strict; Max-Age=0; Secure`,
];

/** A change must come from this origin: the Origin header, when a browser sends one, names this host. */
export function assertSameOrigin(svc: Services, req: IncomingMessage): void {
  const origin = req.headers.origin;
  if (origin === undefined) return;
  const host = req.headers.host;
  const expected = `${isSecure(svc, req) ? 'https' : 'http'}://${host}`;
  if (origin !== expected) throw new GatewayError('csrf_failed', 'cross-origin request refused');
}

const CHANGES = new Set(['POST', 'PATCH', 'PUT', 'DELETE']);

/** The caller, or session_required. A session's changes need its CSRF token and the same origin. */
export async function authenticateCaller(svc: Services, req: IncomingMessage): Promise<Caller> {
  const d = dashboardOf(svc);
  const adminKey = svc.holder.current.auth.adminKey;
  const bearer = presentedKeyFromHeaders(req.headers);
  if (bearer !== undefined) {
    // The same check as /admin/keys: constant time whatever the lengths, failed attempts limited per address.
    if (adminKey && verifyAdminKey(svc, req, bearer)) return { via: 'admin_key', user: ADMIN_KEY_USER };
    throw new GatewayError('invalid_api_key', 'invalid admin key');
  }
  const token = readCookie(req, SECURE_COOKIE) ?? readCookie(req, COOKIE);
  const found = token ? await d.sessions.lookup(token) : null;
  if (!found || !token) throw new GatewayError('session_required', 'sign in to the dashboard (or send the admin key as a Bearer token)');
  if (CHANGES.has(req.method ?? 'GET')) {
    assertSameOrigin(svc, req);
    const presented = req.headers['x-csrf-token'];
    if (!Sessions.csrfMatches(found.session, typeof presented === 'string' ? presented : undefined)) {
      throw new GatewayError('csrf_failed', 'missing or wrong x-csrf-token header: reload the page');
    }
  }
  return { via: 'session', user: found.user, session: found.session, token };
}

/** What the caller's queries are limited to (members: the keys they own). */
export async function accessOf(d: DashboardServices, c: Caller): Promise<Access> {
  if (c.user.role === 'admin') return { role: 'admin', userId: c.via === 'session' ? c.user.id : null };
  return { role: 'member', userId: c.user.id, keyIds: await d.users.keysOf(c.user.id) };
}

export function requireAdmin(c: Caller): void {
  if (c.user.role !== 'admin') throw new GatewayError('forbidden', 'only admins may do this');
}

/** Headers on every dashboard and admin API response. The CSP allows this origin's scripts and styles only. */
export const SECURITY_HEADERS: Record<string, string> = {
  'content-security-policy': "default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self' data:; connect-src 'self'; font-src 'self'; base-uri 'none'; form-action 'self'; frame-ancestors 'none'",
  'x-content-type-options': 'nosniff',
  'referrer-policy': 'no-referrer',
  'x-frame-options': 'DENY',
  'cross-origin-opener-policy': 'same-origin',
  'cross-origin-resource-policy': 'same-origin',
};

export function sendApiJson(res: ServerResponse, status: number, body: unknown, headers: Record<string, string | string[]> = {}): void {
  const text = JSON.stringify(body);
  res.writeHead(status, {
    ...SECURITY_HEADERS, 'content-type': 'application/json; charset=utf-8', 'content-length': Buffer.byteLength(text), 'cache-control': 'no-store', ...headers,
  });
  res.end(text);
}
