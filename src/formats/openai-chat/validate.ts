// Validation of POST /v1/chat/completions bodies: types, ranges and shapes, each failure a 400
// naming the offending field path. Unknown top-level fields are ignored (SDKs add new ones).
import { GatewayError } from '../../gateway-error.ts';
import { IMAGE_DETAILS, isImageDetail } from '../canonical.ts';
import { isRecord } from '../errors.ts';

type Rec = Record<string, unknown>;

const bad = (param: string, message: string): GatewayError => new GatewayError('invalid_parameter', message, { param });
const missing = (param: string): GatewayError => new GatewayError('missing_parameter', `'${param}' is required`, { param });

export function num(v: unknown, param: string, min: number, max: number): void {
  if (v === undefined || v === null) return;
  if (typeof v !== 'number' || !Number.isFinite(v)) throw bad(param, `'${param}' must be a number`);
  if (v < min || v > max) throw bad(param, `'${param}' must be between ${min} and ${max}, got ${v}`);
}
export function posInt(v: unknown, param: string): void {
  if (v === undefined || v === null) return;
  if (typeof v !== 'number' || !Number.isInteger(v) || v < 1) throw bad(param, `'${param}' must be a positive integer`);
}
export function str(v: unknown, param: string): void {
  if (v !== undefined && v !== null && typeof v !== 'string') throw bad(param, `'${param}' must be a string`);
}
export function oneOf(v: unknown, param: string, allowed: readonly string[]): void {
  if (v === undefined || v === null) return;
  if (typeof v !== 'string' || !allowed.includes(v)) throw bad(param, `'${param}' must be one of ${allowed.join(', ')}`);
}
export function obj(v: unknown, param: string): void {
  if (v !== undefined && v !== null && !isRecord(v)) throw bad(param, `'${param}' must be an object`);
}
/** `top_logprobs`: an integer from 0 to 20 (chat and Responses alike). */
export function topLogprobs(v: unknown): void {
  if (v === undefined || v === null) return;
  if (typeof v !== 'number' || !Number.isInteger(v) || v < 0 || v > 20) throw bad('top_logprobs', "'top_logprobs' must be an integer between 0 and 20");
}
function bool(v: unknown, param: string): void {
  if (v !== undefined && v !== null && typeof v !== 'boolean') throw bad(param, `'${param}' must be a boolean`);
}

function contentParts(content: unknown, at: string, textOnly: boolean): void {
  if (typeof content === 'string') return;
  if (!Array.isArray(content)) throw bad(at, `'${at}' must be a string or an array of content parts`);
  content.forEach((p: unknown, j) => {
    const pat = `${at}[${j}]`;
    if (!isRecord(p)) throw bad(pat, `'${pat}' must be an object`);
    const allowed = textOnly ? ['text', 'refusal'] : ['text', 'image_url', 'input_audio', 'file'];
    if (typeof p.type !== 'string' || !allowed.includes(p.type)) throw bad(`${pat}.type`, `'${pat}.type' must be one of ${allowed.join(', ')}`);
    if (p.type === 'text' && typeof p.text !== 'string') throw bad(`${pat}.text`, `'${pat}.text' must be a string`);
    if (p.type === 'image_url' && !(isRecord(p.image_url) && typeof p.image_url.url === 'string')) {
      throw bad(`${pat}.image_url.url`, `'${pat}.image_url.url' must be a string`);
    }
    if (p.type === 'image_url' && isRecord(p.image_url) && p.image_url.detail !== undefined && !isImageDetail(p.image_url.detail)) {
      throw bad(`${pat}.image_url.detail`, `'${pat}.image_url.detail' must be one of ${IMAGE_DETAILS.join(', ')}`);
    }
  });
}

function toolCalls(calls: unknown, at: string): void {
  if (calls === undefined || calls === null) return;
  if (!Array.isArray(calls)) throw bad(at, `'${at}' must be an array`);
  calls.forEach((c: unknown, j) => {
    const cat = `${at}[${j}]`;
    if (!isRecord(c)) throw bad(cat, `'${cat}' must be an object`);
    if (typeof c.id !== 'string') throw bad(`${cat}.id`, `'${cat}.id' must be a string`);
    if (!isRecord(c.function) || typeof c.function.name !== 'string') throw bad(`${cat}.function.name`, `'${cat}.function.name' must be a string`);
    if (typeof c.function.arguments !== 'string') throw bad(`${cat}.function.arguments`, `'${cat}.function.arguments' must be a JSON string`);
  });
}

function message(m: unknown, i: number): void {
  const at = `messages[${i}]`;
  if (!isRecord(m)) throw bad(at, `'${at}' must be an object`);
  const roles = ['system', 'developer', 'user', 'assistant', 'tool'];
  if (typeof m.role !== 'string' || !roles.includes(m.role)) throw bad(`${at}.role`, `'${at}.role' must be one of ${roles.join(', ')}`);
  if (m.role === 'assistant') {
    if (m.content !== null && m.content !== undefined) contentParts(m.content, `${at}.content`, true);
    else if (!Array.isArray(m.tool_calls)) throw missing(`${at}.content`);
    return toolCalls(m.tool_calls, `${at}.tool_calls`);
  }
  if (m.content === undefined || m.content === null) throw missing(`${at}.content`);
  contentParts(m.content, `${at}.content`, m.role !== 'user');
  if (m.role === 'tool' && typeof m.tool_call_id !== 'string') {
    throw m.tool_call_id === undefined ? missing(`${at}.tool_call_id`) : bad(`${at}.tool_call_id`, `'${at}.tool_call_id' must be a string`);
  }
}

function tools(list: unknown): void {
  if (list === undefined || list === null) return;
  if (!Array.isArray(list)) throw bad('tools', "'tools' must be an array");
  list.forEach((t: unknown, i) => {
    const at = `tools[${i}]`;
    if (!isRecord(t)) throw bad(at, `'${at}' must be an object`);
    if (t.type !== 'function') throw bad(`${at}.type`, `'${at}.type' must be 'function' (only function tools are supported)`);
    if (!isRecord(t.function)) throw missing(`${at}.function`);
    if (typeof t.function.name !== 'string' || !/^[a-zA-Z0-9_-]{1,64}$/.test(t.function.name)) {
      throw bad(`${at}.function.name`, `'${at}.function.name' must be 1-64 letters, digits, '_' or '-'`);
    }
    str(t.function.description, `${at}.function.description`);
    obj(t.function.parameters, `${at}.function.parameters`);
  });
}

function toolChoice(tc: unknown): void {
  if (tc === undefined || tc === null) return;
  if (typeof tc === 'string') return oneOf(tc, 'tool_choice', ['none', 'auto', 'required']);
  if (!isRecord(tc) || tc.type !== 'function' || !isRecord(tc.function) || typeof tc.function.name !== 'string') {
    throw bad('tool_choice', "'tool_choice' must be 'none', 'auto', 'required' or {type: 'function', function: {name}}");
  }
}

function responseFormat(rf: unknown): void {
  if (rf === undefined || rf === null) return;
  if (!isRecord(rf)) throw bad('response_format', "'response_format' must be an object");
  oneOf(rf.type, 'response_format.type', ['text', 'json_object', 'json_schema']);
  if (rf.type === undefined) throw missing('response_format.type');
  if (rf.type !== 'json_schema') return;
  const js = rf.json_schema;
  if (!isRecord(js)) throw missing('response_format.json_schema');
  if (typeof js.name !== 'string' || js.name === '') throw bad('response_format.json_schema.name', "'response_format.json_schema.name' must be a non-empty string");
  obj(js.schema, 'response_format.json_schema.schema');
  bool(js.strict, 'response_format.json_schema.strict');
}

/** OpenAI's Metadata (chat and Responses alike): at most 16 string values, keys up to 64 characters, values up to 512. */
export function metadata(v: unknown): void {
  if (v === undefined || v === null) return;
  if (!isRecord(v)) throw bad('metadata', "'metadata' must be an object");
  const entries = Object.entries(v);
  if (entries.length > 16) throw bad('metadata', "'metadata' may hold at most 16 keys");
  for (const [k, s] of entries) {
    if (k.length > 64) throw bad(`metadata.${k.slice(0, 64)}`, 'metadata keys are at most 64 characters');
    if (typeof s !== 'string' || s.length > 512) throw bad(`metadata.${k}`, `'metadata.${k}' must be a string of at most 512 characters`);
  }
}

/** Stop sequences OpenAI takes ("Up to 4 sequences"; the API refuses a longer array). */
export const MAX_STOP = 4;

/** Throws GatewayError (400) with `param` set; returns the body typed as a record when valid. */
export function validateChatRequest(body: unknown): Record<string, unknown> {
  if (!isRecord(body)) throw new GatewayError('invalid_body', 'the request body must be a JSON object');
  const b: Rec = body;
  if (b.model === undefined) throw missing('model');
  if (typeof b.model !== 'string' || b.model === '') throw bad('model', "'model' must be a non-empty string");
  if (b.messages === undefined) throw missing('messages');
  if (!Array.isArray(b.messages) || b.messages.length === 0) throw bad('messages', "'messages' must be a non-empty array");
  b.messages.forEach(message);
  if (b.n !== undefined && b.n !== null && b.n !== 1) {
    throw bad('n', "'n' other than 1 is not supported: multiple responses need separate calls");
  }
  num(b.temperature, 'temperature', 0, 2);
  num(b.top_p, 'top_p', 0, 1);
  num(b.frequency_penalty, 'frequency_penalty', -2, 2);
  num(b.presence_penalty, 'presence_penalty', -2, 2);
  posInt(b.max_tokens, 'max_tokens');
  posInt(b.max_completion_tokens, 'max_completion_tokens');
  if (b.seed !== undefined && b.seed !== null && !Number.isInteger(b.seed)) throw bad('seed', "'seed' must be an integer");
  if (b.stop !== undefined && b.stop !== null && typeof b.stop !== 'string') {
    if (!Array.isArray(b.stop) || !b.stop.every((s) => typeof s === 'string')) throw bad('stop', "'stop' must be a string or an array of strings");
    if (b.stop.length > MAX_STOP) throw bad('stop', `'stop' takes at most ${MAX_STOP} sequences, got ${b.stop.length}`);
  }
  if (b.logit_bias !== undefined && b.logit_bias !== null) {
    if (!isRecord(b.logit_bias)) throw bad('logit_bias', "'logit_bias' must be an object of token ids to numbers");
    for (const [k, v] of Object.entries(b.logit_bias)) num(v, `logit_bias.${k}`, -100, 100);
  }
  tools(b.tools);
  toolChoice(b.tool_choice);
  responseFormat(b.response_format);
  bool(b.stream, 'stream');
  bool(b.parallel_tool_calls, 'parallel_tool_calls');
  bool(b.logprobs, 'logprobs');
  topLogprobs(b.top_logprobs);
  obj(b.stream_options, 'stream_options');
  if (isRecord(b.stream_options)) bool(b.stream_options.include_usage, 'stream_options.include_usage');
  // The SDK's ReasoningEffort (openai 6.x): none (GPT-5.1 and later), xhigh and max as well.
  oneOf(b.reasoning_effort, 'reasoning_effort', ['none', 'minimal', 'low', 'medium', 'high', 'xhigh', 'max']);
  oneOf(b.verbosity, 'verbosity', ['low', 'medium', 'high']);
  str(b.safety_identifier, 'safety_identifier');
  str(b.user, 'user');
  str(b.service_tier, 'service_tier');
  str(b.prompt_cache_key, 'prompt_cache_key');
  oneOf(b.prompt_cache_retention, 'prompt_cache_retention', ['in_memory', '24h']);
  metadata(b.metadata);
  return b;
}
