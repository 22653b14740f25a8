// Mock OpenAI upstream: POST /v1/chat/completions (JSON and SSE, tools, reasoning usage,
// POST /v1/responses in openai-responses.ts,
// automatic prefix caching), plus embeddings and models; errors in OpenAI's {error:{...}} shape.
// Requests the real API refuses are refused (openai-rules.ts); "refuse me" in a prompt gets a refusal.
import { randomBytes } from 'node:crypto';
import { PrefixCache } from './cache.ts';
import { OPENAI_MODELS, serveEmbeddings, serveModels } from './openai-embeddings.ts';
import { sse, startMock } from './server.ts';
import type { MockOptions, MockUpstream, ProviderSpec, RecordedRequest, Reply } from './server.ts';
import { mistralToolIdProblem, openaiRequestProblem } from './openai-rules.ts';
import { newResponsesState, serveCompact, serveResponses } from './openai-responses.ts';
import { planReply } from './plan.ts';
import { IdSource, canonicalJson, estimateTokens, splitJson, splitText } from './text.ts';

type Json = Record<string, unknown>;
const obj = (v: unknown): Json => (typeof v === 'object' && v !== null && !Array.isArray(v) ? (v as Json) : {});

/** Text of a message's content: a string, or the text parts of an array. */
function textOf(content: unknown): string {
  if (typeof content === 'string') return content;
  if (Array.isArray(content)) return content.map((p) => (typeof obj(p).text === 'string' ? obj(p).text : '')).join('');
  return '';
}

/** Every piece of input text, in prompt order: tool definitions, then messages. */
function promptText(messages: Json[], tools: Json[]): string {
  const parts = tools.map((t) => {
    const f = obj(t.function);
    return `${String(f.name ?? '')} ${String(f.description ?? '')} ${canonicalJson(f.parameters ?? {})}`;
  });
  for (const m of messages) {
    parts.push(textOf(m.content));
    if (Array.isArray(m.tool_calls)) for (const c of m.tool_calls) parts.push(String(obj(obj(c).function).arguments ?? ''));
  }
  return parts.join('\n');
}

const REFUSAL = "I'm sorry, but I can't help with that.";

const REASONING_TOKENS: Record<string, number> = { minimal: 8, low: 16, medium: 64, high: 256 };

interface Call { id: string; name: string; arguments: string }

function errorType(status: number): { type: string; code: string | null } {
  if (status === 401) return { type: 'invalid_request_error', code: 'invalid_api_key' };
  if (status === 404) return { type: 'invalid_request_error', code: 'model_not_found' };
  if (status === 429) return { type: 'requests', code: 'rate_limit_exceeded' };
  if (status >= 500) return { type: 'server_error', code: null };
  return { type: 'invalid_request_error', code: null };
}

const MISSING_KEY = "You didn't provide an API key. You need to provide your API key in an Authorization header using Bearer auth (i.e. Authorization: Bearer YOUR_KEY).";
const AZURE_DENIED = 'Access denied due to invalid subscription key or wrong API endpoint. Make sure to provide a valid key for an active subscription and use a correct regional API endpoint for your resource.';

/** 'azure' serves /openai/deployments/{d}/... with an `api-key` header and `api-version` query. */
type Flavor = 'openai' | 'azure' | 'mistral';

function openaiSpec(opts: MockOptions, flavor: Flavor): ProviderSpec {
  const ids = new IdSource();
  const cache = new PrefixCache(1024, 128);
  const responses = newResponsesState(cache);

  async function chat(req: RecordedRequest, reply: Reply, deployment?: string): Promise<void> {
    const b = obj(req.body);
    const model = typeof b.model === 'string' && b.model !== '' ? b.model : deployment;
    if (typeof model !== 'string' || model === '') return reply.error(400, 'you must provide a model parameter');
    if (!Array.isArray(b.messages) || b.messages.length === 0) {
      return reply.error(400, "Invalid 'messages': empty array. Expected an array with minimum length 1.");
    }
    const problem = flavor === 'mistral' ? mistralToolIdProblem(b) ?? openaiRequestProblem(b) : openaiRequestProblem(b);
    if (problem !== null) return reply.error(400, problem);
    const messages = b.messages.map(obj);
    const tools = Array.isArray(b.tools) ? b.tools.map(obj) : [];
    const last = messages[messages.length - 1]!;
    const lastUser = textOf([...messages].reverse().find((m) => m.role === 'user')?.content);
    const prompt = promptText(messages, tools);
    const promptTokens = estimateTokens(prompt);
    const cached = cache.lookupAndStore(model, prompt);

    const choice = b.tool_choice;
    const forced = obj(obj(choice).function).name;
    const plan = planReply({
      tools: tools.map((t) => ({ name: String(obj(t.function).name), schema: obj(t.function).parameters })),
      choice: typeof forced === 'string' ? { name: forced } : choice === 'required' ? 'any' : choice === 'none' ? 'none' : 'auto',
      lastUser,
      toolResult: last.role === 'tool' ? textOf(last.content) : undefined,
      stop: typeof b.stop === 'string' ? [b.stop] : Array.isArray(b.stop) ? b.stop.filter((s) => typeof s === 'string') : [],
      maxTokens: typeof b.max_completion_tokens === 'number' ? b.max_completion_tokens
        : typeof b.max_tokens === 'number' ? b.max_tokens : undefined,
      thinking: false,
      reply: opts.reply,
    });
    // Mistral's call ids are 9 letters or digits.
    const calls: Call[] = plan.calls.map((c) => ({ id: flavor === 'mistral' ? ids.next('', 9) : ids.next('call_', 24), name: c.name, arguments: c.json }));
    const gen = plan.gen;
    const finishReason = calls.length > 0 ? 'tool_calls' : gen.finish === 'length' ? 'length' : 'stop';
    const reasoning = typeof b.reasoning_effort === 'string' ? REASONING_TOKENS[b.reasoning_effort] ?? 64 : 0;
    const completion = plan.outputTokens + reasoning;
    const usage = {
      prompt_tokens: promptTokens,
      completion_tokens: completion,
      total_tokens: promptTokens + completion,
      prompt_tokens_details: { cached_tokens: cached, audio_tokens: 0 },
      completion_tokens_details: {
        reasoning_tokens: reasoning, audio_tokens: 0, accepted_prediction_tokens: 0, rejected_prediction_tokens: 0,
      },
    };
    const head = {
      id: ids.next('chatcmpl-', 29),
      created: Math.floor(req.time / 1000),
      model,
      service_tier: 'default',
      system_fingerprint: 'fp_mock0001',
    };
    const toolCalls = calls.map((c) => ({ id: c.id, type: 'function', function: { name: c.name, arguments: c.arguments } }));

    // "refuse me" in the prompt: the model declines, as OpenAI reports it (content null, refusal text).
    const refusal = calls.length === 0 && /refuse me/i.test(lastUser) ? REFUSAL : null;
    if (b.stream !== true) {
      const message: Json = { role: 'assistant', content: calls.length > 0 || refusal ? null : gen.text, refusal, annotations: [] };
      if (calls.length > 0) message.tool_calls = toolCalls;
      reply.json(200, {
        id: head.id, object: 'chat.completion', created: head.created, model,
        choices: [{ index: 0, message, logprobs: null, finish_reason: finishReason }],
        usage, service_tier: head.service_tier, system_fingerprint: head.system_fingerprint,
      });
      return;
    }
    await streamChat(reply, head, gen.text, calls, finishReason, obj(b.stream_options).include_usage === true ? usage : undefined, refusal);
  }

  return {
    basePath: flavor === 'azure' ? '/openai' : '/v1',
    garbage: 'data: {"id": "chatcmpl-broken", "choices": [{"delta": {"content": "oops"\n\n',
    frames: (path) => ({
      scalar: 'data: null\n\n',
      // Chat streams carry a mid-stream error as a bare {error} chunk; the Responses API as an `error` event.
      error: path.includes('/responses')
        ? sse({ type: 'error', code: 'server_error', message: 'The server had an error while processing your request.', param: null, sequence_number: 0 }, 'error')
        : sse({ error: { message: 'The server had an error while processing your request.', type: 'server_error', param: null, code: null } }),
      oversize: (n) => `data: {"pad":"${'A'.repeat(n)}"}\n\n`,
    }),
    headers: () => ({
      'x-request-id': `req_${randomBytes(16).toString('hex')}`,
      'openai-version': '2020-10-01',
      'openai-processing-ms': '12',
      'x-ratelimit-limit-requests': '10000',
      'x-ratelimit-remaining-requests': '9999',
      'x-ratelimit-limit-tokens': '30000000',
      'x-ratelimit-remaining-tokens': '29999000',
    }),
    errorBody: (status, message) => {
      if (flavor === 'azure' && status === 401) return { body: { error: { code: '401', message } } };
      // Mistral's 400s are flat: {object: "error", message, type, param, code} (as quoted in its users' reports).
      if (flavor === 'mistral' && status === 400) return { body: { object: 'error', message, type: 'invalid_request_error', param: null, code: null } };
      const { type, code } = errorType(status);
      // A refused parameter is named in `param`, with OpenAI's code for it (its 400s for reasoning models).
      const named = status === 400 ? /^Unsupported (parameter|value): '([^']+)'/.exec(message) : null;
      if (named) return { body: { error: { message, type, param: named[2], code: `unsupported_${named[1]}` } } };
      return { body: { error: { message, type, param: null, code } } };
    },
    checkAuth: (req, _url, apiKey) => {
      const auth = req.headers.authorization;
      const bearer = typeof auth === 'string' && /^Bearer\s+/i.test(auth) ? auth.replace(/^Bearer\s+/i, '').trim() : '';
      const azureKey = req.headers['api-key'];
      const key = flavor === 'azure' && typeof azureKey === 'string' && azureKey !== '' ? azureKey : bearer;
      if (key === '') return opts.authOptional ? null : { status: 401, message: flavor === 'azure' ? AZURE_DENIED : MISSING_KEY };
      if (apiKey !== undefined && key !== apiKey) {
        return { status: 401, message: flavor === 'azure' ? AZURE_DENIED : `Incorrect API key provided: ${key.slice(0, 3)}***${key.slice(-4)}.` };
      }
      return null;
    },
    handle: (req, url, reply) => {
      const p = url.pathname;
      if (flavor === 'azure') {
        const m = /^\/openai\/deployments\/([^/]+)\/(chat\/completions|embeddings)$/.exec(p);
        if (req.method !== 'POST' || !m || !url.searchParams.get('api-version')) return reply.error(404, 'Resource not found');
        const deployment = decodeURIComponent(m[1]!);
        if (m[2] === 'embeddings') return serveEmbeddings({ model: deployment, ...obj(req.body) }, reply);
        return chat(req, reply, deployment);
      }
      if (req.method === 'POST' && p === '/v1/chat/completions') return chat(req, reply);
      if (req.method === 'POST' && p === '/v1/embeddings') return serveEmbeddings(req.body, reply);
      if (req.method === 'POST' && p === '/v1/responses') return serveResponses(req, reply, responses, opts.reply);
      if (req.method === 'POST' && p === '/v1/responses/compact') return serveCompact(req, reply, responses);
      if (req.method === 'GET' && (p === '/v1/models' || p.startsWith('/v1/models/'))) return serveModels(p.slice(10), reply);
      reply.error(404, `Invalid URL (${req.method} ${p})`);
    },
    reset: () => {
      ids.reset();
      cache.clear();
      responses.ids.reset();
      responses.stored.clear();
      responses.compactions.clear();
    },
  };
}

/** Streams role chunk, content or tool-call deltas, finish chunk, optional usage chunk, [DONE]. */
async function streamChat(
  reply: Reply, head: Json, text: string, calls: Call[], finishReason: string, usage: Json | undefined, refusal: string | null,
): Promise<void> {
  const sink = reply.stream('text/event-stream; charset=utf-8');
  const base = { id: head.id, object: 'chat.completion.chunk', created: head.created, model: head.model,
    service_tier: head.service_tier, system_fingerprint: head.system_fingerprint };
  const chunk = (delta: Json, finish: string | null = null): string => sse({
    ...base, choices: [{ index: 0, delta, logprobs: null, finish_reason: finish }], ...(usage ? { usage: null } : {}),
  });
  await sink.write(chunk({ role: 'assistant', content: calls.length > 0 ? null : '', refusal: null }));
  if (refusal) for (const piece of splitText(refusal)) await sink.write(chunk({ refusal: piece }));
  else for (const piece of splitText(text)) await sink.write(chunk({ content: piece }));
  for (const [index, c] of calls.entries()) {
    await sink.write(chunk({ tool_calls: [{ index, id: c.id, type: 'function', function: { name: c.name, arguments: '' } }] }));
    for (const piece of splitJson(c.arguments)) await sink.write(chunk({ tool_calls: [{ index, function: { arguments: piece } }] }));
  }
  await sink.write(chunk({}, finishReason));
  if (usage) await sink.write(sse({ ...base, choices: [], usage }));
  await sink.write('data: [DONE]\n\n');
  sink.end();
}

/** Starts the OpenAI mock; `url` ends in `/v1`. */
export function startMockOpenAI(opts: MockOptions = {}): Promise<MockUpstream> {
  return startMock(openaiSpec(opts, 'openai'), opts);
}

/**
 * Starts an Azure OpenAI flavour of the same mock: `url` ends in `/openai`; routes are
 * /deployments/{d}/chat/completions and /deployments/{d}/embeddings with `?api-version=`
 * (else 404), the key in `api-key`, the deployment as the model when the body names none.
 */
export function startMockAzureOpenAI(opts: MockOptions = {}): Promise<MockUpstream> {
  return startMock(openaiSpec(opts, 'azure'), opts);
}

/**
 * Starts a Mistral flavour (La Plateforme's OpenAI-like chat completions): OpenAI's shape, except
 * that tool call ids must be 9 letters or digits (its own are), and errors are flat objects.
 */
export function startMockMistral(opts: MockOptions = {}): Promise<MockUpstream> {
  return startMock(openaiSpec(opts, 'mistral'), opts);
}

export { OPENAI_MODELS };
