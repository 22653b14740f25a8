// Upstream side of the Messages codec: CanonicalRequest -> Anthropic /messages body, for clients of
// another format (Anthropic clients are relayed as they are, see passthrough/anthropic-messages.ts).
import type { Block, CanonicalRequest, Message, TextBlock, ToolChoice } from '../canonical.ts';
import type { EncodedRequest, TargetInfo } from '../codec.ts';
import { GatewayError } from '../../gateway-error.ts';
import { formatInstruction } from '../fallbacks.ts';
import { claudeSampling, claudeThinkingConflict, FALLBACK_MAX_TOKENS, planClaudeThinking } from '../reasoning.ts';
import { ownThinking, signerOf } from '../signatures.ts';
import { encodeBlock, encodeTool } from './blocks.ts';

type Rec = Record<string, unknown>;

/** The output limit asked for when neither the client nor the catalog names one. */
export const DEFAULT_MAX_TOKENS = FALLBACK_MAX_TOKENS;

const ANTHROPIC_SERVICE_TIERS = new Set(['auto', 'standard_only']);

const CLAUDE = signerOf('anthropic-messages', '')!;

/**
 * Anthropic rejects unsigned thinking (another provider's `reasoning_content`): not sent back. Signed
 * thinking goes back only with a signature Claude issued, unwrapped (ownThinking, src/formats/signatures.ts).
 */
const sendable = (m: Message): Block[] => m.content.filter((b) => b.type !== 'thinking' || b.signature !== '');

function encodeToolChoice(tc: ToolChoice | undefined, parallel: boolean | undefined): Rec | undefined {
  const out: Rec | undefined = tc ? { ...tc } : undefined;
  if (parallel === false && out?.type !== 'none') return { ...(out ?? { type: 'auto' }), disable_parallel_tool_use: true };
  return out;
}

/**
 * Mid-conversation system turns go into the top-level system prompt: only the newest Claude
 * models take `role: "system"` messages, and the catalog does not say which. One with tool changes
 * or an effort of its own stays a system turn, as it came: it means nothing anywhere else, and a
 * client sends it only to a model that takes it.
 */
function turns(messages: readonly Message[], system: TextBlock[], adjustments: string[]): Rec[] {
  const out: Rec[] = [];
  messages.forEach((m, i) => {
    if (m.role === 'system' && m.effort === undefined && m.content.every((b) => b.type === 'text')) {
      for (const b of m.content) if (b.type === 'text') system.push({ type: 'text', text: b.text });
      adjustments.push(`messages[${i}].role=system->system`);
      return;
    }
    const turn: Rec = { role: m.role };
    // A system turn may set an effort and say nothing else.
    if (m.role !== 'system' || m.content.length > 0) turn.content = sendable(m).map(encodeBlock);
    if (m.effort !== undefined) turn.output_config = { effort: m.effort };
    out.push(turn);
  });
  return out;
}

/**
 * Structured output: a strict json_schema on a model with structured outputs becomes
 * `output_config.format` (Anthropic always enforces it strictly); a non-strict schema, or a model
 * without the capability, gets the schema as an instruction instead. JSON mode is an instruction.
 */
function structuredOutput(req: CanonicalRequest, target: TargetInfo, system: TextBlock[], adjustments: string[]): Rec | undefined {
  const rf = req.response_format;
  if (rf === undefined || rf.type === 'text') return undefined;
  if (rf.type === 'json_schema' && rf.strict === true && target.model?.capabilities.structured_output !== false) {
    return { type: 'json_schema', schema: rf.schema };
  }
  system.push({ type: 'text', text: formatInstruction(rf) });
  const why = rf.type === 'json_object' ? 'json_object' : rf.strict === true ? 'json_schema(model lacks structured output)' : 'json_schema(not strict)';
  adjustments.push(`response_format=${why}->system instruction`);
  return undefined;
}

/**
 * Parameters Anthropic has no equivalent for, which only tune sampling, presentation or OpenAI's own
 * caching and tiers: frequency/presence penalties, logit_bias, seed, verbosity, OpenAI's prompt cache
 * key and retention, free-form metadata (Anthropic's metadata takes only user_id) and OpenAI service
 * tiers. Left out, each reported.
 */
function dropUnsupported(req: CanonicalRequest, adjustments: string[]): void {
  if (req.logit_bias !== undefined && Object.keys(req.logit_bias).length > 0) adjustments.push('logit_bias=dropped');
  for (const k of ['frequency_penalty', 'presence_penalty', 'seed', 'verbosity', 'prompt_cache_key', 'prompt_cache_retention'] as const) {
    if (req[k] !== undefined) adjustments.push(`${k}=dropped`);
  }
  if (req.metadata !== undefined && Object.keys(req.metadata).length > 0) adjustments.push('metadata=dropped(Anthropic takes only user_id)');
  if (req.service_tier !== undefined && !ANTHROPIC_SERVICE_TIERS.has(req.service_tier)) adjustments.push(`service_tier=dropped(${req.service_tier})`);
}

/**
 * What has no equivalent is dropped and reported (dropUnsupported). A temperature above 1 is
 * refused rather than clamped. Reasoning asks follow planClaudeThinking (src/formats/reasoning.ts).
 */
export function encodeMessagesRequest(req: CanonicalRequest, target: TargetInfo): EncodedRequest {
  if (req.temperature !== undefined && req.temperature > 1) {
    throw new GatewayError('invalid_parameter', `temperature ${req.temperature} is above 1, the maximum of ${target.provider}`, { param: 'temperature' });
  }
  const adjustments: string[] = [];
  dropUnsupported(req, adjustments);
  const system: TextBlock[] = [...req.system];
  // Claude's own signatures unwrapped, thinking another model signed left out: what is sent, and what
  // the thinking rule below reads.
  const own = ownThinking(req.messages, CLAUDE, adjustments);
  const messages = turns(own, system, adjustments);
  const history = own.some((m) => m.role === 'system') ? own.filter((m) => m.role !== 'system') : own;
  const plan = planClaudeThinking(req, target, claudeThinkingConflict(req.tool_choice, history, sendable));
  adjustments.push(...plan.adjustments);
  const format = structuredOutput(req, target, system, adjustments);
  const body: Rec = { model: target.upstreamModel, max_tokens: plan.maxTokens };
  if (system.length > 0) body.system = system.map(encodeBlock);
  body.messages = messages;
  Object.assign(body, claudeSampling(req, plan.on, adjustments));
  if (req.stop && req.stop.length > 0) body.stop_sequences = req.stop;
  if (req.tools && req.tools.length > 0) {
    // Strict tool schemas are structured output too: without the capability the flag is left out.
    const strictOk = target.model?.capabilities.structured_output !== false;
    body.tools = req.tools.map((t, i) => {
      if (t.strict === undefined || strictOk) return encodeTool(t);
      adjustments.push(`tools[${i}].strict=dropped(model lacks structured output)`);
      return encodeTool({ ...t, strict: undefined });
    });
  }
  // Anthropic refuses tool_choice without tools; one that forced a tool cannot be honoured, and says so.
  const choice = encodeToolChoice(req.tool_choice, req.parallel_tool_calls);
  if (choice && body.tools !== undefined) body.tool_choice = choice;
  else if (choice?.type === 'any' || choice?.type === 'tool') adjustments.push(`tool_choice=${String(choice.type)}->dropped(no tools)`);
  if (plan.thinking) body.thinking = plan.thinking;
  if (format || plan.effort) body.output_config = { ...(plan.effort ? { effort: plan.effort } : {}), ...(format ? { format } : {}) };
  if (req.user !== undefined) body.metadata = { user_id: req.user };
  if (req.service_tier !== undefined && ANTHROPIC_SERVICE_TIERS.has(req.service_tier)) body.service_tier = req.service_tier;
  if (req.container !== undefined) body.container = req.container;
  if (req.context_management !== undefined) body.context_management = req.context_management;
  if (req.stream) body.stream = true;
  return { path: '/messages', body, adjustments };
}
