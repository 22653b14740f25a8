// Sign-in, the current session and sign-out, and a user's own password change.
import { GatewayError, invalidParam } from '../../gateway-error.ts';
import { passwordProblem } from '../../dashboard/passwords.ts';
import type { SessionView, SignedOut, UserView } from '../../dashboard/ui/api-types.ts';
import { normalEmail } from '../../dashboard/users.ts';
import { parseJsonObject, readBody } from '../body.ts';
import type { Services } from '../services.ts';
import { refuseNul } from './params.ts';
import { assertSameOrigin, authenticateCaller, clearCookies, clientIp, COOKIE, readCookie, SECURE_COOKIE, sendApiJson, sessionCookie, type Caller } from './context.ts';
import type { ApiCall, ApiRoute } from './router.ts';

/** An admin API call's body (labelled JSON: router.ts checks it), bounded by server.body_limit_bytes and 1 MiB. */
export function apiBody(c: ApiCall): Promise<Buffer> {
  return readBody(c.req, Math.min(c.svc.holder.current.server.bodyLimitBytes, 1024 * 1024));
}

/** The body as a JSON object, no text in it holding a NUL (params.ts, refuseNul). */
export async function jsonBody(c: ApiCall): Promise<Record<string, unknown>> {
  const body = parseJsonObject(await apiBody(c), c.svc.holder.current.server.jsonMaxDepth) as Record<string, unknown>;
  refuseNul(body);
  return body;
}

/** A body that may be left out (no bytes, or only whitespace: `{}`); one that is sent must be a JSON object. */
export async function optionalJsonBody(c: ApiCall): Promise<Record<string, unknown>> {
  const buf = await apiBody(c);
  if (buf.toString('utf8').trim() === '') return {};
  const body = parseJsonObject(buf, c.svc.holder.current.server.jsonMaxDepth) as Record<string, unknown>;
  refuseNul(body);
  return body;
}

function sessionView(svc: Services, caller: Caller): SessionView {
  const cfg = svc.holder.current;
  return {
    signed_in: true, user: caller.user, csrf_token: caller.via === 'session' ? caller.session.csrf : '', via: caller.via,
    settings: {
      log_bodies: cfg.storage.logBodies, retention_days: cfg.dashboard.retention.recordsDays, body_retention_days: cfg.dashboard.retention.bodiesDays,
      storage: svc.store?.kind ?? 'none',
    },
  };
}

export function sessionApi(): ApiRoute[] {
  return [
    {
      method: 'POST', path: '/session', who: 'public',
      handler: async (c) => {
        assertSameOrigin(c.svc, c.req);
        const body = await jsonBody(c);
        const email = typeof body.email === 'string' ? body.email : '';
        const password = typeof body.password === 'string' ? body.password : '';
        if (email === '' || password === '') throw invalidParam(email === '' ? 'email' : 'password', 'email and password are required');
        const ip = clientIp(c.svc, c.req);
        const user = await limitedCheck(c, email, ip, normalEmailOrRaw(email), password);
        if (!user) throw new GatewayError('invalid_credentials', 'wrong email or password');
        const ua = c.req.headers['user-agent'];
        const { token, session } = await c.d.sessions.create(user.id, ip, typeof ua === 'string' ? ua : null);
        const maxAge = Math.floor(c.d.sessions.limits.absoluteMs / 1000);
        sendApiJson(c.res, 200, sessionView(c.svc, { via: 'session', user, session, token }), { 'set-cookie': sessionCookie(c.svc, c.req, token, maxAge) });
      },
    },
    {
      // Public: a visitor with no session (or one that ended) is a normal state, answered 200 signed out
      // rather than 401, which browsers log as an error on every first visit. A session cookie that finds
      // no session is cleared; a wrong admin key is still 401 (a script's mistake to report).
      method: 'GET', path: '/session', who: 'public',
      handler: async (c) => {
        let caller: Caller;
        try { caller = await authenticateCaller(c.svc, c.req); } catch (e) {
          if (!(e instanceof GatewayError && e.code === 'session_required')) throw e;
          const stale = readCookie(c.req, SECURE_COOKIE) !== undefined || readCookie(c.req, COOKIE) !== undefined;
          const out: SignedOut = { signed_in: false, user: null };
          sendApiJson(c.res, 200, out, stale ? { 'set-cookie': clearCookies() } : {});
          return;
        }
        sendApiJson(c.res, 200, sessionView(c.svc, caller));
      },
    },
    {
      method: 'DELETE', path: '/session', who: 'any',
      handler: async (c) => {
        if (c.caller.via === 'session') await c.d.sessions.revoke(c.caller.token);
        sendApiJson(c.res, 200, { signed_out: true }, { 'set-cookie': clearCookies() });
      },
    },
    {
      method: 'POST', path: '/session/password', who: 'any',
      handler: async (c) => {
        if (c.caller.via !== 'session') throw new GatewayError('forbidden', 'the admin key has no password');
        const body = await jsonBody(c);
        const current = typeof body.current_password === 'string' ? body.current_password : '';
        const next = typeof body.new_password === 'string' ? body.new_password : '';
        const problem = passwordProblem(next);
        if (problem) throw invalidParam('new_password', problem);
        // Under the sign-in limits: a session (stolen, or a browser left open) must not guess the password freely.
        const email = c.caller.user.email;
        if (!(await limitedCheck(c, email, clientIp(c.svc, c.req), email, current))) throw new GatewayError('invalid_credentials', 'the current password is wrong', { param: 'current_password' });
        await c.d.users.setPassword(c.caller.user.id, next);
        await c.d.sessions.revokeUser(c.caller.user.id, c.caller.session.id);
        sendApiJson(c.res, 200, { changed: true });
      },
    },
  ];
}

/**
 * The user whose `password` this is, or null, checked under the sign-in limits of `limitEmail` and
 * `ip`: counted before the password is checked (every replica shares the count: login-limiter.ts),
 * refused with too_many_attempts past them, the attempt taken back when the password is right.
 */
async function limitedCheck(c: ApiCall, limitEmail: string, ip: string, email: string, password: string): Promise<UserView | null> {
  const wait = await c.d.logins.attempt(limitEmail, ip);
  if (wait > 0) throw new GatewayError('too_many_attempts', `too many failed sign-ins: try again in ${wait} s`, { headers: { 'retry-after': String(wait) } });
  const user = await c.d.users.authenticate(email, password);
  if (user) await c.d.logins.succeeded(limitEmail, ip);
  return user;
}

/** Sign-in compares lower-cased emails; a malformed one simply fails like a wrong password. */
function normalEmailOrRaw(email: string): string {
  try { return normalEmail(email); } catch { return email; }
}
