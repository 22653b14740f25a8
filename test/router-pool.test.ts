// Router mode when the worker pool prepares bodies (workers.threads 1, every body above the
// threshold): the router reads the prompt on the main thread and the answer is the same. A body that
// names the router near either end skips the pool (test/router-pool-sniff.test.ts); these write
// `model` between long fields, so the pool prepares them.
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { startMockOpenAI, startMockAnthropic, type MockUpstream } from './mocks/index.ts';
import { startTestGateway, type TestGateway } from './helpers/gateway.ts';

let a: MockUpstream; let b: MockUpstream; let gw: TestGateway; let poolCalls = 0;
const caps = { tools: true, vision: false, reasoning: false, structured_output: false, prompt_caching: false };

before(async () => {
  a = await startMockOpenAI();
  b = await startMockAnthropic();
  gw = await startTestGateway({
    providers: [
      { id: 'oa', format: 'openai-chat', base_url: a.url, models: [{ name: 'm1', pricing: { prompt: '0.000001', completion: '0.000002' }, capabilities: caps }] },
      { id: 'an', format: 'anthropic-messages', base_url: b.url, models: [{ name: 'm2', pricing: { prompt: '0.000002', completion: '0.000004' }, capabilities: caps }] },
    ],
    gateway: { workers: { threads: 1, convert_threshold_bytes: 0 }, router: { exploration: { share: 0 } } },
  });
  const pool = gw.services.convert!;
  const prepare = pool.prepare.bind(pool);
  pool.prepare = (...x) => { poolCalls++; return prepare(...x); };
});
after(async () => { await gw?.stop(); await a?.close(); await b?.close(); });

/** Written after `model`: its 600-character description keeps `model` away from the body's end. */
const LONG_TOOLS = [{ type: 'function', function: { name: 'lookup', description: 'Looks things up. '.repeat(40), parameters: { type: 'object', properties: {} } } }];

test('a pool-prepared body routes, translates and streams like an inline one', async () => {
  for (const models of [['m1'], ['m2']]) {
    for (const stream of [false, true]) {
      const before = poolCalls;
      const body = { models, stream, max_cost: 0.01, messages: [{ role: 'system', content: 'Be brief. '.repeat(60) }, { role: 'user', content: 'Hello pool' }], model: 'router', tools: LONG_TOOLS };
      const r = await fetch(`${gw.url}/v1/chat/completions`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(body) });
      assert.equal(r.status, 200, await r.clone().text());
      assert.equal(poolCalls, before + 1, 'the pool prepared it');
      assert.ok(r.headers.get('x-router-decision-id'));
      const text = await r.text();
      assert.match(text, models[0] === 'm1' ? /"model":"oa\/m1"/ : /"model":"an\/m2"/);
      assert.match(text, stream ? /Echo: Hello/ : /Echo: Hello pool/);
    }
  }
  // The output cap reached the upstream in its own format.
  const last = b.requests.at(-1)!;
  assert.ok(typeof (last.body as { max_tokens: number }).max_tokens === 'number');
});
