// Anthropic streams "one or more message_delta events" (its streaming docs): an early one may carry
// usage only, its stop_reason null, and a later one the stop reason. The Anthropic SDK keeps the last
// one's values; a translated chat client must get the finish reason that stop reason maps to, and the
// usage of the last delta, not a 'stop' sent at the first delta. Read with the official openai SDK.
import { after, before, beforeEach, test } from 'node:test';
import assert from 'node:assert/strict';
import OpenAI from 'openai';
import { startRawUpstream, sse, type RawUpstream } from './helpers/raw-upstream.ts';
import { startTestGateway, TEST_PRICING, type TestGateway } from './helpers/gateway.ts';
import { recordOf, settled } from './helpers/records.ts';

let up: RawUpstream; let gw: TestGateway; let openai: OpenAI;
const MODELS = [{ name: 'test-model', pricing: TEST_PRICING, capabilities: { tools: true } }];

before(async () => {
  up = await startRawUpstream();
  gw = await startTestGateway({ providers: [{ id: 'an', format: 'anthropic-messages', base_url: `${up.url}/v1`, models: MODELS }] });
  openai = new OpenAI({ baseURL: `${gw.url}/v1`, apiKey: 'sk-test', maxRetries: 0, timeout: 8000 });
});
after(async () => { await gw?.stop(); await up.close(); });
beforeEach(() => up.reset());

const ev = (data: Record<string, unknown>): string => sse(data, data.type as string);
const start = ev({ type: 'message_start', message: { id: 'msg_1', type: 'message', role: 'assistant', model: 'claude', content: [], stop_reason: null, stop_sequence: null, usage: { input_tokens: 12, output_tokens: 1 } } });
const delta = (stop_reason: string | null, output_tokens: number): string => ev({ type: 'message_delta', delta: { stop_reason, stop_sequence: null }, usage: { output_tokens } });
const text = ev({ type: 'content_block_start', index: 0, content_block: { type: 'text', text: '' } })
  + ev({ type: 'content_block_delta', index: 0, delta: { type: 'text_delta', text: 'A long answer' } }) + ev({ type: 'content_block_stop', index: 0 });
const tool = ev({ type: 'content_block_start', index: 0, content_block: { type: 'tool_use', id: 'toolu_1', name: 'get_weather', input: {} } })
  + ev({ type: 'content_block_delta', index: 0, delta: { type: 'input_json_delta', partial_json: '{"city": "Paris"}' } }) + ev({ type: 'content_block_stop', index: 0 });
const weather = { type: 'function' as const, function: { name: 'get_weather', parameters: { type: 'object', properties: { city: { type: 'string' } } } } };

for (const [name, blocks, stop, finish] of [['max_tokens', text, 'max_tokens', 'length'], ['tool_use', tool, 'tool_use', 'tool_calls']] as const) {
  test(`a usage-only message_delta before the one with stop_reason ${name}: the chat client gets finish_reason ${finish}`, async () => {
    up.push({ chunks: [start, blocks, delta(null, 5), delta(stop, 9), ev({ type: 'message_stop' })] });
    const { data, response } = await openai.chat.completions.create({
      model: 'an/test-model', stream: true, stream_options: { include_usage: true }, tools: [weather], messages: [{ role: 'user', content: 'hi' }],
    }).withResponse();
    const finishes: Array<string | null> = [];
    let usage: OpenAI.CompletionUsage | null | undefined = null;
    for await (const chunk of data) {
      for (const c of chunk.choices) if (c.finish_reason !== null) finishes.push(c.finish_reason);
      if (chunk.usage) usage = chunk.usage;
    }
    // Before: ['stop'], sent at the usage-only delta; the stop reason after it was dropped.
    assert.deepEqual(finishes, [finish]);
    assert.equal(usage?.completion_tokens, 9);
    assert.equal(await settled(gw), 0);
    const rec = await recordOf(gw, response.headers.get('x-inference-id')!);
    assert.deepEqual([rec.finishReason, rec.outputTokens, rec.partial ?? false], [stop, 9, false]);
  });
}
