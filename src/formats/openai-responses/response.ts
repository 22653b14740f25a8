// The Responses `response` object: its skeleton (the request's parameters echoed as the API does),
// status from the stop reason, usage, and the whole object for a non-streamed answer.
import type { CanonicalResponse, StopReason, Usage } from '../canonical.ts';
import { isRecord } from '../errors.ts';
import { itemPrefix, outputItem, outputItemId } from './items.ts';
import { toolOrigins } from './tools.ts';

type Rec = Record<string, unknown>;

/** Canonical usage -> Responses usage: input counts cached reads and cache writes, as OpenAI's does. */
export function responsesUsage(u: Partial<Usage>): Rec {
  const input = (u.input_tokens ?? 0) + (u.cache_read_input_tokens ?? 0) + (u.cache_creation_input_tokens ?? 0);
  const output = u.output_tokens ?? 0;
  return {
    input_tokens: input,
    input_tokens_details: { cached_tokens: u.cache_read_input_tokens ?? 0 },
    output_tokens: output,
    output_tokens_details: { reasoning_tokens: u.reasoning_tokens ?? 0 },
    total_tokens: input + output,
  };
}

/** `completed`, or `incomplete` with the reason the API gives (output limit, content filter). */
export function statusOf(stop: StopReason | null): { status: 'completed' | 'incomplete'; incomplete_details: Rec | null } {
  if (stop === 'max_tokens') return { status: 'incomplete', incomplete_details: { reason: 'max_output_tokens' } };
  if (stop === 'refusal') return { status: 'incomplete', incomplete_details: { reason: 'content_filter' } };
  return { status: 'completed', incomplete_details: null };
}

const orNull = (v: unknown): unknown => (v === undefined ? null : v);

/** The response object before any output: what response.created carries. */
export function responseSkeleton(id: string, model: string, request: Rec, createdAt: number): Rec {
  const reasoning = isRecord(request.reasoning) ? request.reasoning : {};
  const text = isRecord(request.text) ? request.text : {};
  return {
    id,
    object: 'response',
    created_at: createdAt,
    status: 'in_progress',
    background: false,
    completed_at: null,
    error: null,
    incomplete_details: null,
    instructions: orNull(request.instructions),
    max_output_tokens: orNull(request.max_output_tokens),
    max_tool_calls: orNull(request.max_tool_calls),
    model,
    output: [],
    parallel_tool_calls: request.parallel_tool_calls ?? true,
    previous_response_id: orNull(request.previous_response_id),
    prompt_cache_key: orNull(request.prompt_cache_key),
    reasoning: { effort: orNull(reasoning.effort), summary: orNull(reasoning.summary) },
    safety_identifier: orNull(request.safety_identifier),
    service_tier: request.service_tier ?? 'default',
    store: request.store ?? true,
    temperature: request.temperature ?? 1,
    text: { format: text.format ?? { type: 'text' }, verbosity: text.verbosity ?? 'medium' },
    tool_choice: request.tool_choice ?? 'auto',
    tools: Array.isArray(request.tools) ? request.tools : [],
    top_logprobs: request.top_logprobs ?? 0,
    top_p: request.top_p ?? 1,
    truncation: request.truncation ?? 'disabled',
    usage: null,
    user: orNull(request.user),
    metadata: isRecord(request.metadata) ? request.metadata : {},
  };
}

/** Canonical answer -> a finished `response` object. `request` is the client's body (echoed fields, tool names). */
export function encodeResponsesResponse(res: CanonicalResponse, request: Rec, createdAt = Math.floor(Date.now() / 1000)): Rec {
  const origins = toolOrigins(request);
  const output: Rec[] = [];
  for (const b of res.content) {
    const item = outputItem(b, outputItemId(itemPrefix(b, origins), res.id, output.length), origins);
    if (item) output.push(item);
  }
  const out = responseSkeleton(res.id, res.model, request, createdAt);
  const st = statusOf(res.stop_reason);
  out.status = st.status;
  out.incomplete_details = st.incomplete_details;
  if (st.status === 'completed') out.completed_at = Math.floor(Date.now() / 1000);
  out.output = output;
  out.usage = responsesUsage(res.usage);
  return out;
}
