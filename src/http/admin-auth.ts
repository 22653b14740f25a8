// The one admin-key check of every admin surface (/admin/keys and the dashboard's /admin/api): the
// constant-time compare and the per-address limit on failed attempts (src/auth/admin-key.ts), with
// one attempt counter per gateway, so no route offers a way around either.
import type { IncomingMessage } from 'node:http';
import { AdminAttempts, adminKeyMatches } from '../auth/admin-key.ts';
import { GatewayError } from '../gateway-error.ts';
import type { Services } from './services.ts';

const attemptsOf = new WeakMap<Services, AdminAttempts>();

/**
 * True when `presented` is the configured admin key. Throws rate_limited (429, retry-after) while the
 * caller's address is blocked, right key or not; a wrong key counts as a failed attempt.
 */
export function verifyAdminKey(svc: Services, req: IncomingMessage, presented: string | undefined): boolean {
  let attempts = attemptsOf.get(svc);
  if (!attempts) { attempts = new AdminAttempts(); attemptsOf.set(svc, attempts); }
  const address = req.socket.remoteAddress ?? 'unknown';
  const wait = attempts.blockedFor(address);
  if (wait > 0) {
    throw new GatewayError('rate_limited', `too many failed admin key attempts from this address; retry after ${wait} s`, { headers: { 'retry-after': String(wait) } });
  }
  if (adminKeyMatches(presented, svc.holder.current.auth.adminKey)) return true;
  attempts.failed(address);
  return false;
}
