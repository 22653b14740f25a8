// Mock Anthropic upstream: POST /v1/messages (JSON and the full SSE event sequence), tool_use,
// extended thinking with signatures, cache_control breakpoints; errors in Anthropic's shape.
// Requests the real API refuses are refused (anthropic-rules.ts).
import { BreakpointCache } from './cache.ts';
import { obj, readAnthropicPrompt } from './anthropic-prompt.ts';
import { anthropicRequestProblem } from './anthropic-rules.ts';
import { planReply } from './plan.ts';
import type { Plan } from './plan.ts';
import { sse, startMock } from './server.ts';
import type { MockOptions, MockUpstream, ProviderSpec, RecordedRequest, Reply } from './server.ts';
import { IdSource, estimateTokens, signatureFor, splitJson, splitText } from './text.ts';

type Json = Record<string, unknown>;

const ERROR_TYPES: Record<number, string> = {
  400: 'invalid_request_error', 401: 'authentication_error', 402: 'billing_error', 403: 'permission_error',
  404: 'not_found_error', 413: 'request_too_large', 429: 'rate_limit_error', 500: 'api_error',
  504: 'timeout_error', 529: 'overloaded_error',
};
const errorType = (status: number): string => ERROR_TYPES[status] ?? (status >= 500 ? 'api_error' : 'invalid_request_error');

/** The response content blocks, in order: thinking, then text or tool_use blocks. */
function contentBlocks(plan: Plan, ids: IdSource, omitThinking: boolean): Json[] {
  const blocks: Json[] = [];
  // `display: omitted` returns the block without its text; the signature still covers it.
  if (plan.thinking !== undefined) blocks.push({ type: 'thinking', thinking: omitThinking ? '' : plan.thinking, signature: signatureFor(plan.thinking) });
  if (plan.calls.length > 0) {
    for (const c of plan.calls) blocks.push({ type: 'tool_use', id: ids.next('toolu_01', 22), name: c.name, input: c.args });
  } else {
    blocks.push({ type: 'text', text: plan.gen.text });
  }
  return blocks;
}

function stopReason(plan: Plan): string {
  if (plan.calls.length > 0) return 'tool_use';
  return plan.gen.finish === 'length' ? 'max_tokens' : plan.gen.finish === 'stop_sequence' ? 'stop_sequence' : 'end_turn';
}

/** The body fields of MessageCountTokensParams (@anthropic-ai/sdk); the API refuses any other. */
const COUNT_TOKENS_FIELDS = new Set(['model', 'messages', 'system', 'tools', 'tool_choice', 'thinking', 'cache_control', 'output_config', 'output_format', 'context_management', 'mcp_servers', 'speed', 'user_profile_id', 'workspace_id']);

/**
 * The tools the model can call: those offered at the end of the conversation (`tools`, plus what a
 * system message's `tool_addition` offers, minus what a `tool_removal` withdraws), a `defer_loading` tool
 * only once loaded, by a `tool_reference` in a tool result (tool search) or in an addition. The model
 * never calls a tool it has not been shown, nor one withdrawn.
 */
function inContext(b: Record<string, unknown>): Array<Record<string, unknown>> {
  const loaded = new Set<string>();
  const known = new Map<string, Record<string, unknown>>();
  const offered = new Map<string, Record<string, unknown>>();
  for (const t of Array.isArray(b.tools) ? b.tools.map(obj) : []) { known.set(String(t.name), t); offered.set(String(t.name), t); }
  for (const m of Array.isArray(b.messages) ? b.messages.map(obj) : []) {
    for (const block of Array.isArray(m.content) ? m.content.map(obj) : []) {
      const tool = obj(block.tool);
      if (m.role === 'system' && (block.type === 'tool_addition' || block.type === 'tool_removal')) {
        const def = obj(tool.definition);
        const name = String(tool.type === 'tool_definition' ? def.name : tool.name);
        if (tool.type === 'tool_definition') known.set(name, def);
        if (block.type === 'tool_removal') offered.delete(name);
        else if (known.has(name)) { offered.set(name, known.get(name)!); loaded.add(name); }
      }
      if (block.type !== 'tool_result' || !Array.isArray(block.content)) continue;
      for (const r of block.content.map(obj)) if (r.type === 'tool_reference') loaded.add(String(r.tool_name));
    }
  }
  return [...offered.values()].filter((t) => t.defer_loading !== true || loaded.has(String(t.name)));
}

function anthropicSpec(opts: MockOptions): ProviderSpec {
  const ids = new IdSource();
  const reqIds = new IdSource();
  const cache = new BreakpointCache();

  async function messages(req: RecordedRequest, reply: Reply): Promise<void> {
    const b = obj(req.body);
    if (typeof b.model !== 'string' || b.model === '') return reply.error(400, 'model: Field required');
    if (typeof b.max_tokens !== 'number') return reply.error(400, 'max_tokens: Field required');
    if (!Array.isArray(b.messages) || b.messages.length === 0) return reply.error(400, 'messages: at least one message is required');
    const problem = anthropicRequestProblem(b, req.headers);
    if (problem !== null) return reply.error(400, problem);
    const prompt = readAnthropicPrompt(b);
    const tc = obj(b.tool_choice);
    const plan = planReply({
      tools: inContext(b).map((t) => ({ name: String(t.name), schema: t.input_schema })),
      choice: tc.type === 'tool' && typeof tc.name === 'string' ? { name: tc.name } : tc.type === 'any' ? 'any' : tc.type === 'none' ? 'none' : 'auto',
      lastUser: prompt.lastUser,
      toolResult: prompt.toolResult,
      stop: Array.isArray(b.stop_sequences) ? b.stop_sequences.filter((s) => typeof s === 'string') : [],
      maxTokens: b.max_tokens,
      // Adaptive thinking thinks here too; `display: omitted` is handled when the blocks are built.
      thinking: obj(b.thinking).type === 'enabled' || obj(b.thinking).type === 'adaptive',
      reply: opts.reply,
    });
    const total = estimateTokens(prompt.inputText);
    const cached = cache.apply(b.model, prompt.breakpoints, b.model.includes('haiku') ? 2048 : 1024);
    const usage = {
      input_tokens: total - cached.read - cached.written,
      cache_creation_input_tokens: cached.written,
      cache_read_input_tokens: cached.read,
      cache_creation: { ephemeral_5m_input_tokens: cached.written5m, ephemeral_1h_input_tokens: cached.written1h },
      output_tokens: plan.outputTokens,
      service_tier: 'standard',
    };
    const message = {
      id: ids.next('msg_01', 22),
      type: 'message',
      role: 'assistant',
      model: b.model,
      content: contentBlocks(plan, ids, obj(b.thinking).display === 'omitted'),
      stop_reason: stopReason(plan),
      stop_sequence: plan.gen.stopSequence ?? null,
      usage,
    };
    if (b.stream === true) await streamMessage(reply, message);
    else reply.json(200, message);
  }

  /**
   * POST /v1/messages/count_tokens as the API takes it: model and messages required, only the fields
   * of MessageCountTokensParams (anything else, max_tokens and stream included, is an extra input the
   * API refuses), and the same count the messages endpoint would bill as input for that prompt.
   */
  function countTokens(req: RecordedRequest, reply: Reply): void {
    const b = obj(req.body);
    const extra = Object.keys(b).find((k) => !COUNT_TOKENS_FIELDS.has(k));
    if (extra !== undefined) return reply.error(400, `${extra}: Extra inputs are not permitted`);
    if (typeof b.model !== 'string' || b.model === '') return reply.error(400, 'model: Field required');
    if (!Array.isArray(b.messages) || b.messages.length === 0) return reply.error(400, 'messages: at least one message is required');
    if (obj(b.messages[0]).role !== 'user') return reply.error(400, 'messages: first message must use the "user" role');
    reply.json(200, { input_tokens: estimateTokens(readAnthropicPrompt(b).inputText) });
  }

  return {
    basePath: '/v1',
    garbage: 'event: content_block_delta\ndata: {"type": "content_block_delta", "index": 0, "delta": {"type": "text_de\n\n',
    frames: () => ({
      scalar: 'event: content_block_delta\ndata: 42\n\n',
      error: sse({ type: 'error', error: { type: 'overloaded_error', message: 'Overloaded' } }, 'error'),
      oversize: (n) => `event: ping\ndata: {"type":"ping","pad":"${'A'.repeat(n)}"}\n\n`,
    }),
    headers: () => ({
      'request-id': reqIds.next('req_011C', 20),
      'anthropic-ratelimit-requests-limit': '4000',
      'anthropic-ratelimit-requests-remaining': '3999',
      'anthropic-ratelimit-input-tokens-limit': '400000',
      'anthropic-ratelimit-output-tokens-limit': '80000',
    }),
    errorBody: (status, message, headers) => ({
      body: { type: 'error', error: { type: errorType(status), message }, request_id: headers['request-id'] ?? null },
      ...(status === 529 || status === 429 ? { headers: { 'x-should-retry': 'true' } } : {}),
    }),
    checkAuth: (req, _url, apiKey) => {
      // Current SDKs send the key as `Authorization: Bearer`; older clients use `x-api-key`.
      const auth = req.headers.authorization;
      const bearer = typeof auth === 'string' && /^Bearer\s+/i.test(auth) ? auth.replace(/^Bearer\s+/i, '').trim() : '';
      const key = typeof req.headers['x-api-key'] === 'string' && req.headers['x-api-key'] !== '' ? req.headers['x-api-key'] : bearer;
      if (key === '') return { status: 401, message: 'x-api-key header is required' };
      if (apiKey !== undefined && key !== apiKey) return { status: 401, message: 'invalid x-api-key' };
      if (typeof req.headers['anthropic-version'] !== 'string') return { status: 400, message: 'anthropic-version: header is required' };
      return null;
    },
    handle: (req, url, reply) => {
      if (req.method === 'POST' && url.pathname === '/v1/messages') return messages(req, reply);
      if (req.method === 'POST' && url.pathname === '/v1/messages/count_tokens') return countTokens(req, reply);
      reply.error(404, `Not found: ${req.method} ${url.pathname}`);
    },
    reset: () => {
      ids.reset();
      reqIds.reset();
      cache.clear();
    },
  };
}

/** message_start, then per block start/deltas/stop (ping after the first start), message_delta, message_stop. */
async function streamMessage(reply: Reply, message: Json & { content: Json[]; usage: Json }): Promise<void> {
  const sink = reply.stream('text/event-stream; charset=utf-8');
  const send = (type: string, data: Json): Promise<void> => sink.write(sse({ type, ...data }, type));
  const { usage } = message;
  await send('message_start', {
    message: { ...message, content: [], stop_reason: null, stop_sequence: null, usage: { ...usage, output_tokens: 1 } },
  });
  for (const [index, block] of message.content.entries()) {
    let head: Json;
    let deltas: Json[];
    if (block.type === 'thinking') {
      head = { type: 'thinking', thinking: '', signature: '' };
      deltas = splitText(String(block.thinking)).map((thinking) => ({ type: 'thinking_delta', thinking }));
      deltas.push({ type: 'signature_delta', signature: block.signature });
    } else if (block.type === 'tool_use') {
      head = { type: 'tool_use', id: block.id, name: block.name, input: {} };
      deltas = ['', ...splitJson(JSON.stringify(block.input))].map((partial_json) => ({ type: 'input_json_delta', partial_json }));
    } else {
      head = { type: 'text', text: '' };
      deltas = splitText(String(block.text)).map((text) => ({ type: 'text_delta', text }));
    }
    await send('content_block_start', { index, content_block: head });
    if (index === 0) await send('ping', {});
    for (const delta of deltas) await send('content_block_delta', { index, delta });
    await send('content_block_stop', { index });
  }
  const { service_tier: _tier, cache_creation: _cc, ...counts } = usage;
  await send('message_delta', { delta: { stop_reason: message.stop_reason, stop_sequence: message.stop_sequence }, usage: counts });
  await send('message_stop', {});
  sink.end();
}

/** Starts the Anthropic mock; `url` ends in `/v1` (so requests go to /v1/messages). */
export function startMockAnthropic(opts: MockOptions = {}): Promise<MockUpstream> {
  return startMock(anthropicSpec(opts), opts);
}
