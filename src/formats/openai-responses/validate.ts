// Validation of POST /v1/responses bodies: types and shapes, each failure a 400 naming the field path
// as OpenAI does (`input[2].content`). Unknown top-level fields are ignored (SDKs add new ones);
// hosted tools and item types pass here and are judged by the target (relayed or refused).
import { GatewayError } from '../../gateway-error.ts';
import { IMAGE_DETAILS, isImageDetail } from '../canonical.ts';
import { isRecord } from '../errors.ts';
import { metadata, num, obj, oneOf, posInt, str, topLogprobs } from '../openai-chat/validate.ts';

type Rec = Record<string, unknown>;

const bad = (param: string, message: string): GatewayError => new GatewayError('invalid_parameter', message, { param });
const missing = (param: string): GatewayError => new GatewayError('missing_parameter', `Missing required parameter: '${param}'.`, { param });

function bool(v: unknown, param: string): void {
  if (v !== undefined && v !== null && typeof v !== 'boolean') throw bad(param, `'${param}' must be a boolean`);
}
function needString(v: unknown, param: string): void {
  if (v === undefined || v === null) throw missing(param);
  if (typeof v !== 'string') throw bad(param, `'${param}' must be a string`);
}

const USER_PARTS = ['input_text', 'input_image', 'input_file'];
const ASSISTANT_PARTS = ['output_text', 'refusal', 'input_text'];

function content(c: unknown, at: string, allowed: readonly string[]): void {
  if (typeof c === 'string') return;
  if (!Array.isArray(c)) throw bad(at, `'${at}' must be a string or an array of content parts`);
  c.forEach((p: unknown, j) => {
    const pat = `${at}[${j}]`;
    if (!isRecord(p)) throw bad(pat, `'${pat}' must be an object`);
    if (typeof p.type !== 'string' || !allowed.includes(p.type)) throw bad(`${pat}.type`, `'${pat}.type' must be one of ${allowed.join(', ')}`);
    if ((p.type === 'input_text' || p.type === 'output_text') && typeof p.text !== 'string') throw bad(`${pat}.text`, `'${pat}.text' must be a string`);
    if (p.type === 'input_image' && typeof p.image_url !== 'string' && typeof p.file_id !== 'string') {
      throw bad(pat, `'${pat}' needs image_url or file_id`);
    }
    if (p.type === 'input_image' && p.detail !== undefined && p.detail !== null && !isImageDetail(p.detail)) {
      throw bad(`${pat}.detail`, `'${pat}.detail' must be one of ${IMAGE_DETAILS.join(', ')}`);
    }
  });
}

function item(it: unknown, i: number): void {
  const at = `input[${i}]`;
  if (!isRecord(it)) throw bad(at, `'${at}' must be an object`);
  const type = it.type ?? 'message';
  if (typeof type !== 'string') throw bad(`${at}.type`, `'${at}.type' must be a string`);
  switch (type) {
    case 'message': {
      const roles = ['user', 'assistant', 'system', 'developer'];
      if (typeof it.role !== 'string' || !roles.includes(it.role)) throw bad(`${at}.role`, `'${at}.role' must be one of ${roles.join(', ')}`);
      if (it.content === undefined || it.content === null) throw missing(`${at}.content`);
      return content(it.content, `${at}.content`, it.role === 'assistant' ? ASSISTANT_PARTS : USER_PARTS);
    }
    case 'function_call':
      needString(it.call_id, `${at}.call_id`);
      needString(it.name, `${at}.name`);
      return needString(it.arguments, `${at}.arguments`);
    case 'custom_tool_call':
      needString(it.call_id, `${at}.call_id`);
      needString(it.name, `${at}.name`);
      return needString(it.input, `${at}.input`);
    case 'function_call_output': case 'custom_tool_call_output':
      needString(it.call_id, `${at}.call_id`);
      if (it.output === undefined || it.output === null) throw missing(`${at}.output`);
      return content(it.output, `${at}.output`, USER_PARTS);
    case 'reasoning':
      // Summary and content parts are read for their text when the gateway did not sign the item.
      for (const field of ['summary', 'content'] as const) {
        const parts = it[field];
        if (parts === undefined || parts === null) continue;
        if (!Array.isArray(parts)) throw bad(`${at}.${field}`, `'${at}.${field}' must be an array`);
        parts.forEach((p: unknown, j) => {
          if (!isRecord(p) || (p.text !== undefined && typeof p.text !== 'string')) throw bad(`${at}.${field}[${j}]`, `'${at}.${field}[${j}]' must be an object with a text string`);
        });
      }
      return str(it.encrypted_content, `${at}.encrypted_content`);
    case 'compaction':
      return needString(it.encrypted_content, `${at}.encrypted_content`);
    default:
      return; // hosted-tool items and references: relayed to OpenAI-format servers, refused elsewhere
  }
}

/** One input item at index `i` (also the compact endpoint's input). */
export const validateInputItem = item;

function tools(list: unknown): void {
  if (list === undefined || list === null) return;
  if (!Array.isArray(list)) throw bad('tools', "'tools' must be an array");
  list.forEach((t: unknown, i) => {
    const at = `tools[${i}]`;
    if (!isRecord(t) || typeof t.type !== 'string') throw bad(at, `'${at}' must be an object with a type`);
    const fns = t.type === 'namespace' ? (Array.isArray(t.tools) ? t.tools : null) : [t];
    if (fns === null) throw bad(`${at}.tools`, `'${at}.tools' must be an array`);
    fns.forEach((f: unknown, j) => {
      const fat = t.type === 'namespace' ? `${at}.tools[${j}]` : at;
      if (!isRecord(f)) throw bad(fat, `'${fat}' must be an object`);
      if (f.type !== 'function' && f.type !== 'custom') return;
      if (typeof f.name !== 'string' || !/^[a-zA-Z0-9_-]{1,64}$/.test(f.name)) throw bad(`${fat}.name`, `'${fat}.name' must be 1-64 letters, digits, '_' or '-'`);
      str(f.description, `${fat}.description`);
      obj(f.parameters, `${fat}.parameters`);
    });
  });
}

function toolChoice(tc: unknown): void {
  if (tc === undefined || tc === null) return;
  if (typeof tc === 'string') return oneOf(tc, 'tool_choice', ['none', 'auto', 'required']);
  if (!isRecord(tc) || typeof tc.type !== 'string') throw bad('tool_choice', "'tool_choice' must be 'none', 'auto', 'required' or an object with a type");
  if ((tc.type === 'function' || tc.type === 'custom') && typeof tc.name !== 'string') throw missing('tool_choice.name');
  if (tc.type !== 'allowed_tools') return;
  oneOf(tc.mode, 'tool_choice.mode', ['auto', 'required']);
  if (!Array.isArray(tc.tools)) throw bad('tool_choice.tools', "'tool_choice.tools' must be an array of tools");
  tc.tools.forEach((t: unknown, i) => {
    if (!isRecord(t) || typeof t.type !== 'string') throw bad(`tool_choice.tools[${i}]`, `'tool_choice.tools[${i}]' must be an object with a type`);
  });
}

function textFormat(text: unknown): void {
  if (text === undefined || text === null) return;
  if (!isRecord(text)) throw bad('text', "'text' must be an object");
  oneOf(text.verbosity, 'text.verbosity', ['low', 'medium', 'high']);
  const f = text.format;
  if (f === undefined || f === null) return;
  if (!isRecord(f)) throw bad('text.format', "'text.format' must be an object");
  oneOf(f.type, 'text.format.type', ['text', 'json_object', 'json_schema']);
  if (f.type === undefined) throw missing('text.format.type');
  if (f.type !== 'json_schema') return;
  if (typeof f.name !== 'string' || f.name === '') throw missing('text.format.name');
  if (!isRecord(f.schema)) throw missing('text.format.schema');
  bool(f.strict, 'text.format.strict');
}

/** Throws GatewayError (400) with `param` set; returns the body typed as a record when valid. */
export function validateResponsesRequest(body: unknown): Rec {
  if (!isRecord(body)) throw new GatewayError('invalid_body', 'the request body must be a JSON object');
  const b: Rec = body;
  if (b.model === undefined) throw missing('model');
  if (typeof b.model !== 'string' || b.model === '') throw bad('model', "'model' must be a non-empty string");
  if (b.input === undefined || b.input === null) throw missing('input');
  if (typeof b.input !== 'string') {
    if (!Array.isArray(b.input)) throw bad('input', "'input' must be a string or an array of input items");
    b.input.forEach(item);
  }
  if (b.instructions !== undefined && b.instructions !== null && typeof b.instructions !== 'string') {
    throw bad('instructions', "'instructions' must be a string");
  }
  num(b.temperature, 'temperature', 0, 2);
  num(b.top_p, 'top_p', 0, 1);
  posInt(b.max_output_tokens, 'max_output_tokens');
  topLogprobs(b.top_logprobs);
  tools(b.tools);
  toolChoice(b.tool_choice);
  textFormat(b.text);
  for (const k of ['stream', 'store', 'parallel_tool_calls', 'background'] as const) bool(b[k], k);
  obj(b.reasoning, 'reasoning');
  if (isRecord(b.reasoning)) {
    oneOf(b.reasoning.effort, 'reasoning.effort', ['none', 'minimal', 'low', 'medium', 'high', 'xhigh', 'max']);
    oneOf(b.reasoning.summary, 'reasoning.summary', ['auto', 'concise', 'detailed']);
  }
  str(b.previous_response_id, 'previous_response_id');
  str(b.user, 'user');
  str(b.safety_identifier, 'safety_identifier');
  str(b.service_tier, 'service_tier');
  str(b.prompt_cache_key, 'prompt_cache_key');
  oneOf(b.prompt_cache_retention, 'prompt_cache_retention', ['in_memory', '24h']);
  if (b.include !== undefined && b.include !== null && !(Array.isArray(b.include) && b.include.every((s) => typeof s === 'string'))) {
    throw bad('include', "'include' must be an array of strings");
  }
  metadata(b.metadata);
  if (b.background === true) throw new GatewayError('unsupported_parameter', 'background responses are not supported by this gateway; send the request without background', { param: 'background' });
  if (b.conversation !== undefined && b.conversation !== null) {
    throw new GatewayError('unsupported_parameter', 'conversations are not supported by this gateway; chain turns with previous_response_id', { param: 'conversation' });
  }
  if (b.prompt !== undefined && b.prompt !== null) throw new GatewayError('unsupported_parameter', 'stored prompt templates are not supported by this gateway; send instructions and input', { param: 'prompt' });
  return b;
}
