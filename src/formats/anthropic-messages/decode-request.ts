// Client side of the Messages codec: a validated /v1/messages body -> CanonicalRequest.
import type { Block, CacheControl, CanonicalRequest, Message, ReasoningEffort, TextBlock, Thinking, ThinkingDisplay, ToolChoice } from '../canonical.ts';
import { isRecord } from '../errors.ts';
import { parseContextEdits } from '../context-edits.ts';
import { qualifyHistory } from '../signatures.ts';
import { cacheControlOf, decodeBlocks, decodeSystemBlock, decodeTool, textBlock } from './blocks.ts';

type Rec = Record<string, unknown>;

function decodeSystem(system: unknown): TextBlock[] {
  if (typeof system === 'string') return system === '' ? [] : [{ type: 'text', text: system }];
  return Array.isArray(system) ? system.filter(isRecord).map(textBlock) : [];
}

function decodeToolChoice(tc: Rec): ToolChoice {
  const choice: ToolChoice = tc.type === 'tool'
    ? { type: 'tool', name: String(tc.name) }
    : { type: tc.type === 'any' || tc.type === 'none' ? tc.type : 'auto' };
  if (typeof tc.disable_parallel_tool_use === 'boolean') choice.disable_parallel_tool_use = tc.disable_parallel_tool_use;
  return choice;
}

/** `between_tools` (think only between tool calls) is carried as adaptive: the model decides when. */
function decodeThinking(t: Rec): Thinking {
  if (t.type === 'disabled') return { type: 'disabled' };
  const display: { display?: ThinkingDisplay } = t.display === 'summarized' || t.display === 'omitted' ? { display: t.display } : {};
  if (t.type === 'enabled') return { type: 'enabled', budget_tokens: Number(t.budget_tokens), ...display };
  return { type: 'adaptive', ...display };
}

const EFFORTS = new Set<unknown>(['low', 'medium', 'high', 'xhigh', 'max']);

/**
 * Structured output: the GA `output_config.format` and the beta `output_format` both carry
 * `{type: "json_schema", schema}`. Anthropic schemas have no name, so the canonical name is
 * 'response'. `output_config.effort` (low/medium/high) becomes the canonical reasoning effort.
 */
function decodeOutput(body: Rec, req: CanonicalRequest): void {
  const cfg = isRecord(body.output_config) ? body.output_config : {};
  const format = isRecord(cfg.format) ? cfg.format : isRecord(body.output_format) ? body.output_format : null;
  if (format && format.type === 'json_schema' && isRecord(format.schema)) {
    req.response_format = { type: 'json_schema', name: 'response', schema: format.schema, strict: true };
  }
  if (EFFORTS.has(cfg.effort)) req.reasoning_effort = cfg.effort as ReasoningEffort;
}

/**
 * A system turn: its text and tool changes, and the effort its `output_config` sets. One marked
 * `clear_at: next_user_message` is shown to the model only until a later user turn exists: past
 * that its text is left out, but its tool changes still hold (a tool added stays offered), so the
 * message is kept only when it has some. `mcp` records where the first MCP tool change is.
 */
function decodeSystemTurn(m: Rec, i: number, cleared: boolean, mcp: { at?: string }): Message | null {
  const raw = typeof m.content === 'string' ? [{ type: 'text', text: m.content }] : Array.isArray(m.content) ? m.content.filter(isRecord) : [];
  const content: Block[] = [];
  raw.forEach((b: Rec, j) => {
    const block = decodeSystemBlock(b, `messages[${i}].content[${j}]`);
    if (block.type !== 'text' && block.tool.type.startsWith('mcp_')) mcp.at ??= `messages[${i}].content[${j}].tool`;
    if (!cleared || block.type !== 'text') content.push(block);
  });
  const cfg = isRecord(m.output_config) ? m.output_config : {};
  const effort = !cleared && EFFORTS.has(cfg.effort) ? { effort: cfg.effort as ReasoningEffort } : {};
  if (cleared && content.length === 0) return null;
  return { role: 'system', content, ...effort };
}

/**
 * Documents with `citations.enabled`: Anthropic answers citing them, which no other format does; the
 * answer comes without citations, said so where each was asked for.
 */
function citationsAsked(raw: Rec[]): string[] {
  // Plain loops: this runs on every Messages request, over every block of the conversation.
  const out: string[] = [];
  for (let i = 0; i < raw.length; i++) {
    const content = raw[i]!.content;
    if (!Array.isArray(content)) continue;
    for (let j = 0; j < content.length; j++) {
      const b: unknown = content[j];
      if (isRecord(b) && b.type === 'document' && isRecord(b.citations) && b.citations.enabled === true) out.push(`messages[${i}].content[${j}].citations=dropped`);
    }
  }
  return out;
}

/** Turns in canonical form (system turns as decodeSystemTurn reads them). */
function decodeMessages(raw: Rec[], req: CanonicalRequest): Message[] {
  let lastUser = -1;
  raw.forEach((m, i) => { if (m.role === 'user') lastUser = i; });
  const out: Message[] = [];
  const mcp: { at?: string } = {};
  raw.forEach((m, i) => {
    if (m.role === 'system') {
      const turn = decodeSystemTurn(m, i, m.clear_at === 'next_user_message' && i < lastUser, mcp);
      if (turn !== null) out.push(turn);
    } else {
      out.push({ role: m.role === 'assistant' ? 'assistant' : 'user', content: decodeBlocks(m.content, `messages[${i}].content`) });
    }
  });
  if (mcp.at !== undefined) req.mcp_tool_change = mcp.at;
  return out;
}

/**
 * Top-level `cache_control` (automatic caching): the marker the API puts on the last cacheable block
 * of the request, put there by the gateway so that targets which cache by markers (Bedrock's
 * cachePoint) cache the same prefix. Thinking blocks take no marker; a block with one keeps its own.
 */
function markLastCacheable(req: CanonicalRequest, cc: CacheControl): void {
  for (let i = req.messages.length - 1; i >= 0; i--) {
    const last = req.messages[i]!.content.findLast((b) => b.type !== 'thinking' && b.type !== 'redacted_thinking');
    if (last === undefined) continue;
    last.cache_control ??= cc;
    return;
  }
}

const present = (v: unknown): boolean => v !== undefined && v !== null;

/**
 * Beta asks of the Messages API (@anthropic-ai/sdk 1.14 `beta.messages`) only Anthropic's server can act
 * on, each of which changes what the answer is: a `thread` continued from a previous message (the
 * client sends only the new turns; the history is held by Anthropic), a `compaction` request (the
 * answer is a compaction block), `mcp_servers` (Anthropic's MCP connector runs those tools). Refused
 * naming the field when translated (CanonicalRequest.native_only); relayed to Anthropic as sent.
 */
function anthropicOnly(body: Rec): CanonicalRequest['native_only'] {
  const only = (param: string, what: string): NonNullable<CanonicalRequest['native_only']> =>
    ({ param, message: `'${param}' (${what}) is acted on only by Anthropic's Messages API, and this model is reached by translation; send the request without '${param}'` });
  if (isRecord(body.thread) && body.thread.type !== 'create') return only('thread', 'a conversation held by the server, continued');
  if (present(body.compaction)) return only('compaction', 'a compaction request');
  if (Array.isArray(body.mcp_servers) && body.mcp_servers.length > 0) return only('mcp_servers', "tools of Anthropic's MCP connector");
  return undefined;
}

/** Beta fields whose loss leaves the answer right: reported when translated. */
const ANTHROPIC_SERVICES = ['fallbacks', 'fallback_credit_token', 'billing_policy'] as const;

/** Body must have passed validateMessagesRequest; throws GatewayError for what cannot be represented. */
export function decodeMessagesRequest(body: Rec): CanonicalRequest {
  const req: CanonicalRequest = { model: String(body.model), system: decodeSystem(body.system), messages: [], stream: body.stream === true };
  req.messages = decodeMessages(body.messages as Rec[], req);
  // Raw signatures are Anthropic's; ones the gateway marked on a converted answer keep their signer.
  qualifyHistory(req.messages, 'anthropic-messages');
  for (const k of ['max_tokens', 'temperature', 'top_p', 'top_k'] as const) {
    if (typeof body[k] === 'number') req[k] = body[k];
  }
  if (Array.isArray(body.stop_sequences) && body.stop_sequences.length > 0) req.stop = body.stop_sequences.map(String);
  if (Array.isArray(body.tools) && body.tools.length > 0) req.tools = body.tools.map((t: Rec, i) => decodeTool(t, `tools[${i}]`));
  if (isRecord(body.tool_choice)) {
    req.tool_choice = decodeToolChoice(body.tool_choice);
    if (req.tool_choice.disable_parallel_tool_use !== undefined) req.parallel_tool_calls = !req.tool_choice.disable_parallel_tool_use;
  }
  if (isRecord(body.thinking)) req.thinking = decodeThinking(body.thinking);
  decodeOutput(body, req);
  if (isRecord(body.metadata) && typeof body.metadata.user_id === 'string') req.user = body.metadata.user_id;
  if (typeof body.service_tier === 'string') req.service_tier = body.service_tier;
  if (body.container !== undefined && body.container !== null) req.container = body.container;
  // Anthropic's own serving choices (fast output, where inference runs), which no other format takes.
  const serving = [...(body.speed === 'fast' ? ['speed=dropped(fast)'] : []), ...(typeof body.inference_geo === 'string' ? [`inference_geo=dropped(${body.inference_geo})`] : []),
    // Anthropic's prompt-cache diagnostics (`diagnostics.previous_message_id`), answered only by Anthropic.
    ...(isRecord(body.diagnostics) ? ['diagnostics=dropped'] : []),
    // A thread the server would create and hold: the answer is the same, the state is not kept.
    ...(isRecord(body.thread) && body.thread.type === 'create' ? ['thread=dropped(create)'] : []),
    ...ANTHROPIC_SERVICES.filter((k) => present(body[k])).map((k) => `${k}=dropped`)];
  // A tool change naming an MCP tool is refused where it stands, naming that field (src/formats/tool-changes.ts).
  const native = req.mcp_tool_change === undefined ? anthropicOnly(body) : undefined;
  if (native) req.native_only = native;
  const dropped = [...citationsAsked(body.messages as Rec[]), ...serving];
  if (dropped.length > 0) req.decode_adjustments = dropped;
  const cc = cacheControlOf(body.cache_control);
  if (cc) markLastCacheable(req, cc);
  if (body.context_management !== undefined && body.context_management !== null) {
    req.context_management = body.context_management;
    req.context_edits = parseContextEdits(body.context_management);
  }
  return req;
}
