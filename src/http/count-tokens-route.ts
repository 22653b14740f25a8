// POST /v1/messages/count_tokens for every model, in the Anthropic request shape, answer ({input_tokens})
// and error envelope. Anthropic targets answer themselves (the body is relayed to the provider's own
// count_tokens with the model rewritten); other targets are counted by src/tokens (exact for the OpenAI
// families, a measured estimate elsewhere), and so is an Anthropic target that cannot be reached.
// Counting is free: no record, no limiter charge; the key's model permissions still apply. With model
// "router", the count is for the model the router would choose for the body (no decision recorded).
import type { IncomingMessage, ServerResponse } from 'node:http';
import type { ModelEntry } from '../config/types.ts';
import { resolveModel } from '../engine/plan.ts';
import { exchangeJson, type JsonExchange } from '../engine/json-exchange.ts';
import { relayedQuery, withRelayedQuery } from '../engine/upstream.ts';
import { upstreamFailure } from '../engine/upstream-error.ts';
import { redactorFor } from '../engine/redact.ts';
import { clientCodecFor, codecFor } from '../formats/registry.ts';
import { validateMessagesRequest } from '../formats/anthropic-messages/validate.ts';
import { GATEWAY_ONLY_FIELDS } from '../formats/passthrough/openai-chat.ts';
import { GatewayError } from '../gateway-error.ts';
import { countPromptTokensSliced } from '../tokens/index.ts';
import { parseJsonObject, readBody, requireJsonContentType } from './body.ts';
import { sendJson } from './envelope.ts';
import { routedModel } from './router-mode.ts';
import type { ClientInfo } from './routes.ts';
import type { Services } from './services.ts';

type Rec = Record<string, unknown>;

/**
 * count_tokens takes no max_tokens; the Messages validator wants one (and checks a thinking budget
 * against it), so the largest the API accepts stands in while validating.
 */
const VALIDATION_MAX_TOKENS = 2 ** 31 - 1;

/** The provider's own count_tokens, with the client's declared query parameters (Claude Code sends ?beta=true). */
function call(svc: Services, entry: ModelEntry, body: Rec, req: IncomingMessage, signal: AbortSignal): Promise<JsonExchange> {
  const q = req.url?.indexOf('?') ?? -1;
  const path = q < 0 ? '/messages/count_tokens' : withRelayedQuery('/messages/count_tokens', relayedQuery(entry.provider, 'anthropic-messages', req.url!.slice(q + 1)).query);
  return exchangeJson(entry, path, body, req.headers, signal, svc.holder.current.upstream);
}

export async function handleCountTokens(svc: Services, req: IncomingMessage, res: ServerResponse, client: ClientInfo): Promise<void> {
  const cfg = svc.holder.current;
  requireJsonContentType(req);
  const raw = parseJsonObject(await readBody(req, cfg.server.bodyLimitBytes), cfg.server.jsonMaxDepth);
  if (raw.max_tokens !== undefined) throw new GatewayError('invalid_parameter', 'max_tokens: Extra inputs are not permitted', { param: 'max_tokens' });
  if (raw.stream !== undefined) throw new GatewayError('invalid_parameter', 'stream: Extra inputs are not permitted', { param: 'stream' });
  const body = validateMessagesRequest({ ...raw, max_tokens: VALIDATION_MAX_TOKENS });
  // model "router" (an agent with every model slot on the router): counted for the model the router
  // would choose for this body now (its key's allowed models are among the router's constraints).
  const routed = body.model === 'router';
  const entry = routed ? await routedModel(svc, cfg, body, 'anthropic-messages', client.key, '/v1/messages') : resolveModel(cfg, body.model as string);
  if (client.key && !routed) svc.keys?.checkModel(client.key, entry.id);
  const chosen: Record<string, string> = routed ? { 'x-router-model': entry.id } : {};

  if (entry.provider.format === 'anthropic-messages') {
    const out: Rec = { ...raw };
    for (const f of GATEWAY_ONLY_FIELDS) delete out[f];
    out.model = entry.upstream;
    const abort = new AbortController();
    res.on('close', () => { if (!res.writableFinished) abort.abort(); });
    const timer = setTimeout(() => abort.abort(new DOMException('total timeout', 'TimeoutError')), cfg.upstream.totalTimeoutMs);
    const up = await call(svc, entry, out, req, abort.signal).finally(() => clearTimeout(timer));
    if ('status' in up && up.status < 500 && up.status !== 429) {
      if (up.status >= 400) throw upstreamFailure(codecFor(entry.provider.format), entry, up.status, up.text, up.headers, null, redactorFor(cfg)).error;
      let json: unknown;
      try { json = JSON.parse(up.text); } catch { json = null; }
      if (json !== null && typeof json === 'object' && typeof (json as Rec).input_tokens === 'number') {
        sendJson(res, 200, JSON.stringify({ input_tokens: (json as Rec).input_tokens }), { ...chosen, 'x-gateway-provider': entry.provider.id, 'x-gateway-token-count': 'provider' });
        return;
      }
    }
    // The provider could not answer (down, overloaded, unreadable): the gateway's own estimate instead.
    if (res.destroyed) return;
  }
  const canonical = clientCodecFor('anthropic-messages').decodeRequest(body);
  const count = await countPromptTokensSliced(canonical, entry.id);
  sendJson(res, 200, JSON.stringify({ input_tokens: count.tokens }), {
    ...chosen, 'x-gateway-provider': entry.provider.id, 'x-gateway-token-count': count.exact ? `exact:${count.method}` : count.method,
  });
}
