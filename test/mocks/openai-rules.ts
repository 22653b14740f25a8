// What OpenAI chat completions refuses, checked by the mock before it answers: unknown
// parameters, roles, tool messages that answer no call and calls left unanswered, and the
// parameters reasoning models (o-series, gpt-5) do not take. Messages follow the API's wording.

type Json = Record<string, unknown>;
const obj = (v: unknown): Json => (typeof v === 'object' && v !== null && !Array.isArray(v) ? (v as Json) : {});

/** ChatCompletionCreateParamsBase of the `openai` package (7.55). */
const PARAMS = new Set(['messages', 'model', 'audio', 'frequency_penalty', 'function_call', 'functions', 'logit_bias', 'logprobs',
  'max_completion_tokens', 'max_tokens', 'metadata', 'modalities', 'moderation', 'n', 'parallel_tool_calls', 'prediction',
  'presence_penalty', 'prompt_cache_key', 'prompt_cache_options', 'prompt_cache_retention', 'reasoning_effort', 'response_format',
  'safety_identifier', 'seed', 'service_tier', 'stop', 'store', 'stream', 'stream_options', 'temperature', 'tool_choice', 'tools',
  'top_logprobs', 'top_p', 'user', 'verbosity', 'web_search_options']);
/** The image detail levels of the `openai` package (chat `image_url.detail`, Responses `ImageDetail`). */
export const IMAGE_DETAILS = ['auto', 'low', 'high', 'original'];
const ROLES = new Set(['system', 'developer', 'user', 'assistant', 'tool', 'function']);

/** The `-chat` models of GPT-5 do not reason (and take temperature); every other o-series and GPT-5 model does. */
export const isReasoningModel = (model: string): boolean => /^(o\d|gpt-5)/.test(model) && !/-chat(-|$)/.test(model);
/**
 * GPT-5.1 and later take temperature, top_p and logprobs only with reasoning effort none (OpenAI's
 * GPT-5.x guide: "Requests to GPT-5.2 or GPT-5.1 with any other reasoning effort setting, or to older
 * GPT-5 models (e.g., gpt-5, gpt-5-mini, gpt-5-nano) that include these fields will raise an error").
 * The mock reads an absent effort as not none.
 */
const takesSamplingWithoutReasoning = (model: string): boolean => /^gpt-5\.\d/.test(model) && !/-pro($|-)/.test(model);

/** The sampling control a reasoning model refuses in `b`, in the API's words, or null. */
function samplingProblem(model: string, b: Json): string | null {
  if (takesSamplingWithoutReasoning(model) && b.reasoning_effort === 'none') {
    for (const k of ['frequency_penalty', 'presence_penalty', 'logit_bias'] as const) {
      if (b[k] !== undefined && b[k] !== 0) return `Unsupported parameter: '${k}' is not supported with this model.`;
    }
    return null;
  }
  if (b.temperature !== undefined && b.temperature !== 1) return `Unsupported value: 'temperature' does not support ${String(b.temperature)} with this model. Only the default (1) value is supported.`;
  for (const k of ['top_p', 'frequency_penalty', 'presence_penalty'] as const) {
    if (b[k] !== undefined && b[k] !== (k === 'top_p' ? 1 : 0)) return `Unsupported parameter: '${k}' is not supported with this model.`;
  }
  for (const k of ['logprobs', 'top_logprobs', 'logit_bias'] as const) {
    if (b[k] !== undefined) return `Unsupported parameter: '${k}' is not supported with this model.`;
  }
  return null;
}
/** Families known not to reason; other unknown names (test models) accept reasoning_effort. */
const NON_REASONING = /^(gpt-4|gpt-3\.5|chatgpt-4o)/;

/** The 400 message (and param) for a request the real API refuses, or null. */
export function openaiRequestProblem(b: Json): string | null {
  for (const k of Object.keys(b)) if (!PARAMS.has(k)) return `Unrecognized request argument supplied: ${k}`;
  for (const k of ['safety_identifier', 'user'] as const) {
    const v = b[k];
    if (typeof v === 'string' && v.length > 128) return `Invalid '${k}': string too long. Expected a string with maximum length 128, but got a string with length ${v.length} instead.`;
  }
  if (Array.isArray(b.stop) && b.stop.length > 4) return `Invalid 'stop': array too long. Expected an array with maximum length 4, but got an array with length ${b.stop.length} instead.`;
  if (Array.isArray(b.tools) && b.tools.length > 128) return `Invalid 'tools': array too long. Expected an array with maximum length 128, but got an array with length ${b.tools.length} instead.`;
  // Function names: `^[a-zA-Z0-9_-]+$`, at most 64 (the API's wording for each).
  for (const [i, t] of (Array.isArray(b.tools) ? b.tools : []).entries()) {
    const name = obj(obj(t).function).name;
    if (typeof name !== 'string') continue;
    if (name.length > 64) return `Invalid 'tools[${i}].function.name': string too long. Expected a string with maximum length 64, but got a string with length ${name.length} instead.`;
    if (!/^[a-zA-Z0-9_-]+$/.test(name)) return `Invalid 'tools[${i}].function.name': string does not match pattern. Expected a string that matches the pattern '^[a-zA-Z0-9_-]+$'.`;
  }
  const model = String(b.model);
  const messages = (b.messages as unknown[]).map(obj);
  // image_url.detail: ChatCompletionContentPartImage's values (the API's wording for another).
  for (const [i, m] of messages.entries()) {
    for (const [j, c] of (Array.isArray(m.content) ? m.content.map(obj) : []).entries()) {
      const detail = obj(c.image_url).detail;
      if (c.type === 'image_url' && detail !== undefined && !IMAGE_DETAILS.includes(String(detail))) {
        return `Invalid value: '${String(detail)}'. Supported values are: 'auto', 'low', 'high', and 'original'. (messages[${i}].content[${j}].image_url.detail)`;
      }
    }
  }
  // Tool calls and tool messages need no `tools` (pydantic/pydantic-ai#5929: "OpenAI does not have
  // this requirement"; agentgateway/agentgateway#2192). No rule here.
  const open = new Set<string>();
  for (const [i, m] of messages.entries()) {
    if (!ROLES.has(String(m.role))) return `Invalid value: '${String(m.role)}'. Supported values are: 'system', 'assistant', 'user', 'function', 'tool', and 'developer'.`;
    if (m.role === 'tool') {
      if (!open.delete(String(m.tool_call_id))) return `Invalid parameter: messages with role 'tool' must be a response to a preceeding message with 'tool_calls'.`;
      continue;
    }
    if (open.size > 0) {
      return `An assistant message with 'tool_calls' must be followed by tool messages responding to each 'tool_call_id'. The following tool_call_ids did not have response messages: ${[...open].join(', ')}`;
    }
    if (m.role === 'assistant' && Array.isArray(m.tool_calls)) {
      for (const [k, c] of m.tool_calls.entries()) {
        const id = String(obj(c).id);
        if (id.length > 40) return `Invalid 'messages[${i}].tool_calls[${k}].id': string too long. Expected a string with maximum length 40, but got a string with length ${id.length} instead.`;
        open.add(id);
      }
    }
    if (i === messages.length - 1 && open.size > 0) {
      return `An assistant message with 'tool_calls' must be followed by tool messages responding to each 'tool_call_id'. The following tool_call_ids did not have response messages: ${[...open].join(', ')}`;
    }
  }
  if (isReasoningModel(model)) {
    if (b.max_tokens !== undefined) return "Unsupported parameter: 'max_tokens' is not supported with this model. Use 'max_completion_tokens' instead.";
    const sampling = samplingProblem(model, b);
    if (sampling !== null) return sampling;
  } else if (b.reasoning_effort !== undefined && NON_REASONING.test(model)) {
    return "Unsupported parameter: 'reasoning_effort' is not supported with this model.";
  }
  // gpt-3.5-turbo reads no images and has no structured outputs (the API's wording).
  if (/^gpt-3\.5/.test(model)) {
    if (messages.some((m) => Array.isArray(m.content) && m.content.some((c) => obj(c).type === 'image_url'))) {
      return 'Invalid content type. image_url is only supported by certain models.';
    }
    if (obj(b.response_format).type === 'json_schema') return "Invalid parameter: 'response_format' of type 'json_schema' is not supported with this model.";
  }
  if (b.parallel_tool_calls !== undefined && !(Array.isArray(b.tools) && b.tools.length > 0)) {
    return "Invalid value for 'parallel_tool_calls': 'parallel_tool_calls' is only allowed when 'tools' are specified.";
  }
  return null;
}

/**
 * Mistral's chat completions take OpenAI's shape but refuse tool call ids that are not 9 letters or
 * digits, in calls and in the tool messages that answer them (its own ids are such).
 */
export function mistralToolIdProblem(b: Json): string | null {
  for (const m of (b.messages as unknown[]).map(obj)) {
    const ids = m.role === 'tool' ? [m.tool_call_id] : Array.isArray(m.tool_calls) ? m.tool_calls.map((c) => obj(c).id) : [];
    for (const id of ids) if (typeof id !== 'string' || !/^[a-zA-Z0-9]{9}$/.test(id)) return `Tool call id was ${String(id)} but must be a-z, A-Z, 0-9, with a length of 9.`;
  }
  return null;
}
