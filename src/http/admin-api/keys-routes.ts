// API keys in the admin API: list with stats, one key, create (secret shown once), edit, rotate, revoke.
// Members reach only their own keys and may set only a key's name and expiry: limits are the admins'.
import { GatewayError, invalidParam } from '../../gateway-error.ts';
import { rotationGraceMs, type CreateKeyInput, type KeyPatch } from '../../auth/admin.ts';
import type { UserView } from '../../dashboard/ui/api-types.ts';
import { sendApiJson } from './context.ts';
import { int, single } from './params.ts';
import type { ApiCall, ApiRoute } from './router.ts';
import { jsonBody, optionalJsonBody } from './session-routes.ts';

const MEMBER_FIELDS = new Set(['name', 'expires_at']);
/** The most keys one page of GET /keys?limit= answers. */
const MAX_KEY_PAGE = 1000;

function memberMay(c: ApiCall, body: Record<string, unknown>): void {
  if (c.caller.user.role === 'admin') return;
  const extra = Object.keys(body).filter((k) => !MEMBER_FIELDS.has(k) && body[k] !== undefined);
  if (extra.length) throw new GatewayError('forbidden', `members may set only name and expires_at; ask an admin for ${extra.join(', ')}`, { param: extra[0]! });
}

async function context(c: ApiCall): Promise<{ users: Map<string, UserView>; owners: Map<string, string> }> {
  const users = new Map((await c.d.users.list()).map((u) => [u.id, u]));
  return { users, owners: await c.d.users.owners() };
}

async function ownerFor(c: ApiCall, body: Record<string, unknown>): Promise<string | null> {
  if (c.caller.user.role !== 'admin') return c.caller.user.id;
  const o = body.owner_id;
  if (o === undefined || o === null || o === '') return null;
  if (typeof o !== 'string' || !(await c.d.users.get(o))) throw invalidParam('owner_id', 'owner_id names no user');
  return o;
}

export function keysApi(): ApiRoute[] {
  return [
    {
      method: 'GET', path: '/keys', who: 'any',
      handler: async (c) => {
        // Without limit every key (as before pages existed); with it a page and next_cursor (the dashboard's 100).
        const limit = int(c.query, 'limit', 1, MAX_KEY_PAGE, 0);
        const cursor = single(c.query, 'cursor');
        if (cursor && !limit) throw invalidParam('cursor', 'cursor needs limit');
        const x = await context(c);
        const page = await c.d.keys.list(c.access, x.users, x.owners, Date.now(), limit ? { limit, after: cursor || null } : undefined);
        sendApiJson(c.res, 200, { data: page.data, next_cursor: page.next });
      },
    },
    {
      method: 'GET', path: '/keys/:id', who: 'any',
      handler: async (c) => { const x = await context(c); sendApiJson(c.res, 200, await c.d.keys.get(c.ids[0]!, c.access, x.users, x.owners)); },
    },
    {
      method: 'POST', path: '/keys', who: 'any',
      handler: async (c) => {
        const body = await jsonBody(c);
        memberMay(c, body);
        const { owner_id: _owner, ...input } = body;
        const owner = await ownerFor(c, body);
        if (!c.svc.admin) throw new GatewayError('not_implemented', 'key management needs storage');
        const created = await c.svc.admin.createKey(input as CreateKeyInput);
        if (owner !== null) await c.d.users.setKeyOwner(created.record.id, owner);
        await c.d.refreshKeyNames();
        const x = await context(c);
        const access = c.access.role === 'member' ? { ...c.access, keyIds: [...c.access.keyIds, created.record.id] } : c.access;
        sendApiJson(c.res, 201, { key: created.key, record: await c.d.keys.get(created.record.id, access, x.users, x.owners) });
      },
    },
    {
      method: 'PATCH', path: '/keys/:id', who: 'any',
      handler: async (c) => {
        const body = await jsonBody(c);
        memberMay(c, body);
        const { owner_id: _owner, ...patch } = body;
        // The owner is checked before anything is written: a refused edit leaves the key as it was.
        const owner = c.caller.user.role === 'admin' && 'owner_id' in body ? await ownerFor(c, body) : undefined;
        await c.d.keys.update(c.ids[0]!, patch as KeyPatch, c.access);
        if (owner !== undefined) await c.d.users.setKeyOwner(c.ids[0]!, owner);
        const x = await context(c);
        sendApiJson(c.res, 200, await c.d.keys.get(c.ids[0]!, c.access, x.users, x.owners));
      },
    },
    {
      method: 'POST', path: '/keys/:id/rotate', who: 'any',
      handler: async (c) => {
        // No body takes the configured grace; a body that does not parse is refused, never read as {}: a
        // grace_hours of 0 lost to a stray comma would leave a leaked secret working for a day.
        const body = await optionalJsonBody(c);
        const graceMs = body.grace_hours === undefined ? c.svc.holder.current.dashboard.rotationGraceMs : rotationGraceMs(body.grace_hours);
        const r = await c.d.keys.rotate(c.ids[0]!, graceMs, c.access);
        const x = await context(c);
        sendApiJson(c.res, 200, { key: r.key, record: await c.d.keys.get(r.record.id, c.access, x.users, x.owners), previous_secret_valid_until: r.oldValidUntil });
      },
    },
    {
      method: 'DELETE', path: '/keys/:id', who: 'any',
      handler: async (c) => { await c.d.keys.revoke(c.ids[0]!, c.access); sendApiJson(c.res, 200, { id: c.ids[0], revoked: true }); },
    },
  ];
}
