// Mock Google Gemini upstream: models/{m}:generateContent and :streamGenerateContent (alt=sse or
// a JSON array), function calls, thought parts, implicit caching; errors as {error:{code,...}}.
// Requests the real API refuses are refused (gemini-rules.ts).
import { PrefixCache } from './cache.ts';
import { geminiRequestProblem, signsCalls } from './gemini-rules.ts';
import { planReply } from './plan.ts';
import type { Plan } from './plan.ts';
import { sse, startMock } from './server.ts';
import type { MockOptions, MockUpstream, ProviderSpec, RecordedRequest, Reply } from './server.ts';
import { IdSource, canonicalJson, estimateTokens, signatureFor, splitText } from './text.ts';

type Json = Record<string, unknown>;
const obj = (v: unknown): Json => (typeof v === 'object' && v !== null && !Array.isArray(v) ? (v as Json) : {});
const list = (v: unknown): Json[] => (Array.isArray(v) ? v.map(obj) : []);

const STATUS: Record<number, string> = {
  400: 'INVALID_ARGUMENT', 401: 'UNAUTHENTICATED', 403: 'PERMISSION_DENIED', 404: 'NOT_FOUND', 409: 'ABORTED',
  429: 'RESOURCE_EXHAUSTED', 499: 'CANCELLED', 500: 'INTERNAL', 501: 'NOT_IMPLEMENTED', 503: 'UNAVAILABLE', 504: 'DEADLINE_EXCEEDED',
};
export const GEMINI_MODELS: readonly string[] = ['gemini-2.5-pro', 'gemini-2.5-flash', 'gemini-2.5-flash-lite'];

function partText(p: Json): string {
  if (typeof p.text === 'string') return p.text;
  if (p.functionCall) return `${String(obj(p.functionCall).name ?? '')} ${canonicalJson(obj(p.functionCall).args ?? {})}`;
  if (p.functionResponse) return canonicalJson(obj(p.functionResponse).response ?? {});
  return '';
}

/** Input text in prompt order: system instruction, tool declarations, then contents. */
function readPrompt(b: Json): { text: string; lastUser: string; toolResult?: string } {
  const pieces: string[] = list(obj(b.systemInstruction).parts).map(partText);
  const decls = list(b.tools).flatMap((t) => list(t.functionDeclarations));
  for (const d of decls) pieces.push(`${String(d.name ?? '')} ${String(d.description ?? '')} ${canonicalJson(d.parameters ?? d.parametersJsonSchema ?? {})}`);
  let lastUser = '';
  const contents = list(b.contents);
  for (const c of contents) {
    const parts = list(c.parts);
    for (const p of parts) pieces.push(partText(p));
    const text = parts.filter((p) => typeof p.text === 'string').map(partText).join('');
    if (c.role !== 'model' && text !== '') lastUser = text;
  }
  const response = list(contents.at(-1)?.parts).find((p) => p.functionResponse);
  return { text: pieces.join('\n'), lastUser, toolResult: response ? partText(response) : undefined };
}

function finishReason(plan: Plan): string {
  return plan.gen.finish === 'length' ? 'MAX_TOKENS' : 'STOP';
}

export type GeminiMockOptions = MockOptions & {
  /**
   * Send the final usageMetadata in a chunk of its own after the finishReason chunk (which then carries
   * the running usage, prompt only), as Gemini streams sometimes end: `{usageMetadata, modelVersion, responseId}`.
   */
  usageAfterFinish?: boolean;
};

function geminiSpec(opts: GeminiMockOptions): ProviderSpec {
  const ids = new IdSource();
  const cache = new PrefixCache(1024, 128);

  async function generate(req: RecordedRequest, model: string, stream: boolean, url: URL, reply: Reply): Promise<void> {
    const b = obj(req.body);
    if (list(b.contents).length === 0) return reply.error(400, '* GenerateContentRequest.contents: contents is not specified');
    const problem = geminiRequestProblem(b, model);
    if (problem !== null) return reply.error(400, problem);
    const prompt = readPrompt(b);
    const fc = obj(obj(b.toolConfig).functionCallingConfig);
    const allowed = Array.isArray(fc.allowedFunctionNames) ? fc.allowedFunctionNames : [];
    const gc = obj(b.generationConfig);
    const plan = planReply({
      tools: list(b.tools).flatMap((t) => list(t.functionDeclarations)).map((d) => ({ name: String(d.name), schema: d.parameters ?? d.parametersJsonSchema })),
      choice: fc.mode === 'ANY' ? (allowed.length === 1 ? { name: String(allowed[0]) } : 'any') : fc.mode === 'NONE' ? 'none' : 'auto',
      lastUser: prompt.lastUser,
      toolResult: prompt.toolResult,
      stop: Array.isArray(gc.stopSequences) ? gc.stopSequences.filter((s) => typeof s === 'string') : [],
      maxTokens: typeof gc.maxOutputTokens === 'number' ? gc.maxOutputTokens : undefined,
      thinking: obj(gc.thinkingConfig).includeThoughts === true,
      reply: opts.reply,
    });
    const promptTokens = estimateTokens(prompt.text);
    const cached = cache.lookupAndStore(model, prompt.text);
    const candidates = plan.outputTokens - plan.thinkingTokens;
    const usage: Json = {
      promptTokenCount: promptTokens,
      candidatesTokenCount: candidates,
      totalTokenCount: promptTokens + plan.outputTokens,
      ...(cached > 0 ? { cachedContentTokenCount: cached } : {}),
      ...(plan.thinking !== undefined ? { thoughtsTokenCount: plan.thinkingTokens } : {}),
      promptTokensDetails: [{ modality: 'TEXT', tokenCount: promptTokens }],
      ...(cached > 0 ? { cacheTokensDetails: [{ modality: 'TEXT', tokenCount: cached }] } : {}),
    };
    // Signatures are this model's own (gemini-rules.ts refuses any other). Gemini 3 and later think on
    // every call and sign the first function call even when thoughts are not included.
    const issuer = `gemini:${model}`;
    const signature = plan.thinking !== undefined ? signatureFor(plan.thinking, issuer)
      : signsCalls(model) && plan.calls.length > 0 ? signatureFor(`call:${plan.calls[0]!.name}`, issuer) : undefined;
    const thought: Json[] = plan.thinking !== undefined ? [{ text: plan.thinking, thought: true, thoughtSignature: signature }] : [];
    // With thinking on, the first function call carries the signature too, as Gemini requires it back.
    const calls: Json[] = plan.calls.map((c, i) => ({
      functionCall: { name: c.name, args: c.args }, ...(i === 0 && signature ? { thoughtSignature: signature } : {}),
    }));
    const head = { modelVersion: model, responseId: ids.next('', 22) };
    const candidate = (parts: Json[], finish?: string): Json => ({
      content: { parts, role: 'model' }, ...(finish ? { finishReason: finish } : {}), index: 0,
    });
    if (!stream) {
      const parts = [...thought, ...(calls.length > 0 ? calls : [{ text: plan.gen.text }])];
      return reply.json(200, { candidates: [candidate(parts, finishReason(plan))], usageMetadata: usage, ...head });
    }
    const partial = { promptTokenCount: promptTokens, totalTokenCount: promptTokens, promptTokensDetails: usage.promptTokensDetails };
    const groups: Json[][] = thought.map((p) => [p]);
    if (calls.length > 0) groups.push(calls);
    else for (const text of splitText(plan.gen.text)) groups.push([{ text }]);
    if (groups.length === 0) groups.push([{ text: '' }]);
    const chunks: Json[] = groups.map((parts, i) => {
      const last = i === groups.length - 1;
      return { candidates: [candidate(parts, last ? finishReason(plan) : undefined)], usageMetadata: last && !opts.usageAfterFinish ? usage : partial, ...head };
    });
    if (opts.usageAfterFinish) chunks.push({ usageMetadata: usage, ...head });
    if (url.searchParams.get('alt') !== 'sse') return reply.json(200, chunks);
    const sink = reply.stream('text/event-stream');
    for (const c of chunks) await sink.write(sse(c).replace(/\n\n$/, '\r\n\r\n'));
    sink.end();
  }

  return {
    basePath: '/v1beta',
    garbage: 'data: {"candidates": [{"content": {"parts": [{"text": "oops"\r\n\r\n',
    frames: () => ({
      scalar: 'data: "text"\r\n\r\n',
      error: 'data: {"error": {"code": 503, "message": "The model is overloaded. Please try again later.", "status": "UNAVAILABLE"}}\r\n\r\n',
      oversize: (n) => `data: {"pad":"${'A'.repeat(n)}"}\r\n\r\n`,
    }),
    headers: () => ({ server: 'scaffolding on HTTPServer2', vary: 'Origin, X-Origin, Referer' }),
    errorBody: (status, message) => ({
      body: { error: { code: status, message, status: STATUS[status] ?? (status >= 500 ? 'INTERNAL' : 'FAILED_PRECONDITION') } },
    }),
    checkAuth: (req, url, apiKey) => {
      const header = req.headers['x-goog-api-key'];
      const key = typeof header === 'string' && header !== '' ? header : url.searchParams.get('key') ?? '';
      if (key === '') {
        return { status: 403, message: "Method doesn't allow unregistered callers (callers without established identity). Please use API Key or other form of API consumer identity to call this API." };
      }
      if (apiKey !== undefined && key !== apiKey) return { status: 400, message: 'API key not valid. Please pass a valid API key.' };
      return null;
    },
    handle: (req, url, reply) => {
      const m = /^\/v1beta\/models\/([^/:]+):(generateContent|streamGenerateContent)$/.exec(url.pathname);
      if (req.method === 'POST' && m) return generate(req, decodeURIComponent(m[1]!), m[2] === 'streamGenerateContent', url, reply);
      if (req.method === 'POST' && /^\/v1beta\/models\/[^/:]+:countTokens$/.test(url.pathname)) {
        return reply.json(200, { totalTokens: estimateTokens(readPrompt(obj(req.body)).text) });
      }
      if (req.method === 'GET' && url.pathname === '/v1beta/models') {
        return reply.json(200, { models: GEMINI_MODELS.map((name) => ({ name: `models/${name}`, displayName: name, supportedGenerationMethods: ['generateContent', 'countTokens'] })) });
      }
      reply.error(404, `Method not found: ${req.method} ${url.pathname}`);
    },
    reset: () => {
      ids.reset();
      cache.clear();
    },
  };
}

/** Starts the Gemini mock; `url` ends in `/v1beta`. */
export function startMockGemini(opts: GeminiMockOptions = {}): Promise<MockUpstream> {
  return startMock(geminiSpec(opts), opts);
}
