// GET /v1/models (?provider= / ?owned_by=, ?capability=, ?include=deprecated) and GET /v1/models/{id}
// (ids and aliases; "router" too, src/router/listing-record.ts): served from bytes built once per
// config version and query, so a listing of the whole catalog costs a cache lookup and a write.
import type { IncomingMessage, ServerResponse } from 'node:http';
import { gzipSync } from 'node:zlib';
import { buildListing, LISTING_CAPABILITIES, modelRecord, type ListingCapability, type ListingEntry, type ListingQuery } from '../catalog/listing.ts';
import { findOffer, retiredError } from '../catalog/resolve.ts';
import { ROUTER_ID, routerMatches, routerRecord } from '../router/listing-record.ts';
import type { Config } from '../config/types.ts';
import { sendJson } from './envelope.ts';
import { GatewayError } from '../gateway-error.ts';
import { decodePathSegment, type RouteParams } from './routes.ts';
import type { Services } from './services.ts';

const INCLUDES = ['deprecated'] as const;

/** Parses and validates the listing query; unknown values are a 400 naming the parameter and the allowed values. */
export function listingQuery(params: URLSearchParams): ListingQuery {
  const provider = params.get('provider') ?? undefined;
  const ownedBy = params.get('owned_by') ?? undefined;
  const list = (name: string): string[] => params.getAll(name).flatMap((v) => v.split(',')).map((v) => v.trim()).filter((v) => v !== '');
  const capabilities = [...new Set(list('capability'))].sort();
  for (const c of capabilities) {
    if (!(c in LISTING_CAPABILITIES)) throw new GatewayError('invalid_parameter', `unknown capability "${c}"; use one of: ${Object.keys(LISTING_CAPABILITIES).join(', ')}`, { param: 'capability' });
  }
  const include = list('include');
  for (const i of include) {
    if (!(INCLUDES as readonly string[]).includes(i)) throw new GatewayError('invalid_parameter', `unknown include "${i}"; use: ${INCLUDES.join(', ')}`, { param: 'include' });
  }
  // Both filters naming different providers match nothing, like any filter with no match.
  const chosen = provider !== undefined && ownedBy !== undefined && provider !== ownedBy ? '\0none' : provider ?? ownedBy;
  return { ...(chosen !== undefined ? { provider: chosen } : {}), capabilities: capabilities as ListingCapability[], includeDeprecated: include.includes('deprecated') };
}

/** Listed offers and their aliases (an alias record carries its target's facts and `alias_for`). */
function listingEntries(cfg: Config): ListingEntry[] {
  const out: ListingEntry[] = [];
  for (const e of cfg.models.values()) if (e.listed) out.push({ provider: e.providerId, model: e.model, offer: e });
  for (const [alias, target] of cfg.catalog.aliases) {
    const e = cfg.models.get(target);
    if (e?.listed) out.push({ provider: e.providerId, model: e.model, offer: e, aliasFor: e.id, id: alias });
  }
  return out;
}

/** Filters are user-controlled: only queries naming no provider, a real one or the router are cached (the key space stays bounded). */
const cachedQuery = (cfg: Config, q: ListingQuery): boolean => q.provider === undefined || q.provider === ROUTER_ID || cfg.providers.has(q.provider);

export function listingBytes(cfg: Config, query: ListingQuery | string | null): Buffer {
  const q: ListingQuery = typeof query === 'string' ? { provider: query, capabilities: [], includeDeprecated: false } : query ?? { capabilities: [], includeDeprecated: false };
  const cacheKey = `${q.provider ?? ''}|${q.capabilities.join(',')}|${q.includeDeprecated ? 'd' : ''}`;
  let buf = cfg.listingCache.get(cacheKey);
  if (!buf) {
    const listing = buildListing(listingEntries(cfg), q);
    // The router is listed among the models (src/router/listing-record.ts), in id order like the rest.
    const router = routerRecord(cfg);
    if (router && routerMatches(router, q)) {
      const at = listing.data.findIndex((r) => String(r.id) > ROUTER_ID);
      listing.data.splice(at === -1 ? listing.data.length : at, 0, router);
    }
    buf = Buffer.from(JSON.stringify(listing));
    if (cachedQuery(cfg, q)) cfg.listingCache.set(cacheKey, buf);
  }
  return buf;
}

/** The listing compressed once per config version and query, for clients that accept gzip (the whole catalog is ~670 KiB, ~10x less gzipped). */
function gzippedListing(cfg: Config, q: ListingQuery): Buffer {
  const key = `gzip|${q.provider ?? ''}|${q.capabilities.join(',')}|${q.includeDeprecated ? 'd' : ''}`;
  let gz = cfg.listingCache.get(key);
  if (!gz) {
    gz = gzipSync(listingBytes(cfg, q), { level: 6 });
    if (cachedQuery(cfg, q)) cfg.listingCache.set(key, gz);
  }
  return gz;
}

export async function handleModels(svc: Services, req: IncomingMessage, res: ServerResponse, p: RouteParams): Promise<void> {
  const cfg = svc.holder.current;
  const q = listingQuery(p.query);
  const gzip = /\bgzip\b/.test(String(req.headers['accept-encoding'] ?? ''));
  const buf = gzip ? gzippedListing(cfg, q) : listingBytes(cfg, q);
  res.writeHead(200, {
    'content-type': 'application/json', 'content-length': buf.length, 'x-config-version': cfg.version, vary: 'accept-encoding',
    ...(gzip ? { 'content-encoding': 'gzip' } : {}),
  });
  res.end(buf);
}

/** One model by id or alias; a retired one is a 404 naming its successor. Hidden models are not shown. */
export async function handleModel(svc: Services, _req: IncomingMessage, res: ServerResponse, p: RouteParams): Promise<void> {
  const cfg = svc.holder.current;
  const id = decodePathSegment(p.path.slice('/v1/models/'.length));
  const router = id === ROUTER_ID ? routerRecord(cfg) : null;
  if (router) { sendJson(res, 200, router); return; }
  const entry = findOffer(cfg, id);
  if (entry?.listed) {
    const alias = entry.id !== id ? { aliasFor: entry.id, id } : {};
    sendJson(res, 200, modelRecord(entry.providerId, entry.model, { offer: entry, ...alias }));
    return;
  }
  throw retiredError(cfg, id) ?? new GatewayError('model_not_found', `model "${id}" is not in the catalog`, { param: 'model' });
}
