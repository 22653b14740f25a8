// POST /v1/chat/completions, POST /v1/messages and POST /v1/responses: validate, resolve the model,
// check the key's permissions and limits, dispatch through the engine, then hand the outcome to the bookkeeper.
import type { IncomingMessage, ServerResponse } from 'node:http';
import type { ClientFormat } from '../formats/codec.ts';
import type { ModelEntry } from '../config/types.ts';
import { dispatch } from '../engine/dispatch.ts';
import { planAttempts, resolveModel, type AttemptTarget } from '../engine/plan.ts';
import type { InferenceOutcome, InferenceRequest } from '../engine/context.ts';
import type { PreparedRequest } from '../engine/convert-pool.ts';
import { parseAndValidate } from '../workers/convert-core.ts';
import { uuidv7 } from '../util/uuid.ts';
import type { Reservation } from '../limits/limiter.ts';
import { reportTrimmed } from './budget-trim.ts';
import { acquireReserved, decodeForReservation, reservationUsage, reservedPrompt, undecodedPrompt } from './reservation-estimate.ts';
import type { CanonicalRequest } from '../formats/canonical.ts';
import { readBody, requireJsonContentType } from './body.ts';
import { asGatewayError, sendError, type Envelope } from './envelope.ts';
import { GatewayError } from '../gateway-error.ts';
import type { ClientInfo } from './routes.ts';
import type { Services } from './services.ts';
import { boundsCost, namesRouter, onlyCandidate, routeInference } from './router-mode.ts';
import type { Routed } from '../router/service.ts';

/**
 * What a route adds around the shared flow (the Responses route: stored conversations). `prepare`
 * runs on the validated body before routing and may rewrite it; it gets the request bytes too. With
 * `pooled`, bodies above the threshold still go to the worker pool: `prepare` then gets their
 * parameters only (`pooled` true) and may return the full body it needs, which ends the pool's part.
 * `finished` gets the outcome after the answer went out.
 */
export type InferenceExtension = {
  pooled?: boolean;
  prepare(body: Record<string, unknown>, client: ClientInfo, id: string, bytes: Buffer, pooled: boolean): Promise<Record<string, unknown> | void>;
  finished(outcome: InferenceOutcome, client: ClientInfo, id: string): void;
};

export async function handleInference(svc: Services, req: IncomingMessage, res: ServerResponse, route: string, format: ClientFormat, client: ClientInfo, ext?: InferenceExtension): Promise<void> {
  const startedAt = performance.now();
  const cfg = svc.holder.current;
  const envelope: Envelope = format === 'anthropic-messages' ? 'anthropic' : 'openai';
  const id = uuidv7();
  // One controller for both reasons to stop: the client hung up, or the total time limit passed.
  const abort = new AbortController();
  let clientGone = false;
  res.on('close', () => { if (!res.writableFinished) { clientGone = true; abort.abort(); } });
  let requested = '';
  let bodyText: string | null = null;
  let body: Record<string, unknown> = {};
  let reservation: Reservation | null = null;
  let entry: ModelEntry | null = null;
  let prepared: PreparedRequest | null = null;
  let inputEstimate = 0;
  let routed: Routed | null = null;
  // Decoded for a limited key's reservation, and handed to the attempts (which would decode it anyway).
  let decoded: CanonicalRequest | null = null;
  // A named model's plan when the key's budget left targets out of it (else dispatch plans it).
  let reduced: readonly AttemptTarget[] | undefined;
  try {
    requireJsonContentType(req);
    let buf = await readBody(req, cfg.server.bodyLimitBytes);
    inputEstimate = Math.ceil(buf.length / 4);
    if (cfg.storage.logBodies === 'full') bodyText = buf.toString('utf8');
    // A routed body is parsed here whatever the pool does (routing reads the prompt): it skips the pool.
    if (svc.convert && (!ext || ext.pooled) && buf.length >= cfg.workers.convertThresholdBytes && !namesRouter(buf)) {
      // Large body: parsed, validated and converted in the pool; the main thread sees its parameters only.
      // A key with a budget has the worker read what its reservation needs of the content (src/workers/prompt-read.ts).
      prepared = await svc.convert.prepare(buf, format, cfg, client.key?.budgetUsd != null);
      buf = prepared.bytes;
      body = prepared.meta;
    } else body = parseAndValidate(buf, format, cfg.server.jsonMaxDepth);
    if (ext) {
      const full = await ext.prepare(body, client, id, buf, prepared !== null);
      if (full) { body = full; prepared = null; }
    }
    requested = body.model as string;
    const named = requested === 'router' ? null : resolveModel(cfg, requested, { budgeted: client.key?.budgetUsd != null });
    if (client.key && named) svc.keys?.checkModel(client.key, named.id);
    // Router mode (src/router): the decision picks the plan; its first target stands as the model. A
    // named model with a cost bound goes the same way, as its only candidate (onlyCandidate).
    if (named === null || boundsCost(body)) {
      const r = routeInference(svc, cfg, named ? onlyCandidate(body, named) : body, prepared, format, client.key, route, id, res);
      ({ routed, body, entry } = r instanceof Promise ? await r : r);
      prepared = null;
    } else entry = named;
    const limiter = svc.limiter;
    if (client.key && limiter) {
      // Reserved for the plan's costliest attempt: a fallback to a pricier model must not pass the key's
      // budget. A budget that cannot cover it serves the plan without the targets it cannot afford.
      const key = client.key;
      const targets = routed ? routed.targets : planAttempts(cfg, entry, svc.health).map((e) => ({ entry: e }));
      // Router mode may drop its first choice too (the next target it ranked is what the key can afford).
      // The prompt is measured only for a key the estimate limits (a budget or tpm); others count requests alone.
      if (key.budgetUsd !== null || key.tpmLimit !== null) decoded = routed?.canonical ?? (prepared ? null : decodeForReservation(format, body));
      const prompt = reservedPrompt(decoded, buf.length, prepared ?? (decoded ? null : undecodedPrompt(body)));
      const got = acquireReserved(limiter, key, targets, prompt, (ts) => reservationUsage(ts, body, buf, key, prompt), routed === null);
      const a = got instanceof Promise ? await got : got;
      reservation = a.reservation;
      if (a.dropped.length > 0) {
        reportTrimmed(svc, res, routed ? 'router' : 'named', a.dropped.map((t) => t.entry.id));
        if (routed) { routed.targets = [...a.kept]; routed.budgetDropped = a.dropped.map((t) => t.entry.id); } else reduced = a.kept;
      }
    }
  } catch (e) {
    // Nothing is sent upstream after a refusal here: a reservation already taken goes back to the key.
    if (reservation) void reservation.release();
    sendError(res, e, envelope, { 'x-inference-id': id });
    svc.books.rejected({ id, route, format, requested, resolved: entry?.id ?? null, key: client.key, ip: client.ip, error: e, startedAt, body, bodyText });
    // Refused after the router decided (the key's budget or rate limit): the decision its headers name is recorded.
    if (routed) svc.router?.refused(id, routed, asGatewayError(e).status);
    return;
  }
  const stream = body.stream === true;
  const r: InferenceRequest = {
    id, cfg, res, startedAt, clientFormat: format, body, stream, clientHeaders: req.headers, clientQuery: queryOf(req.url),
    includeUsage: format === 'anthropic-messages' || (body.stream_options as { include_usage?: boolean } | undefined)?.include_usage === true,
    signal: abort.signal,
    clientGone: () => clientGone,
    canonical: routed?.canonical ?? decoded,
    prepared,
    inputEstimate,
  };
  let outcome;
  const total = setTimeout(() => abort.abort(new DOMException('total timeout', 'TimeoutError')), cfg.upstream.totalTimeoutMs);
  try {
    outcome = await dispatch(r, entry, svc.health, svc.books.dispatchHooks, routed ? routed.targets : reduced, routed !== null);
  } catch (e) {
    sendError(res, e, envelope, { 'x-inference-id': id });
    outcome = { status: 500, error: e instanceof GatewayError ? e : new GatewayError('internal_error', 'internal error'), served: null, attempts: [], usage: null, finishReason: null, ttftMs: null, adjustments: [] };
  }
  clearTimeout(total);
  // A body the pool prepared: its images were counted there (this thread holds only its parameters).
  if (prepared && prepared.images > 0) outcome.inputImages = prepared.images;
  if (outcome.error && !res.headersSent && !clientGone) sendError(res, outcome.error, envelope, { 'x-inference-id': id });
  const cost = svc.books.completed({ id, route, format, requested, key: client.key, ip: client.ip, startedAt, body, bodyText, stream, outcome, reservation, cfg });
  // Measured latency and error rate per provider come from every request's attempts, routed or not.
  svc.router?.observe(outcome);
  if (routed) svc.router?.completed(id, routed, outcome, cost);
  ext?.finished(outcome, client, id);
}

/** The query string of a request URL, without `?` ('' when none). */
const queryOf = (url: string | undefined): string => {
  const q = url === undefined ? -1 : url.indexOf('?');
  return q < 0 ? '' : url!.slice(q + 1);
};
