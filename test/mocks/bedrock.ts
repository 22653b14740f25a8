// Mock AWS Bedrock runtime: POST /model/{id}/converse (JSON) and /converse-stream (binary event
// stream), toolUse, reasoningContent, cachePoint caching with cacheDetails by ttl; errors as
// {message} + x-amzn-ErrorType. Requests Converse refuses are refused (bedrock-rules.ts).
import { randomUUID } from 'node:crypto';
import { BreakpointCache } from './cache.ts';
import { list, obj, readBedrockPrompt } from './bedrock-prompt.ts';
import { bedrockRequestProblem } from './bedrock-rules.ts';
import { encodeFrame, eventFrame } from './eventstream.ts';
import { planReply } from './plan.ts';
import { startMock } from './server.ts';
import type { MockOptions, MockUpstream, ProviderSpec, RecordedRequest, Reply } from './server.ts';
import { IdSource, estimateTokens, signatureFor, splitJson, splitText } from './text.ts';

type Json = Record<string, unknown>;
const CORAL = ':http://internal.amazon.com/coral/com.amazon.bedrock/';
const ERROR_TYPES: Record<number, string> = {
  400: 'ValidationException', 403: 'AccessDeniedException', 404: 'ResourceNotFoundException', 408: 'ModelTimeoutException',
  424: 'ModelErrorException', 429: 'ThrottlingException', 500: 'InternalServerException', 503: 'ServiceUnavailableException',
};

function errorTypeFor(status: number, message: string): string {
  if (message === 'Missing Authentication Token') return 'MissingAuthenticationTokenException';
  if (message.startsWith('The security token included')) return 'UnrecognizedClientException';
  return ERROR_TYPES[status] ?? (status >= 500 ? 'InternalServerException' : 'ValidationException');
}

/** Real Bedrock pads event payloads with a `p` field of varying length; so does the mock. */
const PAD = 'abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789';
const pad = (n: number): string => PAD.slice(0, 4 + ((n * 7) % (PAD.length - 4)));

/** TokenUsage.cacheDetails as Bedrock sends it: writes by ttl, 1h before 5m, only when something was written. */
function cacheDetails(w1h: number, w5m: number): { cacheDetails?: Json[] } {
  const details = [{ ttl: '1h', inputTokens: w1h }, { ttl: '5m', inputTokens: w5m }].filter((d) => d.inputTokens > 0);
  return details.length > 0 ? { cacheDetails: details } : {};
}

function bedrockSpec(opts: MockOptions): ProviderSpec {
  const ids = new IdSource();
  const cache = new BreakpointCache();

  async function converse(req: RecordedRequest, modelId: string, stream: boolean, reply: Reply): Promise<void> {
    const started = Date.now();
    const b = obj(req.body);
    if (list(b.messages).length === 0) return reply.error(400, 'The model returned the following errors: messages: at least one message is required');
    const problem = bedrockRequestProblem(b, modelId);
    if (problem !== null) return reply.error(400, problem);
    const prompt = readBedrockPrompt(b);
    const ic = obj(b.inferenceConfig);
    const plan = planReply({
      tools: prompt.tools,
      choice: prompt.choice,
      lastUser: prompt.lastUser,
      toolResult: prompt.toolResult,
      stop: Array.isArray(ic.stopSequences) ? ic.stopSequences.filter((s) => typeof s === 'string') : [],
      maxTokens: typeof ic.maxTokens === 'number' ? ic.maxTokens : undefined,
      thinking: obj(obj(b.additionalModelRequestFields).thinking).type === 'enabled',
      reply: opts.reply,
    });
    const total = estimateTokens(prompt.inputText);
    const cached = cache.apply(modelId, prompt.breakpoints, modelId.includes('haiku') ? 2048 : 1024);
    const inputTokens = total - cached.read - cached.written;
    const usage = {
      inputTokens, outputTokens: plan.outputTokens,
      totalTokens: inputTokens + plan.outputTokens + cached.read + cached.written,
      cacheReadInputTokens: cached.read, cacheWriteInputTokens: cached.written,
      ...cacheDetails(cached.written1h, cached.written5m),
    };
    const stopReason = plan.calls.length > 0 ? 'tool_use'
      : plan.gen.finish === 'length' ? 'max_tokens' : plan.gen.finish === 'stop_sequence' ? 'stop_sequence' : 'end_turn';
    const extra = plan.gen.stopSequence !== undefined ? { additionalModelResponseFields: { stop_sequence: plan.gen.stopSequence } } : {};
    const content: Json[] = [];
    if (plan.thinking !== undefined) {
      content.push({ reasoningContent: { reasoningText: { text: plan.thinking, signature: signatureFor(plan.thinking) } } });
    }
    for (const c of plan.calls) content.push({ toolUse: { toolUseId: ids.next('tooluse_', 22), name: c.name, input: c.args } });
    if (plan.calls.length === 0) content.push({ text: plan.gen.text });
    const metrics = { latencyMs: Math.max(1, Date.now() - started) };
    if (!stream) {
      return reply.json(200, { output: { message: { role: 'assistant', content } }, stopReason, usage, metrics, ...extra });
    }
    const sink = reply.stream('application/vnd.amazon.eventstream');
    let n = 0;
    const send = (type: string, payload: Json): Promise<void> => sink.write(eventFrame(type, { ...payload, p: pad(n++) }));
    await send('messageStart', { role: 'assistant' });
    for (const [contentBlockIndex, block] of content.entries()) {
      const delta = (d: Json): Promise<void> => send('contentBlockDelta', { contentBlockIndex, delta: d });
      if (block.reasoningContent) {
        const r = obj(obj(block.reasoningContent).reasoningText);
        for (const text of splitText(String(r.text))) await delta({ reasoningContent: { text } });
        await delta({ reasoningContent: { signature: r.signature } });
      } else if (block.toolUse) {
        const t = obj(block.toolUse);
        await send('contentBlockStart', { contentBlockIndex, start: { toolUse: { toolUseId: t.toolUseId, name: t.name } } });
        for (const input of splitJson(JSON.stringify(t.input))) await delta({ toolUse: { input } });
      } else {
        for (const text of splitText(String(block.text))) await delta({ text });
      }
      await send('contentBlockStop', { contentBlockIndex });
    }
    await send('messageStop', { stopReason, ...extra });
    await send('metadata', { usage, metrics });
    sink.end();
  }

  return {
    basePath: '',
    // A well-framed contentBlockDelta event whose JSON payload is cut short.
    garbage: encodeFrame({ ':event-type': 'contentBlockDelta', ':content-type': 'application/json', ':message-type': 'event' }, '{"contentBlockIndex":0,"delta":{"text":"oo'),
    frames: () => ({
      scalar: encodeFrame({ ':event-type': 'contentBlockDelta', ':content-type': 'application/json', ':message-type': 'event' }, 'null'),
      error: encodeFrame({ ':message-type': 'exception', ':exception-type': 'serviceUnavailableException', ':content-type': 'application/json' }, '{"message":"Bedrock is unavailable (injected fault)."}'),
      oversize: (n) => encodeFrame({ ':event-type': 'contentBlockDelta', ':content-type': 'application/json', ':message-type': 'event' }, Buffer.alloc(n, 0x41)),
    }),
    headers: () => ({ 'x-amzn-requestid': randomUUID() }),
    errorBody: (status, message) => ({ body: { message }, headers: { 'x-amzn-errortype': `${errorTypeFor(status, message)}${CORAL}` } }),
    checkAuth: (req, _url, apiKey) => {
      const auth = typeof req.headers.authorization === 'string' ? req.headers.authorization : '';
      // SigV4 is recorded, never verified; the access key id must match opts.apiKey when given.
      const sigv4 = /^AWS4-HMAC-SHA256\s+Credential=([^/,\s]+)\//.exec(auth);
      const bearer = /^Bearer\s+(\S+)/i.exec(auth);
      const key = sigv4?.[1] ?? bearer?.[1];
      if (key === undefined) return { status: 403, message: 'Missing Authentication Token' };
      if (apiKey !== undefined && key !== apiKey) return { status: 403, message: 'The security token included in the request is invalid.' };
      return null;
    },
    handle: (req, url, reply) => {
      const m = /^\/model\/([^/]+)\/(converse|converse-stream)$/.exec(url.pathname);
      if (req.method === 'POST' && m) return converse(req, decodeURIComponent(m[1]!), m[2] === 'converse-stream', reply);
      reply.error(404, `Unknown operation: ${req.method} ${url.pathname}`);
    },
    reset: () => {
      ids.reset();
      cache.clear();
    },
  };
}

/** Starts the Bedrock runtime mock; `url` is the bare origin (paths are /model/{id}/converse). */
export function startMockBedrock(opts: MockOptions = {}): Promise<MockUpstream> {
  return startMock(bedrockSpec(opts), opts);
}
