// Upstream side of the Messages codec: CanonicalRequest -> Anthropic /messages body.
import type { Block, CanonicalRequest, TextBlock, Thinking, ToolChoice } from '../canonical.ts';
import type { EncodedRequest, TargetInfo } from '../codec.ts';
import { GatewayError } from '../../http/errors.ts';
import { encodeBlock, encodeTool } from './blocks.ts';

type Rec = Record<string, unknown>;

/**
 * Anthropic requires max_tokens; OpenAI clients may omit it. The gateway then asks for this many
 * (plus the thinking budget when thinking is on). The engine may set a catalog-derived value first.
 */
export const DEFAULT_MAX_TOKENS = 4096;

/** Reasoning effort -> thinking budget, used when the target reasons and no explicit thinking was asked. */
export const THINKING_BUDGET_BY_EFFORT = { minimal: 1024, low: 2048, medium: 8192, high: 24576 } as const;

/** Anthropic's smallest accepted thinking budget. */
const MIN_BUDGET = 1024;

/** JSON mode has no Anthropic switch; the instruction below is appended to the system prompt instead. */
export const JSON_MODE_INSTRUCTION = 'Respond with a single valid JSON object and nothing else.';

const ANTHROPIC_SERVICE_TIERS = new Set(['auto', 'standard_only']);

/**
 * Thinking without a signature came from another provider's reasoning (OpenAI-compatible
 * `reasoning_content`); Anthropic rejects unsigned thinking, so such blocks are not sent back.
 */
function isSendable(b: Block): boolean {
  return b.type !== 'thinking' || b.signature !== '';
}

function thinkingFor(req: CanonicalRequest, target: TargetInfo): Thinking | undefined {
  if (req.thinking) return req.thinking;
  if (req.reasoning_effort && target.capabilities?.reasoning === true) {
    return { type: 'enabled', budget_tokens: THINKING_BUDGET_BY_EFFORT[req.reasoning_effort] };
  }
  return undefined;
}

/** The budget must stay below max_tokens: a budget that does not fit is lowered, or thinking is skipped. */
function fitThinking(thinking: Thinking | undefined, maxTokens: number | undefined): { thinking?: Thinking; max_tokens: number } {
  if (thinking?.type !== 'enabled') return { ...(thinking ? { thinking } : {}), max_tokens: maxTokens ?? DEFAULT_MAX_TOKENS };
  if (maxTokens === undefined) return { thinking, max_tokens: thinking.budget_tokens + DEFAULT_MAX_TOKENS };
  if (thinking.budget_tokens < maxTokens) return { thinking, max_tokens: maxTokens };
  if (maxTokens - 1 >= MIN_BUDGET) return { thinking: { type: 'enabled', budget_tokens: maxTokens - 1 }, max_tokens: maxTokens };
  return { max_tokens: maxTokens };
}

function encodeToolChoice(tc: ToolChoice | undefined, parallel: boolean | undefined): Rec | undefined {
  const out: Rec | undefined = tc ? { ...tc } : undefined;
  if (parallel === false && out?.type !== 'none') return { ...(out ?? { type: 'auto' }), disable_parallel_tool_use: true };
  return out;
}

/**
 * Dropped because Anthropic has no equivalent and they only tune sampling or presentation:
 * frequency/presence penalties, logit_bias, seed, verbosity, free-form metadata (Anthropic's
 * metadata takes only user_id) and OpenAI service tiers other than auto. A temperature above 1
 * is refused rather than clamped. reasoning_effort becomes a thinking budget on reasoning targets.
 */
export function encodeMessagesRequest(req: CanonicalRequest, target: TargetInfo): EncodedRequest {
  if (req.temperature !== undefined && req.temperature > 1) {
    throw new GatewayError('invalid_parameter', `temperature ${req.temperature} is above 1, the maximum of ${target.provider}`, { param: 'temperature' });
  }
  const fitted = fitThinking(thinkingFor(req, target), req.max_tokens);
  const body: Rec = { model: target.upstreamModel, max_tokens: fitted.max_tokens };
  const system: TextBlock[] = [...req.system];
  if (req.response_format?.type === 'json_object') system.push({ type: 'text', text: JSON_MODE_INSTRUCTION });
  if (system.length > 0) body.system = system.map(encodeBlock);
  body.messages = req.messages.map((m) => ({ role: m.role, content: m.content.filter(isSendable).map(encodeBlock) }));
  // Thinking the gateway derived from reasoning_effort must not make the request invalid:
  // Anthropic refuses temperature and top_k alongside thinking, so those two yield.
  const derived = req.thinking === undefined && fitted.thinking?.type === 'enabled';
  for (const k of ['temperature', 'top_p', 'top_k'] as const) {
    if (req[k] !== undefined && !(derived && k !== 'top_p')) body[k] = req[k];
  }
  if (req.stop && req.stop.length > 0) body.stop_sequences = req.stop;
  if (req.tools && req.tools.length > 0) body.tools = req.tools.map(encodeTool);
  const choice = encodeToolChoice(req.tool_choice, req.parallel_tool_calls);
  if (choice) body.tool_choice = choice;
  if (fitted.thinking) body.thinking = fitted.thinking;
  if (req.response_format?.type === 'json_schema') body.output_config = { format: { type: 'json_schema', schema: req.response_format.schema } };
  if (req.user !== undefined) body.metadata = { user_id: req.user };
  if (req.service_tier !== undefined && ANTHROPIC_SERVICE_TIERS.has(req.service_tier)) body.service_tier = req.service_tier;
  if (req.container !== undefined) body.container = req.container;
  if (req.context_management !== undefined) body.context_management = req.context_management;
  if (req.stream) body.stream = true;
  return { path: '/messages', body };
}
