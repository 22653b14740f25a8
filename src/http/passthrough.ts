// Raw pass-through of OpenAI-style JSON routes the gateway does not translate (/v1/embeddings,
// /v1/moderations, ...) through http-proxy-3, to the provider named by `model`, with the same key
// checks, fallback before the first byte, and inference records (usage read from the relayed JSON).
import type { ClientRequest, IncomingMessage, ServerResponse } from 'node:http';
import { Readable } from 'node:stream';
import { finished } from 'node:stream/promises';
import { setTimeout as sleep } from 'node:timers/promises';
import { createProxyServer } from 'http-proxy-3';
import type { ModelEntry } from '../config/types.ts';
import { RETRYABLE, retryAfterMs, upstreamHttpError } from '../engine/attempt.ts';
import { budgetExhausted } from '../engine/dispatch.ts';
import { planAttempts, resolveModel } from '../engine/plan.ts';
import { buildRequest, fillPath, type BuiltRequest } from '../engine/upstream.ts';
import { canonicalUsage } from '../formats/openai-chat/response.ts';
import { GATEWAY_ONLY_FIELDS } from '../formats/passthrough/openai-chat.ts';
import { codecFor } from '../formats/registry.ts';
import type { AttemptRecord } from '../store/types.ts';
import { uuidv7 } from '../util/uuid.ts';
import { estimateMaxCost } from '../catalog/cost.ts';
import type { Usage } from '../formats/canonical.ts';
import { parseJsonObject, readBody, requireJsonContentType } from './body.ts';
import { sendError } from './envelope.ts';
import { GatewayError } from './errors.ts';
import type { ClientInfo, RouteParams } from './routes.ts';
import type { Services } from './services.ts';

type Hooks = { onReq(p: ClientRequest): void; onRes(p: IncomingMessage): void };
const hooks = new WeakMap<IncomingMessage, Hooks>();
const proxy = createProxyServer({ xfwd: false, changeOrigin: true, ignorePath: true, selfHandleResponse: true });
proxy.on('proxyReq', (preq, req) => hooks.get(req)?.onReq(preq));
proxy.on('proxyRes', (pres, req) => hooks.get(req)?.onRes(pres));

const HOP_BY_HOP = new Set(['connection', 'keep-alive', 'transfer-encoding', 'upgrade', 'proxy-authenticate', 'proxy-authorization', 'te', 'trailer', 'set-cookie']);
const USAGE_CAPTURE_LIMIT = 4 * 1024 * 1024;

type Sent = { kind: 'response'; res: IncomingMessage } | { kind: 'error'; err: Error };

/** One proxied attempt; resolves at the upstream's response headers or its failure. */
function proxyOnce(req: IncomingMessage, res: ServerResponse, b: BuiltRequest, timeoutMs: number): Promise<Sent> {
  return new Promise((resolve) => {
    hooks.set(req, {
      onReq(preq) {
        // Only the provider's own headers go upstream: never the client's Authorization or cookies.
        for (const h of preq.getHeaderNames()) preq.removeHeader(h);
        for (const [k, v] of Object.entries(b.headers)) preq.setHeader(k, v);
        preq.setHeader('content-length', Buffer.byteLength(b.body));
        preq.setHeader('host', new URL(b.origin).host);
      },
      onRes: (pres) => resolve({ kind: 'response', res: pres }),
    });
    proxy.web(req, res, {
      target: b.origin + b.path, buffer: Readable.from([Buffer.from(b.body)]), proxyTimeout: timeoutMs, timeout: timeoutMs,
    }, (err) => resolve({ kind: 'error', err: err as Error }));
  });
}

export async function handlePassthrough(svc: Services, req: IncomingMessage, res: ServerResponse, p: RouteParams, client: ClientInfo): Promise<void> {
  const startedAt = performance.now();
  const cfg = svc.holder.current;
  const id = uuidv7();
  requireJsonContentType(req);
  const buf = await readBody(req, cfg.server.bodyLimitBytes);
  const body = parseJsonObject(buf, cfg.server.jsonMaxDepth);
  if (typeof body.model !== 'string' || body.model === '') throw new GatewayError('missing_parameter', '`model` (a <provider>/<model> id) is required', { param: 'model' });
  const primary = resolveModel(cfg, body.model);
  if (client.key) svc.keys?.checkModel(client.key, primary.id);
  const sub = p.path.slice('/v1'.length);
  const reservation = client.key && svc.limiter
    ? await svc.limiter.acquire(client.key, { tokens: Math.ceil(buf.length / 4), costUsd: estimateMaxCost(primary.model.pricing, Math.ceil(buf.length / 4), 0) })
    : null;
  const attempts: AttemptRecord[] = [];
  const s = cfg.upstream;
  // Only OpenAI-compatible providers serve these routes: other fallbacks are left out of the plan.
  const plan = planAttempts(cfg, primary, svc.health).filter((e) => e === primary || e.provider.format === 'openai-chat');
  svc.health.countRequest();
  let served: ModelEntry | null = null;
  let status = 502;
  let usage: Usage | null = null;
  // The last failure; as in dispatch, every attempt after one takes a retry from the budget.
  let error: GatewayError | null = null;
  let i = 0;
  let tries = 0;
  let backoff = 50;
  while (i < plan.length && tries < s.maxAttempts) {
    if (error !== null && !svc.health.takeRetry(s.retryBudgetRatio, s.retryBudgetFloor)) { error = budgetExhausted(error); break; }
    const entry = plan[i]!;
    if (entry.provider.format !== 'openai-chat') {
      error = new GatewayError('invalid_parameter', `${entry.provider.name} does not serve ${p.path}; only OpenAI-compatible providers do`, { param: 'model' });
      status = 400;
      break;
    }
    const out: Record<string, unknown> = { ...body };
    for (const f of GATEWAY_ONLY_FIELDS) delete out[f];
    if (entry.provider.modelInBody) out.model = entry.upstream; else delete out.model;
    const pv = entry.provider.paths;
    const path = sub === '/embeddings' && pv.embeddings ? pv.embeddings : `${pv.passthrough ?? ''}${sub}`;
    const built = buildRequest(entry.provider, entry, fillPath(path, entry.upstream), JSON.stringify(out));
    tries++;
    const t0 = performance.now();
    const sent = await proxyOnce(req, res, built, s.firstByteTimeoutMs);
    const rec: AttemptRecord = { provider: entry.provider.id, model: entry.id, status: null, error: null, latencyMs: 0 };
    attempts.push(rec);
    let ra: number | null = null;
    if (sent.kind === 'error') {
      rec.error = sent.err.message; rec.latencyMs = Math.round(performance.now() - t0);
      error = new GatewayError('upstream_unavailable', `upstream unreachable: ${(sent.err as { code?: string }).code ?? sent.err.message}`);
    } else {
      const up = sent.res;
      rec.status = up.statusCode ?? 502; rec.latencyMs = Math.round(performance.now() - t0);
      ra = retryAfterMs(up.headers);
      const failed = RETRYABLE(rec.status);
      if (!failed || tries >= s.maxAttempts || (i + 1 === plan.length && ra !== null && ra > s.retryAfterCapMs)) {
        // An answer, or a failure with nothing left to try: relayed as the upstream sent it.
        served = entry; status = rec.status; error = null;
        if (failed) { svc.health.failure(entry.provider.id, s.ejection); svc.books.dispatchHooks.onUpstreamError?.(entry.provider.id, rec.status === 429 ? 'rate_limited' : 'upstream_error'); }
        else svc.health.success(entry.provider.id);
        usage = await relay(up, res, id, entry);
        break;
      }
      // Not relayed (the client has had no byte yet): read as the error to answer if no retry is left.
      error = upstreamHttpError(codecFor(entry.provider.format), entry, rec.status, await drain(up), up.headers, ra);
      rec.error = error.message;
    }
    svc.health.failure(entry.provider.id, s.ejection);
    svc.books.dispatchHooks.onUpstreamError?.(entry.provider.id, error.code);
    if (res.headersSent || res.destroyed) break;
    if (i + 1 < plan.length) {
      svc.books.dispatchHooks.onFallback?.(entry.provider.id);
      i++;
      continue;
    }
    // Last target: retry it in place, waiting what it asked (a retry-after over the cap was relayed
    // above) or a short back-off.
    if (tries >= s.maxAttempts) break;
    await sleep(ra ?? backoff);
    backoff *= 2;
    if (res.destroyed) { status = 499; error = null; break; }
  }
  if (error && !res.headersSent) sendError(res, error, 'openai', { 'x-inference-id': id });
  svc.books.completed({
    id, route: p.path, format: 'openai-chat', requested: body.model, key: client.key, ip: client.ip, startedAt, body, bodyText: null,
    stream: false, reservation, cfg,
    outcome: { status: error ? error.status : status, error, served, attempts, usage, finishReason: null, ttftMs: null, adjustments: [] },
  });
}

/** Reads an upstream error answer (its first 64 KiB; the rest is discarded). */
async function drain(up: IncomingMessage): Promise<string> {
  const chunks: Buffer[] = [];
  let size = 0;
  try {
    for await (const c of up as AsyncIterable<Buffer>) if (size < 65536) { chunks.push(c); size += c.length; }
  } catch { /* a cut error body still leaves its status */ }
  return Buffer.concat(chunks).toString('utf8', 0, Math.min(size, 65536));
}

/** Streams the upstream answer to the client unchanged, keeping a bounded copy to read usage from. */
async function relay(up: IncomingMessage, res: ServerResponse, id: string, entry: ModelEntry): Promise<Usage | null> {
  const headers: Record<string, string | string[]> = {};
  for (const [k, v] of Object.entries(up.headers)) if (v !== undefined && !HOP_BY_HOP.has(k)) headers[k] = v;
  headers['x-inference-id'] = id;
  headers['x-gateway-provider'] = entry.provider.id;
  res.writeHead(up.statusCode ?? 502, headers);
  const chunks: Buffer[] = [];
  let size = 0;
  up.on('data', (c: Buffer) => { if (size + c.length <= USAGE_CAPTURE_LIMIT) { chunks.push(c); size += c.length; } });
  // The upstream dying mid-body cuts the client's response (its first byte is already out): no retry.
  up.on('error', () => res.destroy());
  up.pipe(res);
  try { await finished(res); } catch { return null; }
  if (!String(up.headers['content-type'] ?? '').includes('json') || size === 0) return null;
  try {
    const json = JSON.parse(Buffer.concat(chunks, size).toString('utf8')) as { usage?: unknown };
    return json.usage ? canonicalUsage(json.usage) : null;
  } catch { return null; }
}
