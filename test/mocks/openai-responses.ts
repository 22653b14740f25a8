// Mock OpenAI Responses API: POST /v1/responses (JSON and the full SSE event sequence with
// sequence_number), input as a string or items, instructions, function tools, reasoning items (summary
// when asked, encrypted_content with include), store / previous_response_id kept in memory, automatic
// prefix caching, and the errors the API gives for what it refuses (unknown parameters, missing model
// or input, an unknown previous response, reasoning items without encrypted content under store: false,
// a web_search_call item missing what ResponseFunctionWebSearch requires, a hosted tool_choice whose
// tool is not offered); a web search tool forced or asked for runs first (a web_search_call item).
import type { PrefixCache } from './cache.ts';
import type { RecordedRequest, Reply } from './server.ts';
import { sse } from './server.ts';
import { IMAGE_DETAILS } from './openai-rules.ts';
import { planReply } from './plan.ts';
import { IdSource, canonicalJson, estimateTokens, splitJson, splitText, thinkingText } from './text.ts';

type Json = Record<string, unknown>;
const obj = (v: unknown): Json => (typeof v === 'object' && v !== null && !Array.isArray(v) ? (v as Json) : {});

/** The body parameters of ResponseCreateParams (openai package); the API refuses any other. */
const PARAMS = new Set([
  'model', 'input', 'instructions', 'tools', 'tool_choice', 'parallel_tool_calls', 'max_output_tokens', 'max_tool_calls', 'metadata',
  'previous_response_id', 'reasoning', 'store', 'stream', 'stream_options', 'temperature', 'top_p', 'top_logprobs', 'text', 'truncation',
  'user', 'safety_identifier', 'prompt_cache_key', 'prompt_cache_retention', 'service_tier', 'include', 'background', 'conversation', 'prompt',
  'context_management', 'client_metadata',
]);
const REASONING_TOKENS: Record<string, number> = { minimal: 8, low: 16, medium: 64, high: 256, xhigh: 512 };

const textOf = (content: unknown): string =>
  (typeof content === 'string' ? content : Array.isArray(content) ? content.map((p) => String(obj(p).text ?? '')).join('') : '');

/** `compactions`: encrypted_content this server issued -> the summary it stands for (others are refused). */
export type ResponsesState = { ids: IdSource; cache: PrefixCache; stored: Map<string, Json[]>; compactions: Map<string, string> };
export const newResponsesState = (cache: PrefixCache): ResponsesState => ({ ids: new IdSource(), cache, stored: new Map(), compactions: new Map() });

export async function serveResponses(req: RecordedRequest, reply: Reply, st: ResponsesState, replyText?: (last: string) => string): Promise<void> {
  const b = obj(req.body);
  const unknown = Object.keys(b).find((k) => !PARAMS.has(k));
  if (unknown !== undefined) return reply.error(400, `Unknown parameter: '${unknown}'.`);
  if (typeof b.model !== 'string' || b.model === '') return reply.error(400, "Missing required parameter: 'model'.");
  if (b.input === undefined) return reply.error(400, "Missing required parameter: 'input'.");
  let history: Json[] = [];
  if (typeof b.previous_response_id === 'string') {
    const prev = st.stored.get(b.previous_response_id);
    if (!prev) return reply.error(400, `Previous response with id '${b.previous_response_id}' not found.`);
    history = prev;
  }
  const input = [...history, ...(typeof b.input === 'string' ? [{ role: 'user', content: b.input }] : (b.input as unknown[]).map(obj))];
  const refused = unreadableCompaction(input, st);
  if (refused !== null) return reply.error(400, refused);
  for (const it of input) {
    // input_image.detail: the package's ImageDetail (null is absent).
    for (const c of Array.isArray(it.content) ? it.content.map(obj) : []) {
      if (c.type === 'input_image' && c.detail !== undefined && c.detail !== null && !IMAGE_DETAILS.includes(String(c.detail))) {
        return reply.error(400, `Invalid value: '${String(c.detail)}'. Supported values are: 'low', 'high', 'auto', and 'original'.`);
      }
    }
    // Item ids are optional, but one given must carry its type's prefix (the API's invalid_id_prefix).
    const prefix = ID_PREFIXES[String(it.type ?? 'message')];
    if (prefix !== undefined && typeof it.id === 'string' && !it.id.startsWith(prefix)) {
      return reply.error(400, `Invalid 'input[].id': '${it.id}'. Expected an ID that begins with '${prefix}'.`);
    }
    // Reasoning comes back only in the API's own encrypted form (gAAAA..., as this mock issues it).
    if (it.type === 'reasoning' && typeof it.encrypted_content === 'string' && !it.encrypted_content.startsWith('gAAAA')) {
      return reply.error(400, `The encrypted content for item ${String(it.id)} could not be verified. Reason: Encrypted content could not be decrypted or parsed.`);
    }
    if (it.type === 'reasoning' && b.store === false && typeof it.encrypted_content !== 'string') {
      return reply.error(400, `Item with id '${String(it.id)}' not found. Items are not persisted when \`store\` is set to false. Try again with \`store\` set to true, or remove this item from your input.`);
    }
    if (it.type === 'web_search_call') {
      const bad = badWebSearchCall(it, input.indexOf(it));
      if (bad !== null) return reply.error(400, bad);
    }
  }
  const refusedChoice = unknownToolChoice(b);
  if (refusedChoice !== null) return reply.error(400, refusedChoice);
  // function_call / function_call_output items need no `tools`: Codex's compaction sends its history
  // with none (openai/codex codex-rs/core/src/codex/compact.rs, `Prompt { input, ..Default::default() }`).
  const tools = (Array.isArray(b.tools) ? b.tools.map(obj) : []).filter((t) => t.type === 'function');
  for (const t of tools) if (typeof t.name !== 'string') return reply.error(400, "Missing required parameter: 'tools[0].name'.");
  const parts: string[] = tools.map((t) => `${String(t.name)} ${String(t.description ?? '')} ${canonicalJson(t.parameters ?? {})}`);
  if (typeof b.instructions === 'string') parts.push(b.instructions);
  let lastUser = '';
  for (const it of input) {
    if ((it.type ?? 'message') === 'message') { parts.push(textOf(it.content)); if (it.role === 'user') lastUser = textOf(it.content); }
    else if (it.type === 'function_call') parts.push(String(it.arguments ?? ''));
    else if (it.type === 'function_call_output') parts.push(textOf(it.output));
    else if (it.type === 'compaction') parts.push(st.compactions.get(String(it.encrypted_content))!);
  }
  const last = input.at(-1) ?? {};
  const prompt = parts.join('\n');
  const promptTokens = estimateTokens(prompt);
  const cached = st.cache.lookupAndStore(b.model, prompt);
  const tc = b.tool_choice;
  const plan = planReply({
    tools: tools.map((t) => ({ name: String(t.name), schema: t.parameters })),
    choice: obj(tc).type === 'function' ? { name: String(obj(tc).name) } : tc === 'required' ? 'any' : tc === 'none' ? 'none' : 'auto',
    lastUser, toolResult: last.type === 'function_call_output' ? textOf(last.output) : undefined,
    stop: [], maxTokens: typeof b.max_output_tokens === 'number' ? b.max_output_tokens : undefined, thinking: false, reply: replyText,
  });
  const effort = String(obj(b.reasoning).effort ?? '');
  const reasoningTokens = effort !== '' && effort !== 'none' ? REASONING_TOKENS[effort] ?? 64 : 0;
  const id = st.ids.next('resp_', 48);
  const output: Json[] = [];
  // A web search tool offered and forced, or asked for in words: the server runs it before answering.
  const search = (Array.isArray(b.tools) ? b.tools.map(obj) : []).some((t) => WEB_SEARCH_TOOLS.has(String(t.type)))
    && (WEB_SEARCH_TOOLS.has(String(obj(tc).type)) || /\bsearch\b/i.test(lastUser));
  if (search) output.push({ id: st.ids.next('ws_', 48), type: 'web_search_call', status: 'completed', action: { type: 'search', query: lastUser, queries: [lastUser], sources: [{ type: 'url', url: 'https://example.com/result' }] } });
  if (reasoningTokens > 0) {
    const summary = obj(b.reasoning).summary ? [{ type: 'summary_text', text: thinkingText(lastUser) }] : [];
    const include = Array.isArray(b.include) ? b.include : [];
    output.push({ id: st.ids.next('rs_', 48), type: 'reasoning', summary, ...(include.includes('reasoning.encrypted_content') ? { encrypted_content: st.ids.next('gAAAA', 64) } : {}) });
  }
  for (const c of plan.calls) output.push({ id: st.ids.next('fc_', 48), type: 'function_call', status: 'completed', arguments: c.json, call_id: st.ids.next('call_', 24), name: c.name });
  if (plan.calls.length === 0) {
    output.push({ id: st.ids.next('msg_', 48), type: 'message', status: 'completed', role: 'assistant', content: [{ type: 'output_text', annotations: [], logprobs: [], text: plan.gen.text }] });
  }
  const incomplete = plan.gen.finish === 'length';
  const out = plan.outputTokens + reasoningTokens;
  const response: Json = {
    id, object: 'response', created_at: Math.floor(req.time / 1000), status: incomplete ? 'incomplete' : 'completed', background: false,
    completed_at: incomplete ? null : Math.floor(req.time / 1000), error: null, incomplete_details: incomplete ? { reason: 'max_output_tokens' } : null,
    instructions: b.instructions ?? null, max_output_tokens: b.max_output_tokens ?? null, model: b.model, output, parallel_tool_calls: b.parallel_tool_calls ?? true,
    previous_response_id: b.previous_response_id ?? null, reasoning: { effort: effort || null, summary: obj(b.reasoning).summary ?? null }, store: b.store !== false,
    temperature: b.temperature ?? 1, text: b.text ?? { format: { type: 'text' } }, tool_choice: tc ?? 'auto', tools: b.tools ?? [], top_p: b.top_p ?? 1,
    truncation: 'disabled', usage: {
      input_tokens: promptTokens, input_tokens_details: { cached_tokens: cached }, output_tokens: out,
      output_tokens_details: { reasoning_tokens: reasoningTokens }, total_tokens: promptTokens + out,
    }, user: null, metadata: b.metadata ?? {},
  };
  if (b.store !== false) st.stored.set(id, [...input, ...output]);
  if (b.stream !== true) return reply.json(200, response);
  await streamResponse(reply, response);
}

/** The event sequence the API sends: lifecycle, per item added / parts / deltas / dones, completed. */
async function streamResponse(reply: Reply, response: Json): Promise<void> {
  const sink = reply.stream('text/event-stream; charset=utf-8');
  let seq = 0;
  const send = (type: string, data: Json): Promise<void> => sink.write(sse({ type, sequence_number: seq++, ...data }, type));
  const open = { ...response, status: 'in_progress', completed_at: null, incomplete_details: null, output: [], usage: null };
  await send('response.created', { response: open });
  await send('response.in_progress', { response: open });
  for (const [output_index, item] of (response.output as Json[]).entries()) {
    const base = { item_id: item.id, output_index };
    if (item.type === 'message') {
      const text = String(obj((item.content as Json[])[0]).text);
      await send('response.output_item.added', { output_index, item: { ...item, status: 'in_progress', content: [] } });
      await send('response.content_part.added', { ...base, content_index: 0, part: { type: 'output_text', annotations: [], logprobs: [], text: '' } });
      for (const delta of splitText(text)) await send('response.output_text.delta', { ...base, content_index: 0, delta, logprobs: [] });
      await send('response.output_text.done', { ...base, content_index: 0, text, logprobs: [] });
      await send('response.content_part.done', { ...base, content_index: 0, part: (item.content as Json[])[0] });
    } else if (item.type === 'web_search_call') {
      await send('response.output_item.added', { output_index, item: { ...item, status: 'in_progress', action: { type: 'search' } } });
      for (const phase of ['in_progress', 'searching', 'completed']) await send(`response.web_search_call.${phase}`, base);
    } else if (item.type === 'function_call') {
      await send('response.output_item.added', { output_index, item: { ...item, status: 'in_progress', arguments: '' } });
      for (const delta of splitJson(String(item.arguments))) await send('response.function_call_arguments.delta', { ...base, delta });
      await send('response.function_call_arguments.done', { ...base, name: item.name, arguments: item.arguments });
    } else {
      await send('response.output_item.added', { output_index, item: { ...item, summary: [] } });
      for (const [summary_index, part] of (item.summary as Json[]).entries()) {
        await send('response.reasoning_summary_part.added', { ...base, summary_index, part: { type: 'summary_text', text: '' } });
        await send('response.reasoning_summary_text.delta', { ...base, summary_index, delta: part.text });
        await send('response.reasoning_summary_text.done', { ...base, summary_index, text: part.text });
        await send('response.reasoning_summary_part.done', { ...base, summary_index, part });
      }
    }
    await send('response.output_item.done', { output_index, item });
  }
  await send(response.status === 'completed' ? 'response.completed' : 'response.incomplete', { response });
  sink.end();
}

/** The API's message for a compaction item whose encrypted content it did not issue, or null when all are its own. */
/** The id prefix the API requires of an input item of each type that has one. */
const ID_PREFIXES: Record<string, string> = { message: 'msg', function_call: 'fc', reasoning: 'rs', custom_tool_call: 'ctc', web_search_call: 'ws' };

/** WebSearchTool and WebSearchPreviewTool types (openai package); ToolChoiceTypes forces one as `web_search_preview`. */
const WEB_SEARCH_TOOLS = new Set(['web_search', 'web_search_2025_08_26', 'web_search_preview', 'web_search_preview_2025_03_11']);
const WEB_SEARCH_STATUS = ['in_progress', 'searching', 'completed', 'failed', 'incomplete'];

/**
 * A web_search_call input item as ResponseFunctionWebSearch (openai package) defines it: every field
 * required (id, status, action), action one of search / open_page / find_in_page (find_in_page with its
 * pattern and url); the API's message for the first thing wrong, or null.
 */
function badWebSearchCall(it: Json, i: number): string | null {
  for (const f of ['id', 'status', 'action']) if (it[f] === undefined || it[f] === null) return `Missing required parameter: 'input[${i}].${f}'.`;
  if (!WEB_SEARCH_STATUS.includes(String(it.status))) return `Invalid value: '${String(it.status)}'. Supported values are: ${WEB_SEARCH_STATUS.map((v) => `'${v}'`).join(', ')}.`;
  const a = obj(it.action);
  if (!['search', 'open_page', 'find_in_page'].includes(String(a.type))) return `Invalid value: '${String(a.type)}'. Supported values are: 'search', 'open_page', and 'find_in_page'.`;
  if (a.type === 'find_in_page') for (const f of ['pattern', 'url']) if (typeof a[f] !== 'string') return `Missing required parameter: 'input[${i}].action.${f}'.`;
  return null;
}

/** A tool_choice naming a hosted tool the request does not offer: refused as the API refuses it (web_search_preview matches either web search tool). */
function unknownToolChoice(b: Json): string | null {
  const tc = obj(b.tool_choice);
  const type = typeof tc.type === 'string' ? tc.type : null;
  if (type === null || ['function', 'custom', 'allowed_tools', 'mcp'].includes(type)) return null;
  const offered = (Array.isArray(b.tools) ? b.tools.map(obj) : []).map((t) => String(t.type));
  const ok = WEB_SEARCH_TOOLS.has(type) ? offered.some((t) => WEB_SEARCH_TOOLS.has(t)) : offered.includes(type);
  return ok ? null : `Tool choice '${type}' not found in 'tools' parameter.`;
}

function unreadableCompaction(input: Json[], st: ResponsesState): string | null {
  for (const it of input) {
    if (it.type !== 'compaction') continue;
    if (typeof it.encrypted_content !== 'string') return "Missing required parameter: 'input[].encrypted_content'.";
    if (!st.compactions.has(it.encrypted_content)) return 'The encrypted content for this compaction item could not be verified. Reason: Encrypted content could not be decrypted or parsed.';
  }
  return null;
}

/** The body parameters of ResponseCompactParams (openai package); the API refuses any other. */
const COMPACT_PARAMS = new Set(['model', 'input', 'instructions', 'previous_response_id', 'prompt_cache_key', 'prompt_cache_options', 'prompt_cache_retention', 'service_tier', 'image']);

/**
 * POST /v1/responses/compact: unknown parameters, a missing model, no conversation, an unknown previous
 * response and compaction items it did not issue are refused as the API refuses them; the answer is
 * every user message of the conversation then one compaction item (encrypted content the mock
 * remembers, standing for a summary it reads back on later /v1/responses calls).
 */
export function serveCompact(req: RecordedRequest, reply: Reply, st: ResponsesState): void {
  const b = obj(req.body);
  const unknown = Object.keys(b).find((k) => !COMPACT_PARAMS.has(k));
  if (unknown !== undefined) return reply.error(400, `Unknown parameter: '${unknown}'.`);
  if (typeof b.model !== 'string' || b.model === '') return reply.error(400, "Missing required parameter: 'model'.");
  if (b.input !== undefined && b.input !== null && typeof b.input !== 'string' && !Array.isArray(b.input)) return reply.error(400, "Invalid type for 'input': expected one of a string or an array of input items.");
  let history: Json[] = [];
  if (b.previous_response_id !== undefined && b.previous_response_id !== null) {
    const prev = st.stored.get(String(b.previous_response_id));
    if (!prev) return reply.error(400, `Previous response with id '${String(b.previous_response_id)}' not found.`);
    history = prev;
  }
  const input = [...history, ...(typeof b.input === 'string' ? [{ type: 'message', role: 'user', content: b.input }] : Array.isArray(b.input) ? (b.input as unknown[]).map(obj) : [])];
  if (input.length === 0) return reply.error(400, "Missing required parameter: 'input'.");
  const refused = unreadableCompaction(input, st);
  if (refused !== null) return reply.error(400, refused);
  const texts = input.map((it) => (it.type === 'compaction' ? st.compactions.get(String(it.encrypted_content))! : textOf(it.content ?? it.output ?? it.arguments)));
  const prompt = [typeof b.instructions === 'string' ? b.instructions : '', ...texts].join('\n');
  const summary = `Summary: ${texts.filter((t) => t !== '').join(' | ').slice(0, 200)}`;
  const token = st.ids.next('gAAAA', 96);
  st.compactions.set(token, summary);
  const output: Json[] = input.filter((it) => (it.type ?? 'message') === 'message' && it.role === 'user')
    .map((it) => ({ id: typeof it.id === 'string' ? it.id : st.ids.next('msg_', 48), type: 'message', status: 'completed', role: 'user',
      content: typeof it.content === 'string' ? [{ type: 'input_text', text: it.content }] : it.content }));
  output.push({ id: st.ids.next('cmp_', 48), type: 'compaction', encrypted_content: token });
  const inputTokens = estimateTokens(prompt);
  const outputTokens = estimateTokens(summary);
  reply.json(200, {
    id: st.ids.next('resp_', 48), object: 'response.compaction', created_at: Math.floor(req.time / 1000), output,
    usage: { input_tokens: inputTokens, input_tokens_details: { cached_tokens: 0 }, output_tokens: outputTokens, output_tokens_details: { reasoning_tokens: 0 }, total_tokens: inputTokens + outputTokens },
  });
}
