// Accounts (admins only): list, create (with a generated password shown once unless one is given),
// edit name/role/disabled, reset a password. Role changes, disabling and resets end the user's sessions.
import { GatewayError } from '../../gateway-error.ts';
import { generatePassword } from '../../dashboard/passwords.ts';
import { sendApiJson } from './context.ts';
import type { ApiRoute } from './router.ts';
import { jsonBody } from './session-routes.ts';

export function usersApi(): ApiRoute[] {
  return [
    { method: 'GET', path: '/users', who: 'admin', handler: async (c) => sendApiJson(c.res, 200, { data: await c.d.users.list() }) },
    {
      method: 'POST', path: '/users', who: 'admin',
      handler: async (c) => {
        const body = await jsonBody(c);
        // Absent (or null, or ''): one is generated and shown once. Anything else that is no string is a
        // mistake to say, not a reason to make up a password the caller does not know it got.
        if (body.password !== undefined && body.password !== null && typeof body.password !== 'string') {
          throw new GatewayError('invalid_parameter', "'password' must be a string (leave it out to have one generated)", { param: 'password' });
        }
        const given = typeof body.password === 'string' && body.password !== '' ? body.password : null;
        const password = given ?? generatePassword();
        const user = await c.d.users.create({ email: body.email, name: body.name, role: body.role, password });
        sendApiJson(c.res, 201, { user, ...(given === null ? { password } : {}) });
      },
    },
    {
      method: 'PATCH', path: '/users/:id', who: 'admin',
      handler: async (c) => {
        const body = await jsonBody(c);
        const before = await c.d.users.get(c.ids[0]!);
        if (!before) throw new GatewayError('resource_not_found', `no user with id ${c.ids[0]}`, { param: 'id' });
        const user = await c.d.users.update(before.id, { name: body.name, role: body.role, disabled: body.disabled });
        if (user.role !== before.role || user.disabled_at !== before.disabled_at) await c.d.sessions.revokeUser(user.id);
        sendApiJson(c.res, 200, { user });
      },
    },
    {
      method: 'POST', path: '/users/:id/password', who: 'admin',
      handler: async (c) => {
        const password = generatePassword();
        await c.d.users.setPassword(c.ids[0]!, password);
        await c.d.sessions.revokeUser(c.ids[0]!);
        sendApiJson(c.res, 200, { password });
      },
    },
  ];
}
