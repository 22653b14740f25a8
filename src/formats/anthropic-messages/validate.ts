// Validation of POST /v1/messages bodies: types, ranges and block shapes, each failure a 400 naming
// the field path. Well-formed blocks the gateway cannot carry are refused later, by the decoder.
import { GatewayError } from '../../gateway-error.ts';
import { isRecord } from '../errors.ts';
import { num, obj, oneOf, posInt, str } from '../openai-chat/validate.ts';

type Rec = Record<string, unknown>;

const bad = (param: string, message: string): GatewayError => new GatewayError('invalid_parameter', message, { param });
const missing = (param: string): GatewayError => new GatewayError('missing_parameter', `'${param}' is required`, { param });

function needString(v: unknown, param: string): void {
  if (v === undefined) throw missing(param);
  if (typeof v !== 'string') throw bad(param, `'${param}' must be a string`);
}

function cacheControl(v: unknown, at: string): void {
  if (v === undefined || v === null) return;
  if (!isRecord(v) || v.type !== 'ephemeral') throw bad(`${at}.type`, `'${at}.type' must be 'ephemeral'`);
  oneOf(v.ttl, `${at}.ttl`, ['5m', '1h']);
}

function source(s: unknown, at: string, kinds: readonly string[]): void {
  if (!isRecord(s)) throw s === undefined ? missing(at) : bad(at, `'${at}' must be an object`);
  if (typeof s.type !== 'string') throw missing(`${at}.type`);
  if (!kinds.includes(s.type)) return; // other source kinds (file ids...) are refused by the decoder
  if (s.type === 'url') return needString(s.url, `${at}.url`);
  needString(s.media_type, `${at}.media_type`);
  needString(s.data, `${at}.data`);
}

function block(b: unknown, at: string): void {
  if (!isRecord(b)) throw bad(at, `'${at}' must be an object`);
  if (typeof b.type !== 'string') throw b.type === undefined ? missing(`${at}.type`) : bad(`${at}.type`, `'${at}.type' must be a string`);
  cacheControl(b.cache_control, `${at}.cache_control`);
  switch (b.type) {
    case 'text': return needString(b.text, `${at}.text`);
    case 'image': return source(b.source, `${at}.source`, ['base64', 'url']);
    case 'document':
      if (b.citations !== undefined && b.citations !== null) {
        if (!isRecord(b.citations)) throw bad(`${at}.citations`, `'${at}.citations' must be an object`);
        if (b.citations.enabled !== undefined && typeof b.citations.enabled !== 'boolean') throw bad(`${at}.citations.enabled`, `'${at}.citations.enabled' must be a boolean`);
      }
      return source(b.source, `${at}.source`, ['base64', 'url', 'text']);
    case 'tool_use':
      needString(b.id, `${at}.id`);
      needString(b.name, `${at}.name`);
      if (!isRecord(b.input)) throw bad(`${at}.input`, `'${at}.input' must be an object`);
      return;
    case 'tool_result':
      needString(b.tool_use_id, `${at}.tool_use_id`);
      if (b.is_error !== undefined && typeof b.is_error !== 'boolean') throw bad(`${at}.is_error`, `'${at}.is_error' must be a boolean`);
      if (b.content === undefined || typeof b.content === 'string') return;
      if (!Array.isArray(b.content)) throw bad(`${at}.content`, `'${at}.content' must be a string or an array of blocks`);
      return b.content.forEach((c: unknown, k) => block(c, `${at}.content[${k}]`));
    case 'thinking':
      needString(b.thinking, `${at}.thinking`);
      return needString(b.signature, `${at}.signature`);
    case 'redacted_thinking': return needString(b.data, `${at}.data`);
    case 'tool_reference': return needString(b.tool_name, `${at}.tool_name`);
    default: return;
  }
}

function content(c: unknown, at: string): void {
  if (typeof c === 'string') return;
  if (c === undefined) throw missing(at);
  if (!Array.isArray(c)) throw bad(at, `'${at}' must be a string or an array of content blocks`);
  c.forEach((b: unknown, j) => block(b, `${at}[${j}]`));
}

/** One tools entry (in `tools`, or carried by a tool_addition's `tool_definition`). */
function toolEntry(t: unknown, at: string): void {
  if (!isRecord(t)) throw bad(at, `'${at}' must be an object`);
  if (t.type !== undefined && t.type !== null && t.type !== 'custom') return; // server tools: refused by the decoder
  if (typeof t.name !== 'string' || !/^[a-zA-Z0-9_-]{1,128}$/.test(t.name)) throw bad(`${at}.name`, `'${at}.name' must be 1-128 letters, digits, '_' or '-'`);
  str(t.description, `${at}.description`);
  if (t.input_schema === undefined) throw missing(`${at}.input_schema`);
  obj(t.input_schema, `${at}.input_schema`);
  cacheControl(t.cache_control, `${at}.cache_control`);
  if (t.defer_loading !== undefined && typeof t.defer_loading !== 'boolean') throw bad(`${at}.defer_loading`, `'${at}.defer_loading' must be a boolean`);
}

function tools(list: unknown): void {
  if (list === undefined || list === null) return;
  if (!Array.isArray(list)) throw bad('tools', "'tools' must be an array");
  list.forEach((t: unknown, i) => toolEntry(t, `tools[${i}]`));
}

function toolChoice(tc: unknown): void {
  if (tc === undefined || tc === null) return;
  if (!isRecord(tc)) throw bad('tool_choice', "'tool_choice' must be an object");
  if (tc.type === undefined) throw missing('tool_choice.type');
  oneOf(tc.type, 'tool_choice.type', ['auto', 'any', 'tool', 'none']);
  if (tc.type === 'tool') needString(tc.name, 'tool_choice.name');
  if (tc.disable_parallel_tool_use !== undefined && typeof tc.disable_parallel_tool_use !== 'boolean') {
    throw bad('tool_choice.disable_parallel_tool_use', "'tool_choice.disable_parallel_tool_use' must be a boolean");
  }
}

function thinking(t: unknown, maxTokens: number): void {
  if (t === undefined || t === null) return;
  if (!isRecord(t)) throw bad('thinking', "'thinking' must be an object");
  if (t.type === undefined) throw missing('thinking.type');
  oneOf(t.type, 'thinking.type', ['enabled', 'disabled', 'adaptive', 'between_tools']);
  oneOf(t.display, 'thinking.display', ['summarized', 'omitted']);
  if (t.type !== 'enabled') return;
  const b = t.budget_tokens;
  if (b === undefined) throw missing('thinking.budget_tokens');
  if (typeof b !== 'number' || !Number.isInteger(b) || b < 1024) throw bad('thinking.budget_tokens', "'thinking.budget_tokens' must be an integer of at least 1024");
  if (b >= maxTokens) throw bad('thinking.budget_tokens', "'thinking.budget_tokens' must be less than 'max_tokens'");
}

/** `output_config`: an effort level and the structured-output format (a JSON schema). */
function outputConfig(c: unknown): void {
  if (c === undefined || c === null) return;
  if (!isRecord(c)) throw bad('output_config', "'output_config' must be an object");
  oneOf(c.effort, 'output_config.effort', ['low', 'medium', 'high', 'xhigh', 'max']);
  if (c.format === undefined || c.format === null) return;
  if (!isRecord(c.format)) throw bad('output_config.format', "'output_config.format' must be an object");
  if (c.format.type !== 'json_schema') throw bad('output_config.format.type', "'output_config.format.type' must be 'json_schema'");
  if (!isRecord(c.format.schema)) throw bad('output_config.format.schema', "'output_config.format.schema' must be an object");
}

/** `context_management.edits`: each edit an object with a string `type` (strategies are versioned names). */
function contextManagement(cm: unknown): void {
  if (cm === undefined || cm === null) return;
  if (!isRecord(cm)) throw bad('context_management', "'context_management' must be an object");
  if (cm.edits === undefined || cm.edits === null) return;
  if (!Array.isArray(cm.edits)) throw bad('context_management.edits', "'context_management.edits' must be an array");
  cm.edits.forEach((e: unknown, i) => {
    if (!isRecord(e) || typeof e.type !== 'string') throw bad(`context_management.edits[${i}].type`, `'context_management.edits[${i}].type' must be a string`);
  });
}

const ADDED = ['tool_reference', 'tool_definition', 'mcp_tool_reference', 'mcp_toolset_reference'];
const REMOVED = ['tool_reference', 'mcp_tool_reference', 'mcp_toolset_reference'];

/**
 * A tool change (Anthropic's `mid-conversation-tool-changes` beta): `tool` names a tool in `tools` or
 * one an earlier addition defined (`tool_reference`), carries a whole tools entry (`tool_definition`,
 * additions only), or names a tool or toolset of Anthropic's MCP connector. `named` holds the names
 * nameable so far; a definition adds its own.
 */
function toolChange(b: Rec, at: string, named: Set<string>): void {
  const t = b.tool;
  if (!isRecord(t)) throw t === undefined ? missing(`${at}.tool`) : bad(`${at}.tool`, `'${at}.tool' must be an object`);
  if (t.type === undefined) throw missing(`${at}.tool.type`);
  oneOf(t.type, `${at}.tool.type`, b.type === 'tool_addition' ? ADDED : REMOVED);
  if (t.type === 'tool_definition') {
    if (t.definition === undefined) throw missing(`${at}.tool.definition`);
    toolEntry(t.definition, `${at}.tool.definition`);
    if (isRecord(t.definition) && typeof t.definition.name === 'string') named.add(t.definition.name);
    return;
  }
  if (t.type !== 'tool_reference') needString(t.server_name, `${at}.tool.server_name`);
  if (t.type === 'mcp_toolset_reference') return;
  needString(t.name, `${at}.tool.name`);
  if (t.type === 'tool_reference' && !named.has(t.name as string)) {
    throw bad(`${at}.tool.name`, `'${at}.tool.name' names no tool in 'tools' or defined by an earlier tool_addition: '${String(t.name)}'`);
  }
}

/** A system message's own `output_config`: an effort for the turns after it (`format` stays top-level). */
function messageOutputConfig(c: unknown, at: string): void {
  if (c === undefined || c === null) return;
  if (!isRecord(c)) throw bad(at, `'${at}' must be an object`);
  if (c.format !== undefined) throw bad(`${at}.format`, `'${at}.format' is not taken on a system message; set 'output_config.format' at the top level`);
  oneOf(c.effort, `${at}.effort`, ['low', 'medium', 'high', 'xhigh', 'max']);
}

/**
 * A `role: "system"` message inside `messages` must come right after a user turn (or after another
 * such system message): instructions given mid-conversation. It holds text and tool changes; the
 * opening system prompt belongs in the top-level `system`. Content may be left out when the message
 * sets an effort (`output_config`) instead.
 */
function systemMessage(m: Rec, i: number, previous: unknown, named: Set<string>): void {
  const at = `messages[${i}]`;
  if (previous !== 'user' && previous !== 'system') {
    throw bad(`${at}.role`, `'${at}.role' 'system' must follow a user message; put the opening system prompt in 'system'`);
  }
  oneOf(m.clear_at, `${at}.clear_at`, ['next_user_message', 'never']);
  messageOutputConfig(m.output_config, `${at}.output_config`);
  if (typeof m.content === 'string') return;
  if (m.content === undefined && isRecord(m.output_config) && m.output_config.effort !== undefined && m.output_config.effort !== null) return;
  if (!Array.isArray(m.content)) throw m.content === undefined ? missing(`${at}.content`) : bad(`${at}.content`, `'${at}.content' must be a string or an array of text and tool change blocks`);
  m.content.forEach((b: unknown, j) => {
    const bt = `${at}.content[${j}]`;
    if (!isRecord(b) || (b.type !== 'text' && b.type !== 'tool_addition' && b.type !== 'tool_removal')) {
      throw bad(`${bt}.type`, `'${bt}.type' must be 'text', 'tool_addition' or 'tool_removal' in a system message`);
    }
    if (b.type === 'text') return block(b, bt);
    cacheControl(b.cache_control, `${bt}.cache_control`);
    toolChange(b, bt, named);
  });
}

/** The names a tool_reference in a tool change may name: the tools declared (definitions add theirs). */
const declaredNames = (list: unknown): Set<string> =>
  new Set(Array.isArray(list) ? list.flatMap((t) => (isRecord(t) && typeof t.name === 'string' ? [t.name] : [])) : []);

/** Throws GatewayError (400) with `param` set; returns the body typed as a record when valid. */
export function validateMessagesRequest(body: unknown): Record<string, unknown> {
  if (!isRecord(body)) throw new GatewayError('invalid_body', 'the request body must be a JSON object');
  const b: Rec = body;
  if (b.model === undefined) throw missing('model');
  if (typeof b.model !== 'string' || b.model === '') throw bad('model', "'model' must be a non-empty string");
  if (b.max_tokens === undefined || b.max_tokens === null) throw missing('max_tokens');
  posInt(b.max_tokens, 'max_tokens');
  if (b.messages === undefined) throw missing('messages');
  if (!Array.isArray(b.messages) || b.messages.length === 0) throw bad('messages', "'messages' must be a non-empty array");
  let previous: unknown;
  const named = declaredNames(b.tools);
  b.messages.forEach((m: unknown, i) => {
    const at = `messages[${i}]`;
    if (!isRecord(m)) throw bad(at, `'${at}' must be an object`);
    if (m.role === 'system') systemMessage(m, i, previous, named);
    else if (m.role !== 'user' && m.role !== 'assistant') throw bad(`${at}.role`, `'${at}.role' must be 'user', 'assistant' or 'system'`);
    else content(m.content, `${at}.content`);
    previous = m.role;
  });
  if (b.system !== undefined && b.system !== null && typeof b.system !== 'string') {
    if (!Array.isArray(b.system)) throw bad('system', "'system' must be a string or an array of text blocks");
    b.system.forEach((s: unknown, i) => {
      if (!isRecord(s) || s.type !== 'text') throw bad(`system[${i}].type`, `'system[${i}].type' must be 'text'`);
      block(s, `system[${i}]`);
    });
  }
  num(b.temperature, 'temperature', 0, 1);
  num(b.top_p, 'top_p', 0, 1);
  posInt(b.top_k, 'top_k');
  if (b.stop_sequences !== undefined && b.stop_sequences !== null) {
    if (!Array.isArray(b.stop_sequences) || !b.stop_sequences.every((s) => typeof s === 'string')) throw bad('stop_sequences', "'stop_sequences' must be an array of strings");
  }
  if (b.stream !== undefined && b.stream !== null && typeof b.stream !== 'boolean') throw bad('stream', "'stream' must be a boolean");
  cacheControl(b.cache_control, 'cache_control');
  obj(b.metadata, 'metadata');
  if (isRecord(b.metadata)) str(b.metadata.user_id, 'metadata.user_id');
  tools(b.tools);
  toolChoice(b.tool_choice);
  thinking(b.thinking, b.max_tokens as number);
  outputConfig(b.output_config);
  obj(b.output_format, 'output_format');
  oneOf(b.service_tier, 'service_tier', ['auto', 'standard_only']);
  oneOf(b.speed, 'speed', ['standard', 'fast']);
  str(b.inference_geo, 'inference_geo');
  if (b.container !== undefined && b.container !== null && typeof b.container !== 'string') obj(b.container, 'container');
  contextManagement(b.context_management);
  return b;
}
