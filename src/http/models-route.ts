// GET /v1/models (optionally ?owned_by=) and GET /v1/models/{id}: served from bytes built once per
// config version, so a listing costs a cache lookup and a write.
import type { IncomingMessage, ServerResponse } from 'node:http';
import { buildListing, modelRecord } from '../catalog/listing.ts';
import type { Config } from '../config/types.ts';
import { sendJson } from './envelope.ts';
import { GatewayError } from './errors.ts';
import { decodePathSegment, type RouteParams } from './routes.ts';
import type { Services } from './services.ts';

export function listingBytes(cfg: Config, ownedBy: string | null): Buffer {
  const cacheKey = ownedBy ?? '';
  let buf = cfg.listingCache.get(cacheKey);
  if (!buf) {
    const entries = [...cfg.models.values()].map((e) => ({ provider: e.provider.id, model: e.model }));
    buf = Buffer.from(JSON.stringify(buildListing(entries, ownedBy ?? undefined)));
    // Filters are user-controlled: cache only the unfiltered listing and filters naming real providers.
    if (ownedBy === null || cfg.providers.has(ownedBy)) cfg.listingCache.set(cacheKey, buf);
  }
  return buf;
}

export async function handleModels(svc: Services, _req: IncomingMessage, res: ServerResponse, p: RouteParams): Promise<void> {
  const cfg = svc.holder.current;
  const buf = listingBytes(cfg, p.query.get('owned_by'));
  res.writeHead(200, { 'content-type': 'application/json', 'content-length': buf.length, 'x-config-version': cfg.version });
  res.end(buf);
}

export async function handleModel(svc: Services, _req: IncomingMessage, res: ServerResponse, p: RouteParams): Promise<void> {
  const id = decodePathSegment(p.path.slice('/v1/models/'.length));
  const entry = svc.holder.current.models.get(id);
  if (!entry) throw new GatewayError('model_not_found', `model "${id}" is not in the catalog`, { param: 'model' });
  sendJson(res, 200, modelRecord(entry.provider.id, entry.model));
}
