// Router mode over HTTP: `model: "router"` on the chat-completions and messages routes (a decision
// and its attempt plan, with the explanation headers), and the dry run POST /v1/router/rank.
import type { IncomingMessage, ServerResponse } from 'node:http';
import type { Config, ModelEntry } from '../config/types.ts';
import type { ClientFormat } from '../formats/codec.ts';
import type { PreparedRequest } from '../engine/convert-pool.ts';
import type { KeyRecord } from '../store/types.ts';
import type { Routed } from '../router/service.ts';
import { parseAndValidate } from '../workers/convert-core.ts';
import { resolveModel } from '../engine/plan.ts';
import { GatewayError } from '../gateway-error.ts';
import { uuidv7 } from '../util/uuid.ts';
import { readBody, requireJsonContentType } from './body.ts';
import { sendJson } from './envelope.ts';
import { prependHistory } from './responses-route.ts';
import type { ClientInfo, RouteParams } from './routes.ts';
import type { Services } from './services.ts';

type Rec = Record<string, unknown>;

export function routerOf(svc: Services): NonNullable<Services['router']> {
  if (!svc.router) throw new GatewayError('not_implemented', 'router mode is not available on this gateway', { param: 'model' });
  return svc.router;
}

export type RoutedInference = { routed: Routed; body: Rec; entry: ModelEntry };

const ROUTER_MODEL = [Buffer.from('"model":"router"'), Buffer.from('"model": "router"')];
const SNIFF_BYTES = 512;

/**
 * Whether a large body asks for router mode, read off its bytes without parsing: `"model":"router"`
 * in its first or last 512 bytes (clients write `model` first, some last). Inside a JSON string a
 * quote is escaped, so the sequence is a key and its value wherever it occurs; at worst it belongs to
 * a nested object (the body is then parsed here instead of in the pool: the same result). A body that
 * writes it otherwise goes to the pool, and routing parses it again.
 */
export function namesRouter(buf: Buffer): boolean {
  const reach = SNIFF_BYTES + ROUTER_MODEL[1]!.length; // a match that starts within the bytes counts
  const head = buf.subarray(0, reach);
  const tail = buf.subarray(Math.max(0, buf.length - reach));
  return ROUTER_MODEL.some((p) => head.includes(p) || tail.includes(p));
}

/** Whether a body sets a cost bound (max_cost or max_cost_per_million_tokens), which the router enforces. */
export const boundsCost = (body: Rec): boolean => body.max_cost !== undefined || body.max_cost_per_million_tokens !== undefined;

/**
 * Refuses a cost bound on a route that cannot enforce one before the call (the OpenAI-style
 * pass-through routes, /v1/responses/compact): dropped like the other router fields, it would let
 * the call spend past a ceiling the caller set.
 */
export function refuseCostBound(body: Rec, path: string): void {
  if (!boundsCost(body)) return;
  const param = body.max_cost !== undefined ? 'max_cost' : 'max_cost_per_million_tokens';
  throw new GatewayError('invalid_parameter', `'${param}' is enforced on /v1/chat/completions, /v1/messages and /v1/responses only; ${path} cannot bound its cost before the call: leave it out`, { param });
}

/**
 * A named model's request with a cost bound as the router takes it: that model the only candidate,
 * so the bound holds as in router mode (refused when one output token would pass it, output capped
 * below it otherwise) instead of being dropped as a router-only field.
 */
export const onlyCandidate = (body: Rec, named: ModelEntry): Rec => ({ ...body, model: 'router', models: [named.id] });

/**
 * Routes a validated `model: "router"` body: the plan's first target stands as the request's model
 * for limits and records. A body the worker pool prepared is parsed here (routing reads the prompt),
 * with the parameters `body` holds.
 * The decision headers are set on `res` at once, so the answer, or the router's 400, carries them.
 * A promise only when long new text is counted in slices first (RouterService.routeSliced).
 */
export function routeInference(svc: Services, cfg: Config, body: Rec, prepared: PreparedRequest | null, format: string, key: KeyRecord | null, route: string, id: string, res: ServerResponse): RoutedInference | Promise<RoutedInference> {
  // The pool's body holds the parameters (every field but the content) as a route's extension left them
  // (the Responses route sets store: false when it stores nothing): they win over the bytes' own.
  const full = prepared ? { ...parseAndValidate(prepared.bytes, format as Parameters<typeof parseAndValidate>[1], cfg.server.jsonMaxDepth), ...body } : body;
  const done = (routed: Routed): RoutedInference => {
    const h = routed.headers;
    for (const k in h) res.setHeader(k, h[k]!);
    return { routed, body: full, entry: routed.targets[0]!.entry };
  };
  const routed = routerOf(svc).routeSliced(cfg, full, format, key, route, id);
  return routed instanceof Promise ? routed.then(done) : done(routed);
}

/**
 * The model the router would choose for a validated `model: "router"` body now (its first target),
 * without calling it or recording the decision: what count_tokens counts for. The router's 400s as route() throws them.
 */
export async function routedModel(svc: Services, cfg: Config, body: Rec, format: string, key: KeyRecord | null, route: string): Promise<ModelEntry> {
  const r = routerOf(svc).routeSliced(cfg, body, format, key, route, uuidv7(), false);
  return (r instanceof Promise ? await r : r).targets[0]!.entry;
}

/** `?format=` of the dry run: the route whose body it takes. */
const RANK_FORMATS: Readonly<Record<string, 'openai-chat' | 'anthropic-messages' | 'openai-responses'>> = {
  chat: 'openai-chat', messages: 'anthropic-messages', responses: 'openai-responses',
};

/**
 * POST /v1/router/rank: the body of a chat-completions request (or, with ?format=messages, of a
 * messages request; with ?format=responses, of a Responses request, its previous_response_id's
 * stored turns included as the real route includes them) with `model` "router" or absent; answers
 * the ranking without calling a model.
 */
export async function handleRouterRank(svc: Services, req: IncomingMessage, res: ServerResponse, p: RouteParams, client: ClientInfo): Promise<void> {
  const router = routerOf(svc);
  const cfg = svc.holder.current;
  requireJsonContentType(req);
  const buf = await readBody(req, cfg.server.bodyLimitBytes);
  const q = p.query.get('format') ?? 'chat';
  const format = RANK_FORMATS[q];
  if (!format) throw new GatewayError('invalid_parameter', `'format' must be one of ${Object.keys(RANK_FORMATS).join(', ')}`, { param: 'format' });
  const body = dryRunBody(svc, cfg, buf, format, client.key);
  if (format === 'openai-responses') await prependHistory(svc, body, client);
  const id = uuidv7();
  const out = await router.rank(cfg, body, format, client.key, p.path, id);
  sendJson(res, 200, out.body, out.headers);
}

/**
 * A dry run's request body (POST /v1/router/rank, the dashboard's preview), parsed and validated as
 * the real route would: `model` may be left out (the dry run is router mode); a named model with a
 * cost bound is ranked as its only candidate, as src/http/inference.ts routes it.
 */
export function dryRunBody(svc: Services, cfg: Config, buf: Buffer, format: ClientFormat, key: KeyRecord | null): Rec {
  // A body that is not JSON goes to parseAndValidate as sent, which says what is wrong with it.
  let raw: unknown = null;
  try { raw = JSON.parse(buf.toString('utf8')); } catch { /* refused below */ }
  const isObj = raw !== null && typeof raw === 'object' && !Array.isArray(raw);
  const patched = isObj && (raw as Rec).model === undefined ? withRouterModel(buf, raw as Rec) : buf;
  const body = parseAndValidate(patched, format, cfg.server.jsonMaxDepth);
  if (body.model === 'router') return body;
  if (!boundsCost(body)) throw new GatewayError('invalid_parameter', "'model' must be \"router\" (or left out) for a ranking, or a named model with max_cost or max_cost_per_million_tokens", { param: 'model' });
  const named = resolveModel(cfg, body.model as string, { budgeted: key?.budgetUsd != null });
  if (key) svc.keys?.checkModel(key, named.id);
  return onlyCandidate(body, named);
}

/**
 * A JSON object's bytes with `"model":"router"` written in after its opening brace, every other byte
 * as sent: parsed and stringified again, a number JSON reads as Infinity (`"max_cost": 1e400`) would
 * become null, an unset bound, and the dry run would rank what the real route refuses with a 400.
 */
function withRouterModel(buf: Buffer, raw: Rec): Buffer {
  const open = buf.indexOf(0x7b); // `{`: the first byte that is not whitespace, since `raw` parsed as an object
  const rest = Object.keys(raw).length > 0 ? ',' : '';
  return Buffer.concat([buf.subarray(0, open + 1), Buffer.from(`"model":"router"${rest}`), buf.subarray(open + 1)]);
}
