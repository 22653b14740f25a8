// Raw pass-through of OpenAI-style JSON routes the gateway does not translate (/v1/embeddings,
// /v1/completions, /v1/moderations, ...) through http-proxy-3, to the provider named by `model`,
// with the same key checks and limits, fallback before the first byte, total timeout, and inference
// records billed from the usage the answer carries (src/formats/passthrough/usage.ts: every shape).
import type { ClientRequest, IncomingMessage, ServerResponse } from 'node:http';
import { Readable } from 'node:stream';
import { setTimeout as sleep } from 'node:timers/promises';
import { createProxyServer } from 'http-proxy-3';
import type { ModelEntry } from '../config/types.ts';
import { reachOf, retryAfterMs, totalTimeout, upstreamFailure, transportVerdict, type Reach } from '../engine/upstream-error.ts';
import { budgetExhausted } from '../engine/dispatch.ts';
import { planAttempts, resolveModel } from '../engine/plan.ts';
import { buildRequest, fillPath, relayedQuery, upstreamReady, withRelayedQuery, type BuiltRequest } from '../engine/upstream.ts';
import { redactorFor } from '../engine/redact.ts';
import { GATEWAY_ONLY_FIELDS } from '../formats/passthrough/openai-chat.ts';
import { codecFor } from '../formats/registry.ts';
import type { AttemptRecord, KeyRecord } from '../store/types.ts';
import { uuidv7 } from '../util/uuid.ts';
import type { Usage } from '../formats/canonical.ts';
import { worstUsage, type Reservation, type Usage as LimitUsage } from '../limits/limiter.ts';
import { acquireAffordable } from '../limits/affordable.ts';
import { reportTrimmed } from './budget-trim.ts';
import { parseJsonObject, readBody, requireJsonContentType } from './body.ts';
import { sendError } from './envelope.ts';
import { GatewayError } from '../gateway-error.ts';
import type { ClientInfo, RouteParams } from './routes.ts';
import type { Services } from './services.ts';
import { relayAnswer } from './passthrough-relay.ts';
import { bodyDecoder, contentCodings, type ContentCodingError } from '../engine/content-coding.ts';
import { bodyText } from '../engine/charset.ts';
import { refuseCostBound } from './router-mode.ts';
import { passThroughInput, passThroughText, type PassThroughText } from './passthrough-reserve.ts';

type Hooks = { onReq(p: ClientRequest): void; onRes(p: IncomingMessage): void };
const hooks = new WeakMap<IncomingMessage, Hooks>();
const proxy = createProxyServer({ xfwd: false, changeOrigin: true, ignorePath: true, selfHandleResponse: true });
proxy.on('proxyReq', (preq, req) => hooks.get(req)?.onReq(preq));
proxy.on('proxyRes', (pres, req) => hooks.get(req)?.onRes(pres));

/** `reach`: what reached the upstream before a failure without an answer (src/engine/upstream-error.ts). */
type Sent = { kind: 'response'; res: IncomingMessage } | { kind: 'error'; err: Error; reach: Reach };

/** The first-byte timeout, as undici names it: node:http reports only the socket it destroys (`socket hang up`). */
const headersTimeout = (): Error => Object.assign(new Error('no answer before the first-byte timeout'), { code: 'UND_ERR_HEADERS_TIMEOUT' });

/**
 * One proxied attempt; resolves at the upstream's response headers or its failure. Only the upstream
 * socket gets a timeout (http-proxy-3's `proxyTimeout`: first byte, then idle between chunks); its
 * `timeout` option would set one on the client's socket, which outlives this request on keep-alive.
 */
function proxyOnce(req: IncomingMessage, res: ServerResponse, b: BuiltRequest, firstByteMs: number, idleMs: number, signal: AbortSignal): Promise<Sent> {
  return new Promise((resolve) => {
    let preq: ClientRequest | null = null;
    // What reached the upstream: the whole request flushed to the socket ('finish'), on a socket an
    // earlier request used (node:http's reusedSocket), any answer byte (a parse error is one); a timeout.
    let written = false;
    let timedOut = false;
    const onAbort = (): void => { preq?.destroy(signal.reason instanceof Error ? signal.reason : new Error('aborted')); };
    signal.addEventListener('abort', onAbort, { once: true });
    const done = (s: Sent): void => { signal.removeEventListener('abort', onAbort); resolve(s); };
    hooks.set(req, {
      onReq(p) {
        preq = p;
        // Only the provider's own headers go upstream: never the client's Authorization or cookies.
        for (const h of p.getHeaderNames()) p.removeHeader(h);
        for (const [k, v] of Object.entries(b.headers)) p.setHeader(k, v);
        p.setHeader('content-length', Buffer.byteLength(b.body));
        p.setHeader('host', new URL(b.origin).host);
        p.once('finish', () => { written = true; });
        p.once('timeout', () => { timedOut = true; });
      },
      onRes: (pres) => { preq?.setTimeout(idleMs); done({ kind: 'response', res: pres }); },
    });
    if (signal.aborted) { done({ kind: 'error', err: signal.reason instanceof Error ? signal.reason : new Error('aborted'), reach: 'nothing' }); return; }
    proxy.web(req, res, { target: b.origin + b.path, buffer: Readable.from([Buffer.from(b.body)]), proxyTimeout: firstByteMs },
      (err) => {
        const e = timedOut ? headersTimeout() : err as Error;
        const received = /^HPE_/.test((e as { code?: string }).code ?? '');
        done({ kind: 'error', err: e, reach: reachOf(e, { written, reused: preq?.reusedSocket === true, received }) });
      });
  });
}

/** Output a pass-through call may produce, for the limiter's reservation: none for embeddings and moderations. */
function outputReserve(sub: string, body: Record<string, unknown>, entry: ModelEntry): number {
  if (sub === '/embeddings' || sub === '/moderations') return 0;
  const asked = body.max_output_tokens ?? body.max_completion_tokens ?? body.max_tokens;
  return typeof asked === 'number' && Number.isSafeInteger(asked) && asked > 0 ? asked : entry.model.max_completion_tokens;
}

/** Routes whose streams report usage only when asked (`stream_options.include_usage`). */
const CHUNKED_ROUTES = new Set(['/chat/completions', '/completions']);

export async function handlePassthrough(svc: Services, req: IncomingMessage, res: ServerResponse, p: RouteParams, client: ClientInfo): Promise<void> {
  const startedAt = performance.now();
  const cfg = svc.holder.current;
  const id = uuidv7();
  const redact = redactorFor(cfg);
  let body: Record<string, unknown> = {};
  let primary: ModelEntry | null = null;
  let reservation: Reservation | null = null;
  let inputEstimate = 0;
  let plan: ModelEntry[] = [];
  const sub = p.path.slice('/v1'.length);
  try {
    requireJsonContentType(req);
    const buf = await readBody(req, cfg.server.bodyLimitBytes);
    body = parseJsonObject(buf, cfg.server.jsonMaxDepth);
    if (typeof body.model !== 'string' || body.model === '') throw new GatewayError('missing_parameter', '`model` (a <provider>/<model> id) is required', { param: 'model' });
    refuseCostBound(body, p.path);
    primary = resolveModel(cfg, body.model, { budgeted: client.key?.budgetUsd != null });
    if (client.key) svc.keys?.checkModel(client.key, primary.id);
    inputEstimate = Math.ceil(buf.length / 4);
    // Only OpenAI-compatible providers serve these routes: other fallbacks are left out of the plan.
    plan = planAttempts(cfg, primary, svc.health).filter((e) => e === primary || e.provider.format === 'openai-chat');
    if (client.key && svc.limiter) {
      // A budget that cannot cover the costliest fallback serves the plan without the targets it cannot afford.
      const key = client.key;
      // A budget prices each target's input from the body's text (passthrough-reserve.ts); a tpm limit keeps bytes / 4.
      const text = key.budgetUsd != null ? passThroughText(body) : null;
      const a = await acquireAffordable(svc.limiter, key, plan, (ps) => reserve(key, ps, inputEstimate, text, (e) => outputReserve(sub, body, e)));
      reservation = a.reservation;
      if (a.dropped.length > 0) {
        plan = [...a.kept];
        reportTrimmed(svc, res, 'named', a.dropped.map((e) => e.id));
      }
    }
  } catch (e) {
    sendError(res, e, 'openai', { 'x-inference-id': id });
    svc.books.rejected({ id, route: p.path, format: 'openai-chat', requested: typeof body.model === 'string' ? body.model : '', resolved: primary?.id ?? null, key: client.key, ip: client.ip, error: e, startedAt, body, bodyText: null });
    return;
  }
  const attempts: AttemptRecord[] = [];
  const s = cfg.upstream;
  svc.health.countRequest();
  const abort = new AbortController();
  res.on('close', () => { if (!res.writableFinished) abort.abort(new Error('client disconnected')); });
  const total = setTimeout(() => abort.abort(totalTimeout()), s.totalTimeoutMs);
  const clientGone = (): boolean => abort.signal.aborted && !(abort.signal.reason instanceof GatewayError);
  const stream = body.stream === true;
  // Streamed chat/legacy completions report usage only when asked: always asked upstream, and the
  // extra chunk hidden from a client that did not ask itself.
  const injectUsage = stream && CHUNKED_ROUTES.has(sub) && (body.stream_options as { include_usage?: unknown } | undefined)?.include_usage !== true;
  let served: ModelEntry | null = null;
  let status = 502;
  let usage: Usage | null = null;
  let partial = false;
  // The last failure; as in dispatch, every attempt after one takes a retry from the budget.
  let error: GatewayError | null = null;
  let i = 0;
  let tries = 0;
  let backoff = 50;
  try {
    while (i < plan.length && tries < s.maxAttempts) {
      if (error !== null && !svc.health.takeRetry(s.retryBudgetRatio, s.retryBudgetFloor)) { error = budgetExhausted(error); break; }
      const entry = plan[i]!;
      if (entry.provider.format !== 'openai-chat') {
        error = new GatewayError('invalid_parameter', `${entry.provider.name} does not serve ${p.path}; only OpenAI-compatible providers do`, { param: 'model' });
        break;
      }
      const out: Record<string, unknown> = { ...body };
      for (const f of GATEWAY_ONLY_FIELDS) delete out[f];
      if (entry.provider.modelInBody) out.model = entry.upstream; else delete out.model;
      if (injectUsage) out.stream_options = { ...(out.stream_options as Record<string, unknown> | undefined), include_usage: true };
      const pv = entry.provider.paths;
      const path = sub === '/embeddings' && pv.embeddings ? pv.embeddings : `${pv.passthrough ?? ''}${sub}`;
      // A signing transform's credentials still loading (a cold start) are awaited; none to be had moves to the next target.
      const wait = upstreamReady(entry.provider);
      const unready = wait === null ? null : await wait.then(() => null, (e: unknown) => (e instanceof GatewayError ? e : new GatewayError('upstream_error', String(e))));
      if (unready) {
        tries++;
        attempts.push({ provider: entry.provider.id, model: entry.id, status: null, error: unready.message, latencyMs: 0 });
        error = unready;
        if (i + 1 < plan.length) { i++; continue; }
        break;
      }
      const query = p.query.size > 0 ? relayedQuery(entry.provider, 'openai-chat', p.query.toString()).query : '';
      const built = buildRequest(entry.provider, entry, withRelayedQuery(fillPath(path, entry.upstream), query), JSON.stringify(out));
      tries++;
      const t0 = performance.now();
      const sent = await proxyOnce(req, res, built, s.firstByteTimeoutMs, s.idleTimeoutMs, abort.signal);
      const rec: AttemptRecord = { provider: entry.provider.id, model: entry.id, status: null, error: null, latencyMs: 0 };
      attempts.push(rec);
      let ra: number | null = null;
      let inPlace = true;
      if (sent.kind === 'error') {
        rec.latencyMs = Math.round(performance.now() - t0);
        if (clientGone()) { status = 499; error = null; served = entry; break; }
        if (abort.signal.aborted) { error = totalTimeout(); break; }
        const v = transportVerdict(sent.err, 'connect', redact, sent.reach);
        error = v.error; inPlace = v.inPlace;
        rec.error = error.message;
      } else {
        const up = sent.res;
        rec.status = up.statusCode ?? 502; rec.latencyMs = Math.round(performance.now() - t0);
        // A redirect is no answer (the gateway follows none: the provider's key stays with its base URL);
        // a body in an encoding the gateway cannot undo cannot be relayed with its usage read.
        const unreadable = rec.status < 300 ? codingProblem(up.headers['content-encoding']) : null;
        if (unreadable) {
          up.resume();
          error = transportVerdict(unreadable, 'pass-through', redact).error; inPlace = false;
          rec.error = error.message;
          served = entry;
        } else if (rec.status < 300) {
          served = entry; status = rec.status; error = null;
          svc.health.success(entry.provider.id);
          const relayed = await relayAnswer(up, res, { id, provider: entry.provider.id, inputEstimate, hideUsageChunk: injectUsage });
          usage = relayed.usage; partial = relayed.partial;
          if (relayed.clientGone) status = 499;
          else if (relayed.failed !== null) rec.error = redact(relayed.failed);
          break;
        } else {
          ra = retryAfterMs(up.headers);
          const v = upstreamFailure(codecFor(entry.provider.format), entry, rec.status, await drain(up, entry.provider.id), up.headers, ra, redact);
          error = v.error; inPlace = v.inPlace;
          rec.error = error.message;
          served = entry;
          if (!v.retry) break;
        }
      }
      svc.health.failure(entry.provider.id, s.ejection);
      svc.books.dispatchHooks.onUpstreamError?.(entry.provider.id, error.code);
      if (res.headersSent || res.destroyed) break;
      if (i + 1 < plan.length) {
        svc.books.dispatchHooks.onFallback?.(entry.provider.id);
        i++;
        continue;
      }
      // Last target: retry it in place, waiting what it asked (up to the cap) or a short back-off.
      if (tries >= s.maxAttempts || !inPlace || (ra !== null && ra > s.retryAfterCapMs)) break;
      try { await sleep(ra ?? backoff, undefined, { signal: abort.signal }); } catch {
        if (clientGone()) { status = 499; error = null; } else error = totalTimeout();
        break;
      }
      backoff *= 2;
    }
  } catch (e) {
    // A bug, not an upstream failure: still answered and recorded like every other outcome.
    console.error(`pass-through ${p.path} (${id}) failed:`, e);
    error = e instanceof GatewayError ? e : new GatewayError('internal_error', 'internal error');
  } finally {
    clearTimeout(total);
  }
  if (error && !res.headersSent && !clientGone()) sendError(res, error, 'openai', { 'x-inference-id': id });
  svc.books.completed({
    id, route: p.path, format: 'openai-chat', requested: body.model as string, key: client.key, ip: client.ip, startedAt, body, bodyText: null,
    stream, reservation, cfg,
    outcome: { status: error ? error.status : status, error, served, attempts, usage, finishReason: null, ttftMs: null, adjustments: [], ...(partial ? { partial } : {}) },
  });
}

/**
 * The limiter's reservation, output at the route's maximum per target (worstUsage): a budget's cost from
 * each target's input as its tokenizer counts the body's text (passthrough-reserve.ts); the tokens a
 * tpm limit takes from the body's bytes / 4 (flow control, settled with the real count).
 */
function reserve(key: KeyRecord, plan: readonly ModelEntry[], input: number, text: PassThroughText | null, outputOf: (e: ModelEntry) => number): LimitUsage {
  const out = plan.map((e) => outputOf(e));
  const cost = worstUsage(key, plan.map((e, i) => ({ pricing: e.model.pricing, maxOutputTokens: out[i]!, ...(text ? { inputTokens: passThroughInput(text, e) } : {}) })), input);
  let tokens = 0;
  for (const o of out) tokens = Math.max(tokens, input + o);
  return { tokens, costUsd: cost.costUsd };
}

/** The error a Content-Encoding header the gateway cannot undo stands for, or null. */
function codingProblem(header: string | string[] | undefined): ContentCodingError | null {
  try { contentCodings(header); return null; } catch (e) { return e as ContentCodingError; }
}

/** Reads an upstream error answer, decoded and as text in its charset (its first 64 KiB; the rest is discarded). */
function drain(up: IncomingMessage, from: string): Promise<string> {
  const chunks: Buffer[] = [];
  let size = 0;
  return new Promise((resolve) => {
    // A cut or undecodable error body still leaves its status (and what was read of it).
    const done = (): void => resolve(bodyText(Buffer.concat(chunks).subarray(0, 65536), up.headers['content-type'], from));
    const keep = (c: Buffer): void => { if (size < 65536) { chunks.push(c); size += c.length; } };
    const codings = codingProblem(up.headers['content-encoding']) ? [] : contentCodings(up.headers['content-encoding']);
    const decoder = codings.length === 0 ? null : bodyDecoder(codings, { data: keep, end: done, error: done });
    up.on('data', decoder ? (c: Buffer) => decoder.write(c) : keep);
    up.on('end', decoder ? () => decoder.end() : done);
    up.on('error', () => { decoder?.destroy(); done(); });
    up.on('close', () => { if (!up.complete) { decoder?.destroy(); done(); } });
  });
}
