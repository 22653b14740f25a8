// The Responses API: POST /v1/responses through the shared inference flow (translated to any target),
// with the gateway's stored conversations around it (store, previous_response_id), and
// GET / DELETE /v1/responses/{id} and GET /v1/responses/{id}/input_items over the stored rows.
import type { IncomingMessage, ServerResponse } from 'node:http';
import type { InferenceOutcome } from '../engine/context.ts';
import { GatewayError } from '../gateway-error.ts';
import { ResponseStore } from '../responses/store.ts';
import { storedInputItems } from '../responses/rows.ts';
import { parseAndValidate } from '../workers/convert-core.ts';
import type { Store } from '../store/types.ts';
import { handleInference, type InferenceExtension } from './inference.ts';
import { sendError, sendJson } from './envelope.ts';
import { parseJsonObject, readBody, requireJsonContentType } from './body.ts';
import { resolveModel } from '../engine/plan.ts';
import { validateResponsesRequest } from '../formats/openai-responses/validate.ts';
import { clientCodecFor, relayCodecFor } from '../formats/registry.ts';
import { countPromptTokensSliced } from '../tokens/index.ts';
import { decodePathSegment, type ClientInfo, type RouteParams } from './routes.ts';
import type { Services } from './services.ts';
import { throttledLog } from '../util/throttled-log.ts';

type Rec = Record<string, unknown>;

const stores = new WeakMap<Store, ResponseStore>();
/** A database outage fails every stored response's write and retry: one line at once, then one per 10 s. */
const logFailure = throttledLog();
/** One ResponseStore per database (built on first use, so services need no new field). */
export function responseStoreOf(svc: Services): ResponseStore | null {
  const db = svc.store;
  if (!db) return null;
  let s = stores.get(db);
  if (!s) {
    const rs = s = new ResponseStore(db.sql, (e) => logFailure('stored responses', (e as Error).message), svc.responseWrites ?? undefined);
    stores.set(db, rs);
    svc.metrics.attachStoredResponses(() => rs.retryStats());
  }
  return s;
}

/** Shutdown: the stored responses' last writes (before the write thread closes); how many were lost. */
export async function closeResponseStore(svc: Services): Promise<number> {
  const s = svc.store ? stores.get(svc.store) : undefined;
  return s ? await s.close() : 0;
}

const scopeOf = (client: ClientInfo): string => client.key?.id ?? '';

/**
 * Response ids are the gateway's UUIDv7 (valid feedback ids). Clients that expect OpenAI's shape may
 * send them back as `resp_<uuid>`: the prefix is accepted and dropped everywhere an id is read.
 */
export function responseIdOf(raw: string): string {
  return raw.startsWith('resp_') ? raw.slice(5) : raw;
}

/** Puts the stored turns of `previous_response_id` before `input`; returns the (unprefixed) id it named. */
export async function prependHistory(svc: Services, body: Rec, client: ClientInfo): Promise<string | null> {
  if (typeof body.previous_response_id !== 'string') return null;
  const rs = responseStoreOf(svc);
  if (!rs) throw new GatewayError('previous_response_not_found', 'this gateway stores no responses (no database)', { param: 'previous_response_id' });
  const id = responseIdOf(body.previous_response_id);
  const history = await rs.conversation(id, scopeOf(client));
  body.input = [...history, ...(typeof body.input === 'string' ? [{ type: 'message', role: 'user', content: body.input }] : body.input as Rec[])];
  return id;
}

/**
 * The extension that turns the shared inference flow into the Responses API's stored conversations.
 * Large bodies stay with the worker pool: `body` is then their parameters only, and only a request
 * chained with previous_response_id is parsed here (the stored turns go into its `input`). The stored
 * input items are extracted from the request bytes by the store's write thread.
 */
function storedConversation(svc: Services): InferenceExtension {
  let ownInput: unknown = null;
  let raw: Buffer | null = null;
  let store = false;
  let previous: string | null = null;
  return {
    pooled: true,
    async prepare(body, client, _id, bytes, pooled) {
      const rs = responseStoreOf(svc);
      const retention = svc.holder.current.responses.retentionMs;
      store = body.store !== false && retention > 0 && rs !== null;
      // The answer says what really happened: not stored when storage is off.
      if (body.store !== false && !store) body.store = false;
      raw = bytes;
      if (typeof body.previous_response_id !== 'string') { ownInput = pooled ? null : body.input; return; }
      // History goes into `input`: a pooled body is parsed here after all (its store flag as decided above).
      const full = pooled ? { ...parseAndValidate(bytes, 'openai-responses', svc.holder.current.server.jsonMaxDepth), store: body.store } : body;
      ownInput = full.input;
      previous = await prependHistory(svc, full, client);
      return pooled ? full : undefined;
    },
    finished(outcome: InferenceOutcome, client, id) {
      if (!store || outcome.status !== 200 || outcome.error || typeof outcome.result !== 'object' || outcome.result === null) return;
      const response = outcome.result as Rec;
      if (response.status === 'failed') return;
      const now = Date.now();
      // Items parsed here are kept for reads until the row commits; the writer extracts its own from the bytes.
      responseStoreOf(svc)?.save({
        id, keyId: scopeOf(client), createdAt: now, expiresAt: now + svc.holder.current.responses.retentionMs, previousId: previous,
        inputItems: ownInput === null ? null : storedInputItems(ownInput, id), response,
      }, raw!);
    },
  };
}

export function handleCreateResponse(svc: Services, req: IncomingMessage, res: ServerResponse, client: ClientInfo): Promise<void> {
  return handleInference(svc, req, res, '/v1/responses', 'openai-responses', client, storedConversation(svc));
}

/**
 * POST /v1/responses/input_tokens (the SDK's responses.inputTokens.count): the prompt tokens a
 * create request would send, stored turns of previous_response_id included, counted by src/tokens
 * for the target model (exact for OpenAI families, an estimate elsewhere; x-gateway-token-count).
 */
export async function handleInputTokens(svc: Services, req: IncomingMessage, res: ServerResponse, client: ClientInfo): Promise<void> {
  const cfg = svc.holder.current;
  requireJsonContentType(req);
  const body = validateResponsesRequest(parseJsonObject(await readBody(req, cfg.server.bodyLimitBytes), cfg.server.jsonMaxDepth));
  const entry = resolveModel(cfg, body.model as string);
  if (client.key) svc.keys?.checkModel(client.key, entry.id);
  await prependHistory(svc, body, client);
  // A model whose provider serves the Responses API itself takes the API's own items (web_search_call,
  // item_reference, ...) as they are: they are counted as their text, where decodeRequest refuses them
  // as it must for a model reached by translation.
  const codec = clientCodecFor('openai-responses');
  const native = codec.readForRanking !== undefined && relayCodecFor(entry.provider, 'openai-responses') !== undefined;
  const count = await countPromptTokensSliced(native ? codec.readForRanking!(body).req : codec.decodeRequest(body), entry.id);
  sendJson(res, 200, JSON.stringify({ object: 'response.input_tokens', input_tokens: count.tokens }), {
    'x-gateway-token-count': count.exact ? `exact:${count.method}` : count.method,
  });
}

/** GET /v1/responses/{id} and GET /v1/responses/{id}/input_items (the route's `*` part is `id[/input_items]`). */
export async function handleGetResponse(svc: Services, _req: IncomingMessage, res: ServerResponse, p: RouteParams, client: ClientInfo): Promise<void> {
  const rest = p.path.slice('/v1/responses/'.length);
  const slash = rest.indexOf('/');
  const id = responseIdOf(decodePathSegment(slash < 0 ? rest : rest.slice(0, slash)));
  const sub = slash < 0 ? null : rest.slice(slash + 1);
  if (sub !== null && sub !== 'input_items') throw new GatewayError('route_not_found', `no route for GET ${p.path}`);
  if (p.query.get('stream') === 'true') throw new GatewayError('unsupported_parameter', 'replaying a stored response as a stream is not supported; GET it without stream', { param: 'stream' });
  const stored = await responseStoreOf(svc)?.get(id, scopeOf(client));
  if (!stored) throw new GatewayError('response_not_found', `Response with id '${id}' not found.`);
  if (sub === null) { sendJson(res, 200, JSON.stringify(stored.response)); return; }
  sendJson(res, 200, JSON.stringify(inputItemsPage(stored.inputItems, p.query)));
}

/** OpenAI's list page: `limit` 1-100 (20), `order` desc (default) or asc, `after` an item id. */
function inputItemsPage(items: Rec[], q: URLSearchParams): Rec {
  const limit = q.has('limit') ? Number(q.get('limit')) : 20;
  if (!Number.isInteger(limit) || limit < 1 || limit > 100) throw new GatewayError('invalid_parameter', "'limit' must be an integer from 1 to 100", { param: 'limit' });
  const order = q.get('order') ?? 'desc';
  if (order !== 'asc' && order !== 'desc') throw new GatewayError('invalid_parameter', "'order' must be 'asc' or 'desc'", { param: 'order' });
  let list = order === 'desc' ? [...items].reverse() : items;
  const after = q.get('after');
  if (after !== null) {
    const at = list.findIndex((it) => it.id === after);
    if (at < 0) throw new GatewayError('invalid_parameter', `no input item '${after}' in this response`, { param: 'after' });
    list = list.slice(at + 1);
  }
  const data = list.slice(0, limit);
  return { object: 'list', data, first_id: data[0]?.id ?? null, last_id: data.at(-1)?.id ?? null, has_more: list.length > limit };
}

/**
 * POST /v1/responses/{id}/cancel (the SDK's responses.cancel). Only a background response can be
 * cancelled, and this gateway runs none (create refuses `background`): a stored response of the
 * caller's is a 400 saying so, any other id a 404, as for GET. Any other POST under /v1/responses/{id}
 * is no route (before, such paths fell to the pass-through routes: "'model' is required").
 */
export async function handlePostResponseSub(svc: Services, _req: IncomingMessage, _res: ServerResponse, p: RouteParams, client: ClientInfo): Promise<void> {
  const rest = p.path.slice('/v1/responses/'.length);
  const slash = rest.indexOf('/');
  if (slash < 0 || rest.slice(slash + 1) !== 'cancel') throw new GatewayError('route_not_found', `no route for POST ${p.path}`);
  const id = responseIdOf(decodePathSegment(rest.slice(0, slash)));
  const stored = await responseStoreOf(svc)?.get(id, scopeOf(client));
  if (!stored) throw new GatewayError('response_not_found', `Response with id '${id}' not found.`);
  throw new GatewayError('invalid_parameter', 'Only responses created with background=true can be cancelled; this gateway runs no background responses.');
}

export async function handleDeleteResponse(svc: Services, _req: IncomingMessage, res: ServerResponse, p: RouteParams, client: ClientInfo): Promise<void> {
  const id = responseIdOf(p.id ?? '');
  const deleted = await responseStoreOf(svc)?.delete(id, scopeOf(client));
  if (!deleted) { sendError(res, new GatewayError('response_not_found', `Response with id '${id}' not found.`), 'openai'); return; }
  sendJson(res, 200, JSON.stringify({ id, object: 'response', deleted: true }));
}
