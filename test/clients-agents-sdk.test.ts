// The OpenAI Agents SDK (@openai/agents) on the gateway's Responses API, against an Anthropic and a
// Gemini mock: an agent with a function tool runs its loop (model -> tool call -> tool output ->
// answer) through POST /v1/responses, plain and streamed, with tracing off and every request on
// 127.0.0.1 (global fetch is watched). The gateway records each turn like any inference. With model
// "router" the loop runs through the router, every turn on the model the first one chose.
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import OpenAI from 'openai';
import { Agent, OpenAIResponsesModel, run, setTracingDisabled, tool } from '@openai/agents';
import { startMockAnthropic, startMockGemini, type MockUpstream } from './mocks/index.ts';
import { startTestGateway, type TestGateway } from './helpers/gateway.ts';

type Rec = Record<string, any>;

let ant: MockUpstream; let gem: MockUpstream; let gw: TestGateway;
const seen: string[] = [];
const realFetch = globalThis.fetch;

before(async () => {
  setTracingDisabled(true);
  // Every request any library makes during these tests: all must stay on this machine.
  globalThis.fetch = ((input: Parameters<typeof fetch>[0], init?: RequestInit) => {
    seen.push(typeof input === 'string' ? input : input instanceof URL ? input.href : input.url);
    return realFetch(input, init);
  }) as typeof fetch;
  [ant, gem] = await Promise.all([startMockAnthropic(), startMockGemini()]);
  // Exploration off: a conversation's first turn may otherwise go to a model under min_evidence on purpose.
  gw = await startTestGateway({ providers: [{ id: 'ant', format: 'anthropic-messages', base_url: ant.url }, { id: 'gem', format: 'gemini', base_url: gem.url }], gateway: { router: { exploration: { share: 0 } } } });
});
after(async () => {
  globalThis.fetch = realFetch;
  await gw.stop(); await ant.close(); await gem.close();
});

function weatherAgent(model: string, calls: Rec[]): Agent {
  const getWeather = tool({
    name: 'get_weather',
    description: 'The weather in a city',
    parameters: { type: 'object' as const, properties: { city: { type: 'string' as const } }, required: ['city'], additionalProperties: true as const },
    strict: false,
    execute: async (args: unknown) => { calls.push(args as Rec); return `sunny, 22 degrees in ${(args as Rec).city}`; },
  });
  const client = new OpenAI({ baseURL: `${gw.url}/v1`, apiKey: 'unused', maxRetries: 0 });
  return new Agent({ name: 'weather', instructions: 'Answer with the tool.', tools: [getWeather], model: new OpenAIResponsesModel(client, model) });
}

for (const provider of ['ant', 'gem']) {
  describe(`agents SDK -> ${provider}`, () => {
    for (const stream of [false, true]) {
      test(`function tool loop (${stream ? 'streamed' : 'plain'})`, async () => {
        const mock = provider === 'ant' ? ant : gem;
        mock.reset();
        const calls: Rec[] = [];
        const agent = weatherAgent(`${provider}/test-model`, calls);
        const result = stream ? await run(agent, 'What is the weather in Paris?', { stream: true }) : await run(agent, 'What is the weather in Paris?');
        if (stream) {
          for await (const _ of (result as unknown as AsyncIterable<unknown>)) { /* drain */ }
          await (result as unknown as { completed: Promise<void> }).completed;
        }
        assert.deepEqual(calls, [{ city: 'Paris' }]);
        // Gemini carries a text tool result as {result: text}, which its mock echoes as JSON.
        assert.equal(result.finalOutput, provider === 'gem' ? 'The tool returned: {"result":"sunny, 22 degrees in Paris"}' : 'The tool returned: sunny, 22 degrees in Paris');
        assert.equal(mock.requests.length, 2, 'one upstream call per model turn');
        // The second turn carried the tool call and its output to the upstream.
        const second = JSON.stringify(mock.requests[1]!.body);
        assert.match(second, /sunny, 22 degrees in Paris/);
        assert.ok(seen.length > 0 && seen.every((u) => new URL(u).hostname === '127.0.0.1'), `only local requests: ${seen.join(', ')}`);
      });
    }
  });
}

// model "router": the SDK's loop runs through the router; the tool result's turn stays on the model
// that asked for the tool (the follow-up's prefix holds the first turn: affinity).
for (const stream of [false, true]) {
  test(`agents SDK with model "router" (${stream ? 'streamed' : 'plain'}): the tool loop completes, every turn on one routed model`, async () => {
    ant.reset(); gem.reset();
    const calls: Rec[] = [];
    const result = stream ? await run(weatherAgent('router', calls), 'What is the weather in Paris?', { stream: true }) : await run(weatherAgent('router', calls), 'What is the weather in Paris?');
    if (stream) {
      for await (const _ of (result as unknown as AsyncIterable<unknown>)) { /* drain */ }
      await (result as unknown as { completed: Promise<void> }).completed;
    }
    assert.deepEqual(calls, [{ city: 'Paris' }]);
    assert.match(String(result.finalOutput), /^The tool returned: .*sunny, 22 degrees in Paris/);
    const served = [ant.requests.length, gem.requests.length];
    assert.ok(served.includes(0) && served.includes(2), `both turns on one provider: ant ${served[0]}, gem ${served[1]}`);
  });
}

test('the agent turns are recorded as /v1/responses inferences with their usage', async () => {
  ant.reset();
  const calls: Rec[] = [];
  await run(weatherAgent('ant/test-model', calls), 'What is the weather in Paris?');
  await new Promise((r) => setTimeout(r, 100));
  const recs = (await gw.services.store!.listInferences({ limit: 50 })).filter((r) => r.route === '/v1/responses');
  assert.ok(recs.length >= 2);
  for (const r of recs.slice(0, 2)) {
    assert.equal(r.clientFormat, 'openai-responses');
    assert.equal(r.status, 200);
    assert.ok(r.inputTokens > 0 && r.outputTokens > 0);
    assert.notEqual(r.costUsd, '0');
  }
});
