// GET /models (the model browser: the compiled config's servable models with prices per million tokens)
// and GET /models/compare (per model: traffic, latency, cost per request and feedback with 95% intervals).
import { createHash } from 'node:crypto';
import { compareModels, modelCatalog } from '../../dashboard/models.ts';
import type { ModelEntry } from '../../config/types.ts';
import { SECURITY_HEADERS, sendApiJson } from './context.ts';
import { list, range, single } from './params.ts';
import type { ApiRoute } from './router.ts';

/**
 * The catalog changes only with the config (a reload compiles a new model map): its JSON (~300 KB for the
 * repository's catalog) is built once per map and carries an ETag, so a browser's next visit gets a 304.
 */
const catalogs = new WeakMap<Map<string, ModelEntry>, { body: Buffer; etag: string }>();
function catalogOf(models: Map<string, ModelEntry>): { body: Buffer; etag: string } {
  let c = catalogs.get(models);
  if (!c) {
    const body = Buffer.from(JSON.stringify({ data: modelCatalog(models) }), 'utf8');
    c = { body, etag: `"${createHash('sha256').update(body).digest('base64url').slice(0, 22)}"` };
    catalogs.set(models, c);
  }
  return c;
}

export function modelsApi(): ApiRoute[] {
  return [
    {
      method: 'GET', path: '/models', who: 'any',
      handler: async (c) => {
        const cat = catalogOf(c.svc.holder.current.models);
        // private: the answer depends on being signed in; no-cache: revalidated on every visit.
        const headers = { ...SECURITY_HEADERS, etag: cat.etag, 'cache-control': 'private, no-cache' };
        if (c.req.headers['if-none-match'] === cat.etag) { c.res.writeHead(304, headers); c.res.end(); return; }
        c.res.writeHead(200, { ...headers, 'content-type': 'application/json; charset=utf-8', 'content-length': cat.body.length });
        c.res.end(cat.body);
      },
    },
    {
      method: 'GET', path: '/models/compare', who: 'any',
      handler: async (c) => {
        const { from, to } = range(c.query, 30 * 86_400_000);
        const metric = single(c.query, 'metric') || undefined;
        sendApiJson(c.res, 200, await compareModels(c.d.store.sql, { from, to, models: list(c.query, 'model'), ...(metric ? { metric } : {}) }, c.access));
      },
    },
  ];
}
