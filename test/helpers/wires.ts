// The four mock upstreams (one per wire format) behind one test gateway, and what the e2e format
// tests read back from them: usage in one shape, the tool ids each upstream received, usage replays.
import { startMockAnthropic, startMockBedrock, startMockGemini, startMockOpenAI, type MockUpstream } from '../mocks/index.ts';
import { startTestGateway, TEST_PRICING, type TestGateway, type TestProvider } from './gateway.ts';

export type Rec = Record<string, any>;
export type Wire = { id: string; format: TestProvider['format']; mock: MockUpstream };
/** Usage in one shape for every format: uncached input, cache reads/writes, output, reasoning. */
export type Norm = { input: number; read: number; write: number; output: number; reasoning: number };

/** Starts the four mocks and a gateway with providers oai, ant, gem and bed in front of them. */
export async function startWires(): Promise<{ wires: Wire[]; gw: TestGateway; close(): Promise<void> }> {
  const [oai, ant, gem, bed] = await Promise.all([startMockOpenAI(), startMockAnthropic(), startMockGemini(), startMockBedrock()]);
  const wires: Wire[] = [{ id: 'oai', format: 'openai-chat', mock: oai }, { id: 'ant', format: 'anthropic-messages', mock: ant },
    { id: 'gem', format: 'gemini', mock: gem }, { id: 'bed', format: 'bedrock-converse', mock: bed }];
  // The catalog entry of a model that can do everything the matrix asks of it (structured output included).
  // Bedrock serves it as a Claude model id, so Claude's request fields (thinking) apply there.
  const model = { name: 'test-model', pricing: TEST_PRICING, max_completion_tokens: 8192, capabilities: { tools: true, vision: true, reasoning: true, structured_output: true, prompt_caching: true } };
  const gw = await startTestGateway({
    providers: wires.map((w) => ({
      id: w.id, format: w.format, base_url: w.mock.url,
      models: [w.format === 'bedrock-converse' ? { ...model, upstream: 'anthropic.claude-test-model' } : model],
      ...(w.format === 'anthropic-messages' ? { forward_headers: ['anthropic-beta'] } : {}),
    })),
  });
  return { wires, gw, close: async () => { await gw.stop(); for (const w of wires) await w.mock.close(); } };
}

export function normUpstream(format: Wire['format'], u: Rec): Norm {
  switch (format) {
    case 'openai-chat': {
      const cached = u.prompt_tokens_details?.cached_tokens ?? 0;
      return { input: u.prompt_tokens - cached, read: cached, write: 0, output: u.completion_tokens, reasoning: u.completion_tokens_details?.reasoning_tokens ?? 0 };
    }
    case 'anthropic-messages':
      return { input: u.input_tokens, read: u.cache_read_input_tokens, write: u.cache_creation_input_tokens, output: u.output_tokens, reasoning: 0 };
    case 'gemini': {
      const cached = u.cachedContentTokenCount ?? 0;
      return { input: u.promptTokenCount - cached, read: cached, write: 0, output: u.candidatesTokenCount + (u.thoughtsTokenCount ?? 0), reasoning: u.thoughtsTokenCount ?? 0 };
    }
    case 'bedrock-converse':
      return { input: u.inputTokens, read: u.cacheReadInputTokens ?? 0, write: u.cacheWriteInputTokens ?? 0, output: u.outputTokens, reasoning: 0 };
  }
}

/** Sends the gateway's last upstream request straight to the mock again (fresh state, non-streaming) and returns its usage. */
export async function replayUsage(w: Wire): Promise<Norm> {
  const req = w.mock.requests.at(-1)!;
  w.mock.reset();
  const headers: Record<string, string> = { 'content-type': 'application/json' };
  for (const h of ['authorization', 'x-api-key', 'x-goog-api-key', 'anthropic-version']) {
    const v = req.headers[h];
    if (typeof v === 'string') headers[h] = v;
  }
  // Replayed as the non-streaming call: the mocks report the same usage either way.
  const body = { ...(req.body as Rec) };
  delete body.stream; delete body.stream_options;
  const path = req.path.replace(':streamGenerateContent?alt=sse', ':generateContent').replace('/converse-stream', '/converse');
  const r = await fetch(new URL(path, new URL(w.mock.url).origin), { method: 'POST', headers, body: JSON.stringify(body) });
  const json = await r.json() as Rec;
  return normUpstream(w.format, w.format === 'gemini' ? json.usageMetadata : json.usage);
}

export const lastBody = (w: Wire): Rec => w.mock.requests.at(-1)!.body as Rec;

/** The tool-result turn as the upstream received it: the call ids and the result ids, per wire format. */
export function upstreamToolIds(w: Wire): { callIds: string[]; resultIds: string[] } {
  const b = lastBody(w);
  switch (w.format) {
    case 'openai-chat':
      return { callIds: b.messages.flatMap((m: Rec) => (m.tool_calls ?? []).map((c: Rec) => c.id)), resultIds: b.messages.filter((m: Rec) => m.role === 'tool').map((m: Rec) => m.tool_call_id) };
    case 'anthropic-messages': {
      const blocks = b.messages.flatMap((m: Rec) => (Array.isArray(m.content) ? m.content : []));
      return { callIds: blocks.filter((x: Rec) => x.type === 'tool_use').map((x: Rec) => x.id), resultIds: blocks.filter((x: Rec) => x.type === 'tool_result').map((x: Rec) => x.tool_use_id) };
    }
    case 'bedrock-converse': {
      const blocks = b.messages.flatMap((m: Rec) => m.content);
      return { callIds: blocks.filter((x: Rec) => x.toolUse).map((x: Rec) => x.toolUse.toolUseId), resultIds: blocks.filter((x: Rec) => x.toolResult).map((x: Rec) => x.toolResult.toolUseId) };
    }
    case 'gemini': {
      // Gemini has no call ids on the wire (ids are optional); calls and responses pair by name.
      const parts = b.contents.flatMap((c: Rec) => c.parts);
      return { callIds: parts.filter((p: Rec) => p.functionCall).map((p: Rec) => p.functionCall.name), resultIds: parts.filter((p: Rec) => p.functionResponse).map((p: Rec) => p.functionResponse.name) };
    }
  }
}

/** The tool names the last request to `w` declared and the names of its earlier calls, read in its wire format. */
export function upstreamToolNames(w: Wire): { declared: string[]; called: string[] } {
  const b = lastBody(w);
  switch (w.format) {
    case 'openai-chat':
      return { declared: (b.tools ?? []).map((t: Rec) => t.function.name), called: b.messages.flatMap((m: Rec) => (m.tool_calls ?? []).map((c: Rec) => c.function.name)) };
    case 'anthropic-messages':
      return { declared: (b.tools ?? []).map((t: Rec) => t.name), called: b.messages.flatMap((m: Rec) => (Array.isArray(m.content) ? m.content : [])).filter((x: Rec) => x.type === 'tool_use').map((x: Rec) => x.name) };
    case 'bedrock-converse':
      return { declared: (b.toolConfig?.tools ?? []).map((t: Rec) => t.toolSpec.name), called: b.messages.flatMap((m: Rec) => m.content).filter((x: Rec) => x.toolUse).map((x: Rec) => x.toolUse.name) };
    case 'gemini':
      return { declared: (b.tools ?? []).flatMap((t: Rec) => t.functionDeclarations ?? []).map((d: Rec) => d.name), called: b.contents.flatMap((c: Rec) => c.parts).filter((p: Rec) => p.functionCall).map((p: Rec) => p.functionCall.name) };
  }
}
