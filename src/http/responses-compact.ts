// POST /v1/responses/compact (the SDK's responses.compact; Codex calls it when its context fills): the
// conversation (input, plus the stored turns of previous_response_id) becomes the API's compacted
// list: every user message, then one `compaction` item. A provider that serves the Responses API
// natively gets the request relayed to its own /compact; elsewhere (or when that answers 404/405 or
// fails in a retryable way) the model summarises a transcript of the conversation through the shared
// engine, and the summary travels in a gateway compaction token that every target reads back
// (src/formats/openai-responses/items.ts).
import type { IncomingMessage, ServerResponse } from 'node:http';
import type { ModelEntry } from '../config/types.ts';
import { dispatch } from '../engine/dispatch.ts';
import type { InferenceOutcome, InferenceRequest } from '../engine/context.ts';
import type { AttemptRecord } from '../store/types.ts';
import { planAttempts, resolveModel, type AttemptTarget } from '../engine/plan.ts';
import { redactorFor } from '../engine/redact.ts';
import { exchangeJson } from '../engine/json-exchange.ts';
import { transportVerdict, upstreamFailure } from '../engine/upstream-error.ts';
import { codecFor } from '../formats/registry.ts';
import { isRecord } from '../formats/errors.ts';
import { GATEWAY_ONLY_FIELDS } from '../formats/passthrough/openai-chat.ts';
import { responsesUsage } from '../formats/passthrough/usage.ts';
import { nativeInput } from '../formats/openai-responses/passthrough.ts';
import { GatewayError, invalidParam } from '../gateway-error.ts';
import type { Reservation } from '../limits/limiter.ts';
import { decodeForReservation, reservationUsage, reservedPrompt, undecodedPrompt } from './reservation-estimate.ts';
import { acquireAffordable } from '../limits/affordable.ts';
import { reportTrimmed } from './budget-trim.ts';
import { parseJsonObject, readBody, requireJsonContentType } from './body.ts';
import { sendError, sendJson } from './envelope.ts';
import { prependHistory } from './responses-route.ts';
import { refuseCostBound } from './router-mode.ts';
import type { ClientInfo } from './routes.ts';
import type { Services } from './services.ts';
import { uuidv7 } from '../util/uuid.ts';
import { discardedResponse } from '../responses/discarded-response.ts';
import { compactedOutput, summaryRequest, validateCompactRequest } from '../responses/compact-shape.ts';

type Rec = Record<string, unknown>;
const ROUTE = '/v1/responses/compact';

export async function handleCompact(svc: Services, req: IncomingMessage, res: ServerResponse, client: ClientInfo): Promise<void> {
  const startedAt = performance.now();
  const cfg = svc.holder.current;
  const id = uuidv7();
  const abort = new AbortController();
  let clientGone = false;
  res.on('close', () => { if (!res.writableFinished) { clientGone = true; abort.abort(); } });
  let body: Rec = {};
  let requested = '';
  let entry: ModelEntry | null = null;
  let reservation: Reservation | null = null;
  let bytes = 0;
  // The engine's plan when the key's budget left fallbacks out of it (else dispatch plans it).
  let reduced: readonly AttemptTarget[] | undefined;
  try {
    requireJsonContentType(req);
    const buf = await readBody(req, cfg.server.bodyLimitBytes);
    bytes = buf.length;
    body = validateCompactRequest(parseJsonObject(buf, cfg.server.jsonMaxDepth));
    requested = body.model as string;
    refuseCostBound(body, ROUTE);
    entry = resolveModel(cfg, requested, { budgeted: client.key?.budgetUsd != null });
    if (client.key) svc.keys?.checkModel(client.key, entry.id);
    body.input ??= [];
    await prependHistory(svc, body, client);
    // Nothing to compact: no model call (billed) to summarise an empty transcript.
    if (Array.isArray(body.input) && body.input.length === 0) throw invalidParam('input', "'input' holds no conversation to compact");
    if (client.key && svc.limiter) {
      // Reserved for the plan's costliest attempt (the summary may fall back to a pricier configured
      // model), or for the targets the budget can afford (src/limits/affordable.ts), as on the other routes.
      // The prompt is the whole conversation, the stored history prepended above included (the request's
      // own bytes / 4 left a long history out: a key was served a compaction it could not afford),
      // priced per target as the other routes price theirs (reservation-estimate.ts).
      const key = client.key;
      const whole = Buffer.from(JSON.stringify(body));
      const canonical = decodeForReservation('openai-responses', body);
      const prompt = reservedPrompt(canonical, whole.length, canonical ? null : undecodedPrompt(body));
      const estimateOf = (ts: readonly AttemptTarget[]) => reservationUsage(ts, body, whole, key, prompt);
      const got = acquireAffordable(svc.limiter, key, planAttempts(cfg, entry, svc.health).map((e) => ({ entry: e })), estimateOf);
      const a = got instanceof Promise ? await got : got;
      reservation = a.reservation;
      if (a.dropped.length > 0) { reportTrimmed(svc, res, 'named', a.dropped.map((t) => t.entry.id)); reduced = a.kept; }
    }
  } catch (e) {
    sendError(res, e, 'openai', { 'x-inference-id': id });
    svc.books.rejected({ id, route: ROUTE, format: 'openai-responses', requested, resolved: entry?.id ?? null, key: client.key, ip: client.ip, error: e, startedAt, body, bodyText: null });
    return;
  }
  const total = setTimeout(() => abort.abort(new DOMException('total timeout', 'TimeoutError')), cfg.upstream.totalTimeoutMs);
  let outcome: InferenceOutcome;
  try {
    const relayed = entry.provider.native['openai-responses'] !== undefined ? await relayCompact(svc, entry, body, req, res, id, abort.signal) : { fallback: [] };
    if ('fallback' in relayed) {
      outcome = await summarise(svc, entry, body, req, res, id, abort.signal, () => clientGone, startedAt, bytes, reduced);
      outcome.attempts = [...relayed.fallback, ...outcome.attempts];
    } else outcome = relayed;
  } catch (e) {
    outcome = failed(e instanceof GatewayError ? e : new GatewayError('internal_error', 'internal error'), entry, []);
  }
  clearTimeout(total);
  if (outcome.error && !res.headersSent && !clientGone) sendError(res, outcome.error, 'openai', { 'x-inference-id': id });
  svc.books.completed({ id, route: ROUTE, format: 'openai-responses', requested, key: client.key, ip: client.ip, startedAt, body, bodyText: null, stream: false, outcome, reservation, cfg });
  svc.router?.observe(outcome);
}

const failed = (error: GatewayError, served: ModelEntry | null, attempts: InferenceOutcome['attempts']): InferenceOutcome =>
  ({ status: error.status, error, served, attempts, usage: null, finishReason: null, ttftMs: null, adjustments: [] });

/**
 * The native relay: the body with the model rewritten, the gateway's fields and previous_response_id
 * removed (the stored turns are in `input`). `fallback` (with the failed attempt) when the provider
 * does not serve /compact (404, 405) or failed in a way worth another try (a retryable status, a
 * transport error): the caller then summarises through the engine, whose plan has its own fallbacks.
 * A refusal of the request itself (other 4xx) is the answer.
 */
async function relayCompact(svc: Services, entry: ModelEntry, body: Rec, req: IncomingMessage, res: ServerResponse, id: string, signal: AbortSignal): Promise<InferenceOutcome | { fallback: AttemptRecord[] }> {
  const cfg = svc.holder.current;
  const out: Rec = { ...body };
  for (const f of GATEWAY_ONLY_FIELDS) delete out[f];
  delete out.previous_response_id;
  out.model = entry.upstream;
  out.input = nativeInput(out.input);
  const t0 = performance.now();
  const up = await exchangeJson(entry, `${entry.provider.native['openai-responses']!}/compact`, out, req.headers, signal, cfg.upstream);
  const attempt = (status: number | null, error: string | null) => [{ provider: entry.provider.id, model: entry.id, status, error, latencyMs: Math.round(performance.now() - t0) }];
  if ('error' in up) {
    // An answer past the size bound is the gateway's own error (retried elsewhere like a transport failure).
    const v = up.error instanceof GatewayError ? { error: up.error } : transportVerdict(up.error, 'compact', redactorFor(cfg));
    return signal.aborted ? failed(v.error, null, attempt(null, v.error.code)) : { fallback: attempt(null, v.error.code) };
  }
  if (up.status === 404 || up.status === 405) return { fallback: attempt(up.status, 'route_not_found') };
  if (up.status >= 400) {
    const v = upstreamFailure(codecFor(entry.provider.format), entry, up.status, up.text, up.headers, null, redactorFor(cfg));
    return v.retry ? { fallback: attempt(up.status, v.error.code) } : failed(v.error, null, attempt(up.status, v.error.code));
  }
  let json: unknown;
  try { json = JSON.parse(up.text); } catch { json = null; }
  if (!isRecord(json) || !Array.isArray(json.output)) {
    const e = new GatewayError('upstream_error', 'the provider answered the compaction with something that is not a compacted response');
    return failed(e, null, attempt(up.status, e.code));
  }
  // The gateway's id (a valid feedback id), the upstream's output and usage.
  json.id = id;
  json.object = 'response.compaction';
  const text = JSON.stringify(json);
  sendJson(res, 200, text, { 'x-inference-id': id, 'x-gateway-provider': entry.provider.id });
  const usage = isRecord(json.usage) ? responsesUsage(json.usage) : null;
  return { status: 200, error: null, served: entry, attempts: attempt(200, null), usage, finishReason: 'end_turn', ttftMs: null, adjustments: [], responseText: text, result: json };
}

/**
 * The canonical path: one non-streamed Responses request through the engine (fallbacks, retries,
 * usage and cost as on every route) asking the model to summarise a transcript of the conversation.
 * The engine writes its answer to a discarded response; the client gets the compacted list.
 */
async function summarise(svc: Services, entry: ModelEntry, body: Rec, req: IncomingMessage, res: ServerResponse, id: string, signal: AbortSignal, clientGone: () => boolean, startedAt: number, bytes: number, targets?: readonly AttemptTarget[]): Promise<InferenceOutcome> {
  const cfg = svc.holder.current;
  const ask = summaryRequest(body, entry.id);
  const r: InferenceRequest = {
    id, cfg, res: discardedResponse(), startedAt, clientFormat: 'openai-responses', body: ask, stream: false, clientHeaders: req.headers, clientQuery: '',
    includeUsage: false, signal, clientGone, canonical: null, prepared: null, inputEstimate: Math.ceil(bytes / 4),
  };
  const outcome = await dispatch(r, entry, svc.health, svc.books.dispatchHooks, targets, false);
  if (outcome.error) return outcome;
  const result = isRecord(outcome.result) ? outcome.result : null;
  const summary = result && Array.isArray(result.output)
    ? (result.output as Rec[]).filter((o) => o.type === 'message').flatMap((o) => (Array.isArray(o.content) ? o.content as Rec[] : [])).map((c) => (typeof c.text === 'string' ? c.text : '')).join('')
    : '';
  if (summary.trim() === '') {
    return { ...outcome, status: 502, error: new GatewayError('upstream_error', `${outcome.served?.id ?? entry.id} returned no summary for the compaction (finish reason ${outcome.finishReason ?? 'unknown'})`) };
  }
  const compacted = {
    id, object: 'response.compaction', created_at: Math.floor(Date.now() / 1000),
    output: compactedOutput(body.input as Rec[], summary, id), usage: result!.usage ?? null,
  };
  const text = JSON.stringify(compacted);
  if (!clientGone()) sendJson(res, 200, text, { 'x-inference-id': id, ...(outcome.served ? { 'x-gateway-provider': outcome.served.provider.id } : {}) });
  return { ...outcome, responseText: text, result: compacted };
}
