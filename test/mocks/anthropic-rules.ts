// What the Anthropic Messages API refuses, checked by the mock before it answers: unknown
// parameters, misplaced roles, unanswered or orphaned tool calls, the thinking rules (budget,
// sampling, forced tool use, the final assistant turn of a tool loop), model limits and
// structured-output schemas. Messages follow the API's own wording where it is documented.
import { signatureFor, signatureIssuer } from './text.ts';

type Json = Record<string, unknown>;
const obj = (v: unknown): Json => (typeof v === 'object' && v !== null && !Array.isArray(v) ? (v as Json) : {});
const blocks = (content: unknown): Json[] => (typeof content === 'string' ? [{ type: 'text', text: content }] : Array.isArray(content) ? content.map(obj) : []);

/** Top-level fields of MessageCreateParams (@anthropic-ai/sdk 1.11), plus the beta ones and the header they need. */
const KNOWN = new Set([
  'model', 'messages', 'max_tokens', 'cache_control', 'container', 'diagnostics', 'inference_geo', 'metadata', 'output_config',
  'service_tier', 'speed', 'stop_sequences', 'stream', 'system', 'temperature', 'thinking', 'tool_choice', 'tools', 'top_k', 'top_p',
]);
const BETA_FIELDS: Record<string, string> = { context_management: 'context-management-', output_format: 'structured-outputs-', mcp_servers: 'mcp-client-' };

/** What a model generation accepts. Unknown names (test models) are treated as the newest generation. */
export type AnthropicModelSpec = { maxOutput: number; thinking: boolean; adaptive: boolean; systemMessages: boolean; structured: boolean };
/**
 * Claude from Opus 4.7 on (Opus 4.7, 4.8, every family's 5 and later; Bedrock ids too) takes no sampling
 * controls: "Setting temperature, top_p, or top_k to any non-default value on Claude Opus 4.7 returns a
 * 400 error"; the API's words are "`temperature` is deprecated for this model.".
 */
export function samplingRemoved(model: string): boolean {
  const m = /claude-(opus|sonnet|haiku|fable|mythos)-(\d+)(?:[-.](\d{1,2})(?!\d))?/.exec(model);
  if (m === null) return false;
  const major = Number(m[2]); const minor = Number(m[3] ?? 0);
  return major >= 5 || (m[1] === 'opus' && major === 4 && minor >= 7);
}

/** The sampling control such a model refuses in `s` (Anthropic's field names), or null. */
export function removedSamplingProblem(model: string, s: { temperature?: unknown; top_p?: unknown; top_k?: unknown }): string | null {
  if (!samplingRemoved(model)) return null;
  if (s.temperature !== undefined && s.temperature !== 1) return '`temperature` is deprecated for this model.';
  for (const k of ['top_p', 'top_k'] as const) if (s[k] !== undefined) return `\`${k}\` is deprecated for this model.`;
  return null;
}

export function anthropicModel(name: string): AnthropicModelSpec {
  if (/claude-3-(opus|sonnet|haiku)-/.test(name)) return { maxOutput: 4096, thinking: false, adaptive: false, systemMessages: false, structured: false };
  if (/claude-3-5-/.test(name)) return { maxOutput: 8192, thinking: false, adaptive: false, systemMessages: false, structured: false };
  if (/claude-3-7-/.test(name)) return { maxOutput: 64000, thinking: true, adaptive: false, systemMessages: false, structured: false };
  if (/claude-opus-4(-1)?-20/.test(name)) return { maxOutput: 32000, thinking: true, adaptive: false, systemMessages: false, structured: /4-1/.test(name) };
  if (/claude-sonnet-4-20/.test(name)) return { maxOutput: 64000, thinking: true, adaptive: false, systemMessages: false, structured: false };
  if (/claude-\w+-4-5/.test(name)) return { maxOutput: 64000, thinking: true, adaptive: false, systemMessages: false, structured: true };
  if (/claude-\w+-4-[67]/.test(name)) return { maxOutput: 128000, thinking: true, adaptive: true, systemMessages: false, structured: true };
  return { maxOutput: 128000, thinking: true, adaptive: true, systemMessages: true, structured: true };
}

function betaHeader(headers: Record<string, string | string[] | undefined>): string {
  const v = headers['anthropic-beta'];
  return Array.isArray(v) ? v.join(',') : v ?? '';
}

/** Structured-output schemas: every object must say additionalProperties: false. */
function schemaProblem(s: unknown, at: string): string | null {
  const o = obj(s);
  if (o.type === 'object' && o.additionalProperties !== false) return `${at}: For 'object' type, 'additionalProperties' must be explicitly set to false`;
  for (const [k, v] of Object.entries(obj(o.properties))) {
    const p = schemaProblem(v, `${at}.properties.${k}`);
    if (p) return p;
  }
  return o.items !== undefined ? schemaProblem(o.items, `${at}.items`) : null;
}

function thinkingProblems(b: Json, messages: Json[], model: string, spec: AnthropicModelSpec): string | null {
  const t = obj(b.thinking);
  if (t.type === undefined || t.type === 'disabled') return null;
  if (!spec.thinking) return `'${model}' does not support thinking.`;
  if (t.type === 'adaptive' && !spec.adaptive) return `thinking.type: 'adaptive' is not supported on '${model}'; use 'enabled' with budget_tokens`;
  if (t.type === 'enabled') {
    if (typeof t.budget_tokens !== 'number' || t.budget_tokens < 1024) return 'thinking.enabled.budget_tokens: Input should be greater than or equal to 1024';
    if (t.budget_tokens >= (b.max_tokens as number)) return '`max_tokens` must be greater than `thinking.budget_tokens`. Please consult our documentation at https://docs.claude.com/en/docs/build-with-claude/extended-thinking#max-tokens-and-context-window-size';
  }
  if (b.temperature !== undefined && b.temperature !== 1) return '`temperature` may only be set to 1 when thinking is enabled. Please consult our documentation at https://docs.claude.com/en/docs/build-with-claude/extended-thinking#feature-compatibility';
  if (b.top_k !== undefined) return '`top_k` must be unset when thinking is enabled. Please consult our documentation at https://docs.claude.com/en/docs/build-with-claude/extended-thinking#feature-compatibility';
  if (typeof b.top_p === 'number' && b.top_p < 0.95) return '`top_p` must be greater than or equal to 0.95 or unset when thinking is enabled. Please consult our documentation at https://docs.claude.com/en/docs/build-with-claude/extended-thinking#feature-compatibility';
  const tc = obj(b.tool_choice);
  if (tc.type === 'any' || tc.type === 'tool') return 'Thinking may not be enabled when tool_choice forces tool use.';
  // In a tool loop, the assistant turn holding the calls must open with thinking.
  const last = messages.at(-1);
  if (last?.role === 'user' && blocks(last.content).some((x) => x.type === 'tool_result')) {
    for (let i = messages.length - 2; i >= 0; i--) {
      if (messages[i]!.role !== 'assistant') continue;
      const first = blocks(messages[i]!.content)[0];
      if (first && first.type !== 'thinking' && first.type !== 'redacted_thinking') {
        return `messages.${i}.content.0.type: Expected \`thinking\` or \`redacted_thinking\`, but found \`${String(first.type)}\`. When \`thinking\` is enabled, a final \`assistant\` message must start with a thinking block (preceeding the lastmost set of \`tool_use\` and \`tool_result\` blocks). We recommend you include thinking blocks from previous turns. To avoid this requirement, disable \`thinking\`. Please consult our documentation at https://docs.claude.com/en/docs/build-with-claude/extended-thinking`;
      }
      break;
    }
  }
  return null;
}

const CHANGE_KINDS = ['tool_reference', 'mcp_tool_reference', 'mcp_toolset_reference'];
const tags = (list: string[]): string => list.map((t) => `'${t}'`).join(', ');

/**
 * A system message's blocks: text, and with the `mid-conversation-tool-changes` beta tool additions
 * and removals (Claude Code reads "Input tag '...'" to fall back to its ToolSearch announcement). A
 * `tool_definition` also needs the `inline-tools` beta; a reference must name a tool in `tools` or one
 * an earlier addition defined, and a definition a name no tool has; MCP references need an
 * `mcp_servers` entry of that name. `named` holds the names defined so far.
 */
function systemBlockProblem(c: Json, at: string, beta: string, named: Set<string>, servers: Set<string>): string | null {
  const changes = beta.includes('mid-conversation-tool-changes-');
  if (c.type === 'text') return null;
  if (!changes || (c.type !== 'tool_addition' && c.type !== 'tool_removal')) {
    return `${at}: Input tag '${String(c.type)}' found using 'type' does not match any of the expected tags: ${tags(changes ? ['text', 'tool_addition', 'tool_removal'] : ['text'])}`;
  }
  const tool = obj(c.tool);
  const kinds = c.type === 'tool_addition' && beta.includes('inline-tools-') ? [...CHANGE_KINDS, 'tool_definition'] : CHANGE_KINDS;
  if (!kinds.includes(String(tool.type))) return `${at}.${String(c.type)}.tool: Input tag '${String(tool.type)}' found using 'type' does not match any of the expected tags: ${tags(kinds)}`;
  if (tool.type === 'tool_definition') {
    const name = String(obj(tool.definition).name);
    if (named.has(name)) return `${at}.tool_addition.tool.definition.name: '${name}' is already used by a tool in \`tools\` or an earlier tool_addition`;
    if (!/^[a-zA-Z0-9_-]{1,128}$/.test(name)) return `${at}.tool_addition.tool.definition.custom.name: String should match pattern '^[a-zA-Z0-9_-]{1,128}$'`;
    named.add(name);
    return null;
  }
  if (tool.type === 'tool_reference') return named.has(String(tool.name)) ? null : `${at}.${String(c.type)}.tool.name: no tool named '${String(tool.name)}' in \`tools\` or defined by an earlier tool_addition`;
  return servers.has(String(tool.server_name)) ? null : `${at}.${String(c.type)}.tool.server_name: MCP server '${String(tool.server_name)}' is not defined in \`mcp_servers\``;
}

/** Roles, system-message placement and blocks, tool_use/tool_result pairing and thinking signatures. */
function messageProblems(b: Json, messages: Json[], spec: AnthropicModelSpec, model: string, beta: string): string | null {
  let prev = '';
  // tool_use / tool_result blocks need no `tools` since 2025-02-27 (API release notes of that day;
  // anthropic-sdk-python#849, where Anthropic says tools may be skipped when sending tool results);
  // before, "Requests which include `tool_use` or `tool_result` blocks must define tools." No rule here.
  const named = new Set((Array.isArray(b.tools) ? b.tools : []).map((t) => String(obj(t).name)));
  const servers = new Set((Array.isArray(b.mcp_servers) ? b.mcp_servers : []).map((s) => String(obj(s).name)));
  for (const [i, m] of messages.entries()) {
    if (m.role === 'system') {
      // Generally available from Claude Opus 4.8 on, no beta header needed (the API's SystemMessageParam;
      // "No beta header is required", Anthropic's what's-new page for Claude 4.8). Claude Code 2.1.197 sent
      // `mid-conversation-system-2026-04-07`; 2.1.332 sends none and falls back to a user turn on a 400.
      if (!spec.systemMessages) return `messages.${i}.role: Input should be 'user' or 'assistant'`;
      if (prev !== 'user' && prev !== 'system') return `messages.${i}: a system message must follow a user message; the opening system prompt goes in the top-level \`system\` parameter (${model})`;
      for (const [j, c] of blocks(m.content).entries()) {
        const p = systemBlockProblem(c, `messages.${i}.content.${j}`, beta, named, servers);
        if (p) return p;
      }
    } else if (m.role !== 'user' && m.role !== 'assistant') return `messages.${i}.role: Input should be 'user', 'assistant' or 'system'`;
    prev = String(m.role);
    const content = blocks(m.content);
    for (const [j, c] of content.entries()) {
      // An omitted-display block comes back without its text; its signature still has to be Claude's.
      const sig = typeof c.signature === 'string' ? c.signature : '';
      const signed = c.thinking === '' ? signatureIssuer(sig) === 'anthropic' : sig === signatureFor(String(c.thinking ?? ''), 'anthropic');
      if (c.type === 'thinking' && !signed) return `messages.${i}.content.${j}: Invalid \`signature\` in \`thinking\` block`;
    }
    const calls = content.filter((c) => c.type === 'tool_use').map((c) => String(c.id));
    if (m.role === 'assistant' && calls.length > 0) {
      const next = messages[i + 1];
      const answered = new Set(next?.role === 'user' ? blocks(next.content).filter((c) => c.type === 'tool_result').map((c) => String(c.tool_use_id)) : []);
      const missing = calls.filter((id) => !answered.has(id));
      if (missing.length > 0) return `messages.${i}: \`tool_use\` ids were found without \`tool_result\` blocks immediately after: ${missing.join(', ')}. Each \`tool_use\` block must have a corresponding \`tool_result\` block in the next message.`;
    }
    // Tool call ids: letters, digits, '_' and '-' (ids made elsewhere, "functions.get_weather:0", are refused).
    for (const [j, c] of content.entries()) {
      if ((c.type === 'tool_use' && !/^[a-zA-Z0-9_-]+$/.test(String(c.id))) || (c.type === 'tool_result' && !/^[a-zA-Z0-9_-]+$/.test(String(c.tool_use_id)))) {
        return `messages.${i}.content.${j}.${String(c.type)}.${c.type === 'tool_use' ? 'id' : 'tool_use_id'}: String should match pattern '^[a-zA-Z0-9_-]+$'`;
      }
    }
    if (m.role === 'user') {
      const before = messages[i - 1];
      const offered = new Set(before?.role === 'assistant' ? blocks(before.content).filter((c) => c.type === 'tool_use').map((c) => String(c.id)) : []);
      for (const [j, c] of content.entries()) {
        if (c.type === 'tool_result' && !offered.has(String(c.tool_use_id))) {
          return `messages.${i}.content.${j}: unexpected \`tool_use_id\` found in \`tool_result\` blocks: ${String(c.tool_use_id)}. Each \`tool_result\` block must have a corresponding \`tool_use\` block in the previous message.`;
        }
      }
    }
  }
  return null;
}

/** An image block (in a turn or a tool result) is `{type, source, cache_control}`: any other key is an extra input (OpenAI's `detail` among them). */
function imageBlockProblem(messages: Json[]): string | null {
  const IMAGE_KEYS = new Set(['type', 'source', 'cache_control']);
  for (const [i, m] of messages.entries()) {
    for (const [j, c] of (Array.isArray(m.content) ? m.content.map(obj) : []).entries()) {
      const inner = c.type === 'tool_result' && Array.isArray(c.content) ? c.content.map(obj).map((x, k) => [`content.${k}.`, x] as const) : [['', c] as const];
      for (const [at, x] of inner) {
        if (x.type !== 'image') continue;
        const extra = Object.keys(x).find((k) => !IMAGE_KEYS.has(k));
        if (extra !== undefined) return `messages.${i}.content.${j}.${at}image.${extra}: Extra inputs are not permitted`;
      }
    }
  }
  return null;
}

/** The 400 message for a request the real API refuses, or null when it would be accepted. */
export function anthropicRequestProblem(b: Json, headers: Record<string, string | string[] | undefined>): string | null {
  const beta = betaHeader(headers);
  for (const k of Object.keys(b)) {
    if (KNOWN.has(k)) continue;
    const needs = BETA_FIELDS[k];
    if (needs !== undefined && beta.includes(needs)) continue;
    return `${k}: Extra inputs are not permitted`;
  }
  const model = String(b.model);
  const spec = anthropicModel(model);
  if (typeof b.max_tokens !== 'number' || !Number.isInteger(b.max_tokens) || b.max_tokens < 0) return 'max_tokens: Input should be a valid integer';
  if (b.max_tokens > spec.maxOutput) return `max_tokens: ${b.max_tokens} > ${spec.maxOutput}, which is the maximum allowed number of output tokens for ${model}`;
  if (typeof b.temperature === 'number' && (b.temperature < 0 || b.temperature > 1)) return 'temperature: Input should be less than or equal to 1';
  const removed = removedSamplingProblem(model, b);
  if (removed) return removed;
  // Custom tools' names: `^[a-zA-Z0-9_-]{1,128}$` (128 since 2026; 64 before).
  for (const [i, t] of (Array.isArray(b.tools) ? b.tools : []).map(obj).entries()) {
    if (t.type !== undefined && t.type !== 'custom') continue;
    const name = String(t.name);
    if (name.length > 128) return `tools.${i}.custom.name: String should have at most 128 characters`;
    if (!/^[a-zA-Z0-9_-]+$/.test(name)) return `tools.${i}.custom.name: String should match pattern '^[a-zA-Z0-9_-]{1,128}$'`;
  }
  const messages = (b.messages as unknown[]).map(obj);
  const img = imageBlockProblem(messages);
  if (img) return img;
  const m = messageProblems(b, messages, spec, model, beta);
  if (m) return m;
  if (b.tool_choice !== undefined && !(Array.isArray(b.tools) && b.tools.length > 0)) return 'tool_choice may only be specified while providing tools.';
  const t = thinkingProblems(b, messages, model, spec);
  if (t) return t;
  const oc = obj(b.output_config);
  if (oc.effort !== undefined && !['low', 'medium', 'high', 'xhigh', 'max'].includes(String(oc.effort))) return "output_config.effort: Input should be 'low', 'medium', 'high', 'xhigh' or 'max'";
  const format = oc.format ?? b.output_format;
  if (format !== undefined) {
    if (!spec.structured) return `'${model}' does not support structured outputs (output_config.format).`;
    const p = schemaProblem(obj(format).schema, 'output_config.format.schema');
    if (p) return p;
  }
  return null;
}
