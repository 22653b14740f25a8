// Client side of the Responses codec: a validated POST /v1/responses body -> CanonicalRequest.
// `previous_response_id` was already resolved by the route (the stored turns are in `input`);
// gateway-only fields (models, max_cost, extra, ...) are the engine's business and not read here.
import type { CanonicalRequest, ResponseFormat } from '../canonical.ts';
import { GatewayError } from '../../gateway-error.ts';
import { isRecord } from '../errors.ts';
import { decodeInput } from './items.ts';
import { canonicalToolName, decodeToolChoice, decodeTools } from './tools.ts';

type Rec = Record<string, unknown>;

function responseFormat(f: Rec): ResponseFormat {
  if (f.type === 'json_schema') {
    const out: ResponseFormat = { type: 'json_schema', name: String(f.name), schema: isRecord(f.schema) ? f.schema : {} };
    if (typeof f.strict === 'boolean') out.strict = f.strict;
    if (typeof f.description === 'string') out.description = f.description;
    return out;
  }
  return { type: f.type === 'json_object' ? 'json_object' : 'text' };
}

/**
 * Log probabilities (`include: ["message.output_text.logprobs"]`, `top_logprobs`): only a Responses
 * server returns them (output_text.logprobs), so a translated request asking for them is refused
 * naming the field (CanonicalRequest.native_only) rather than answered without them.
 */
function logprobsAsk(body: Rec): CanonicalRequest['native_only'] {
  const only = (param: string): NonNullable<CanonicalRequest['native_only']> =>
    ({ param, message: `'${param}' asks for log probabilities of the output tokens, which only an OpenAI Responses server returns, and this model is reached by translation; send the request without it` });
  if (Array.isArray(body.include) && body.include.includes('message.output_text.logprobs')) return only('include');
  return typeof body.top_logprobs === 'number' && body.top_logprobs > 0 ? only('top_logprobs') : undefined;
}

/** Body must have passed validateResponsesRequest; throws GatewayError for what cannot be represented. */
export function decodeResponsesRequest(body: Rec): CanonicalRequest {
  const { system, messages } = decodeInput(body.input);
  if (typeof body.instructions === 'string' && body.instructions !== '') system.unshift({ type: 'text', text: body.instructions });
  if (messages.length === 0) throw new GatewayError('invalid_parameter', "'input' holds no user or assistant content to answer", { param: 'input' });
  const req: CanonicalRequest = { model: String(body.model), system, messages, stream: body.stream === true };
  // A stream always reports usage (in response.completed), so the engine meters it like any other.
  if (req.stream) req.stream_include_usage = true;
  const logprobs = logprobsAsk(body);
  if (logprobs) req.native_only = logprobs;
  if (typeof body.max_output_tokens === 'number') req.max_tokens = body.max_output_tokens;
  if (typeof body.temperature === 'number') req.temperature = body.temperature;
  if (typeof body.top_p === 'number') req.top_p = body.top_p;
  const decoded = decodeTools(body.tools);
  let tools = decoded.tools;
  const tc = body.tool_choice;
  if (isRecord(tc) && tc.type === 'allowed_tools' && Array.isArray(tc.tools)) {
    // The allowed subset is what the model may call: the others are left out of the request.
    const allowed = new Set(tc.tools.map((t: Rec) => canonicalToolName(String(t.name), t.namespace)));
    tools = tools.filter((t) => allowed.has(t.name));
  }
  if (tools.length > 0) req.tools = tools;
  const choice = decodeToolChoice(tc, body.parallel_tool_calls, decoded.dropped);
  if (choice) req.tool_choice = choice;
  // OpenAI's own services around the answer (moderation, server-side compaction, cache options, image
  // output options, access programs), which no translated target has: reported, not sent.
  const served = (['moderation', 'context_management', 'prompt_cache_options', 'image', 'access_programs'] as const)
    .filter((k) => body[k] !== undefined && body[k] !== null).map((k) => `${k}=dropped`);
  const dropped = [...decoded.dropped.map((t) => `tools.${t}=dropped (hosted by OpenAI)`), ...served];
  if (dropped.length > 0) req.decode_adjustments = dropped;
  if (typeof body.parallel_tool_calls === 'boolean') req.parallel_tool_calls = body.parallel_tool_calls;
  const text = isRecord(body.text) ? body.text : {};
  if (isRecord(text.format)) req.response_format = responseFormat(text.format);
  if (typeof text.verbosity === 'string') req.verbosity = text.verbosity as NonNullable<CanonicalRequest['verbosity']>;
  // The canonical scale is OpenAI's (none .. xhigh); each target codec maps it to its own controls.
  if (isRecord(body.reasoning) && typeof body.reasoning.effort === 'string') req.reasoning_effort = body.reasoning.effort as CanonicalRequest['reasoning_effort'];
  const user = body.safety_identifier ?? body.user;
  if (typeof user === 'string') req.user = user;
  if (isRecord(body.metadata)) req.metadata = body.metadata as Record<string, string>;
  if (typeof body.service_tier === 'string') req.service_tier = body.service_tier;
  if (typeof body.prompt_cache_key === 'string') req.prompt_cache_key = body.prompt_cache_key;
  if (body.prompt_cache_retention === 'in_memory' || body.prompt_cache_retention === '24h') req.prompt_cache_retention = body.prompt_cache_retention;
  return req;
}
