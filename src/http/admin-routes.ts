// The admin API for keys (POST/GET /admin/keys, DELETE /admin/keys/{id}), authorised by GATEWAY_ADMIN_KEY.
import type { Route } from './routes.ts';
import { parseJsonObject, readBody, requireJsonLabel } from './body.ts';
import { sendJson } from './envelope.ts';
import { GatewayError } from '../gateway-error.ts';
import type { Services } from './services.ts';
import type { CreateKeyInput } from '../auth/admin.ts';

export function adminRoutes(svc: Services): Route[] {
  const admin = () => {
    if (!svc.admin) throw new GatewayError('not_implemented', 'key management needs storage, which is not configured');
    return svc.admin;
  };
  return [
    {
      method: 'POST', pattern: '/admin/keys', envelope: 'openai', auth: 'admin',
      handler: async (req, res) => {
        const cfg = svc.holder.current;
        requireJsonLabel(req);
        const body = parseJsonObject(await readBody(req, cfg.server.bodyLimitBytes), cfg.server.jsonMaxDepth);
        const created = await admin().createKey(body as CreateKeyInput);
        sendJson(res, 201, { ...created.record, key: created.key });
      },
    },
    {
      method: 'GET', pattern: '/admin/keys', envelope: 'openai', auth: 'admin',
      handler: async (_req, res) => sendJson(res, 200, { object: 'list', data: await admin().listKeys() }),
    },
    {
      method: 'DELETE', pattern: '/admin/keys/:id', envelope: 'openai', auth: 'admin',
      handler: async (_req, res, p) => {
        // No key id holds a NUL (PostgreSQL would refuse the text with a 500): such an id names no key.
        if (p.id!.includes('\u0000') || !(await admin().revokeKey(p.id!))) throw new GatewayError('route_not_found', `no key with id ${p.id}`, { param: 'id' });
        sendJson(res, 200, { id: p.id, revoked: true });
      },
    },
  ];
}
