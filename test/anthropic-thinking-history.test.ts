// A relayed Anthropic body whose history Anthropic would refuse with thinking on: a tool loop whose
// assistant turn does not open with signed thinking (the conversation began on another model, or the
// client stripped thinking from history, as Claude Code does in router mode). The strict mock refuses
// it as Anthropic does; the relay drops `thinking` and says so, for a named model and for the router.
import { test, after } from 'node:test';
import assert from 'node:assert/strict';
import { startMockAnthropic } from './mocks/index.ts';
import { startTestGateway, TEST_PRICING } from './helpers/gateway.ts';

const anthropic = await startMockAnthropic();
const caps = { tools: true, vision: true, reasoning: true, structured_output: true, prompt_caching: true };
const gw = await startTestGateway({
  providers: [{ id: 'anthropic', format: 'anthropic-messages', base_url: anthropic.url, models: [{ name: 'claude-opus-4-8', pricing: TEST_PRICING, capabilities: caps, max_completion_tokens: 128000, context_window: 1000000 }] }],
});
after(async () => { await gw.stop(); await anthropic.close(); });

const tools = [{ name: 'Glob', input_schema: { type: 'object', properties: { pattern: { type: 'string' } } } }];
const post = (body: unknown) => fetch(`${gw.url}/v1/messages`, {
  method: 'POST', headers: { 'content-type': 'application/json', 'x-api-key': 'k', 'anthropic-version': '2023-06-01' }, body: JSON.stringify(body),
});
/** A tool loop as another model answered it: the assistant turn holds a call and no thinking. */
const unsignedLoop = [
  { role: 'user', content: 'Use a tool to list the files' },
  { role: 'assistant', content: [{ type: 'tool_use', id: 'toolu_01', name: 'Glob', input: { pattern: '*' } }] },
  { role: 'user', content: [{ type: 'tool_result', tool_use_id: 'toolu_01', content: 'a.ts' }] },
];

for (const model of ['anthropic/claude-opus-4-8', 'router']) {
  for (const stream of [false, true]) {
    test(`${model}${stream ? ', streamed' : ''}: thinking over a tool loop without signed thinking is dropped, reported`, async () => {
      anthropic.reset();
      const r = await post({ model, max_tokens: 20000, stream, thinking: { type: 'adaptive' }, tools, messages: unsignedLoop });
      const text = await r.text();
      assert.equal(r.status, 200, text.slice(0, 400));
      assert.match(r.headers.get('x-gateway-adjustments') ?? '', /thinking=dropped\(history has tool calls without signed thinking\)/);
      const sent = anthropic.requests.at(-1)!.body as Record<string, unknown>;
      assert.equal(sent.thinking, undefined);
      assert.equal((sent.messages as unknown[]).length, 3, 'the history itself is relayed as sent');
    });
  }
}

test('thinking stays where the history allows it: a signed loop, a plain turn, thinking off', async () => {
  // A first turn with thinking: the signed answer goes back in the follow-up and thinking stays on.
  const first = await (await post({ model: 'anthropic/claude-opus-4-8', max_tokens: 20000, thinking: { type: 'adaptive' }, tools, messages: [unsignedLoop[0]] })).json() as { content: Array<Record<string, unknown>> };
  assert.equal(first.content[0]!.type, 'thinking');
  const call = first.content.find((b) => b.type === 'tool_use')!;
  anthropic.reset();
  const signed = [unsignedLoop[0], { role: 'assistant', content: first.content }, { role: 'user', content: [{ type: 'tool_result', tool_use_id: call.id, content: 'a.ts' }] }];
  const r = await post({ model: 'anthropic/claude-opus-4-8', max_tokens: 20000, thinking: { type: 'adaptive' }, tools, messages: signed });
  assert.equal(r.status, 200, await r.text());
  assert.equal(r.headers.get('x-gateway-adjustments'), null);
  assert.deepEqual((anthropic.requests.at(-1)!.body as Record<string, unknown>).thinking, { type: 'adaptive' });
  // A plain turn (string content) keeps thinking; a body without thinking is untouched.
  for (const body of [{ thinking: { type: 'adaptive' }, messages: [{ role: 'user', content: 'hi' }] }, { messages: unsignedLoop }]) {
    const p = await post({ model: 'anthropic/claude-opus-4-8', max_tokens: 20000, tools, ...body });
    assert.equal(p.status, 200, await p.text());
    assert.equal(p.headers.get('x-gateway-adjustments'), null);
    assert.deepEqual((anthropic.requests.at(-1)!.body as Record<string, unknown>).thinking, body.thinking);
  }
});
