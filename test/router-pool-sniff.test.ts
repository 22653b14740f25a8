// A large routed body skips the conversion pool: routing parses it on the event loop anyway, so
// sending it to a worker first only parsed it twice. The body's bytes tell (`"model":"router"` near
// either end); a body that writes it elsewhere still goes through the pool and routes the same; a
// false positive (the pair nested in metadata) is parsed here and answered as the pool would.
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { namesRouter } from '../src/http/router-mode.ts';
import { startMockOpenAI, type MockUpstream } from './mocks/index.ts';
import { startTestGateway, TEST_PRICING, type TestGateway } from './helpers/gateway.ts';

type Rec = Record<string, unknown>;
const THRESHOLD = 4096;
let up: MockUpstream; let gw: TestGateway; let poolCalls = 0;

before(async () => {
  up = await startMockOpenAI();
  gw = await startTestGateway({
    providers: [{ id: 'oai', format: 'openai-chat', base_url: up.url, models: [{ name: 'm-1', pricing: TEST_PRICING, capabilities: { tools: true }, context_window: 1_000_000, max_completion_tokens: 4000 }] }],
    gateway: { workers: { threads: 1, convert_threshold_bytes: THRESHOLD }, router: { exploration: { share: 0 } } },
  });
  const pool = gw.services.convert!;
  const prepare = pool.prepare.bind(pool);
  pool.prepare = (...a) => { poolCalls++; return prepare(...a); };
});
after(async () => { await gw?.stop(); await up?.close(); });

const turns = (n: number): Rec[] => Array.from({ length: n }, (_, i) => ({ role: i % 2 ? 'assistant' : 'user', content: `${i}: ${'a turn of an agent conversation about files and tests. '.repeat(20)}` }));

async function send(raw: string): Promise<{ status: number; model: string | null; pooled: boolean; upstream: Rec }> {
  up.reset();
  const before = poolCalls;
  const r = await fetch(`${gw.url}/v1/chat/completions`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: raw });
  const text = await r.text();
  assert.equal(r.status, 200, text);
  return { status: r.status, model: r.headers.get('x-router-model'), pooled: poolCalls > before, upstream: up.requests.at(-1)!.body as Rec };
}

test('namesRouter: the pair near either end, spaced or not; not elsewhere, not another value', () => {
  const mid = (s: string) => Buffer.from(`{"messages":"${'x'.repeat(2000)}",${s},"tools":"${'y'.repeat(2000)}"}`);
  assert.equal(namesRouter(Buffer.from(`{"model":"router","messages":"${'x'.repeat(5000)}"}`)), true);
  assert.equal(namesRouter(Buffer.from(`{"messages":"${'x'.repeat(5000)}","model": "router"}`)), true);
  assert.equal(namesRouter(mid('"model":"router"')), false);
  assert.equal(namesRouter(Buffer.from(`{"model":"routers","messages":"${'x'.repeat(5000)}"}`)), false, 'another model');
  assert.equal(namesRouter(Buffer.from(`{"model":"oai/m-1","messages":"say \\"model\\":\\"router\\""}`)), false, 'inside a string the quotes are escaped');
  // A match straddling the sniffed bytes' edge still counts.
  assert.equal(namesRouter(Buffer.from(`{"pad":"${'p'.repeat(490)}","model":"router","messages":"${'x'.repeat(5000)}"}`)), true);
});

test('a large routed body is parsed once, on the event loop; written mid-body it goes through the pool and routes the same', async () => {
  const messages = turns(30);
  const first = await send(JSON.stringify({ model: 'router', messages }));
  assert.ok(JSON.stringify({ model: 'router', messages }).length > THRESHOLD * 4);
  assert.equal(first.pooled, false);
  assert.equal(first.model, 'oai/m-1');
  // The same request with model written between two long fields: the sniff misses, the pool parses it, routing parses it again.
  const between = JSON.stringify({ messages, model: 'router', tools: [{ type: 'function', function: { name: 'lookup', description: 'Looks things up. '.repeat(40), parameters: { type: 'object', properties: {} } } }] });
  const pooled = await send(between);
  assert.equal(pooled.pooled, true);
  assert.equal(pooled.model, 'oai/m-1');
  assert.deepEqual({ ...pooled.upstream, tools: undefined }, { ...first.upstream, tools: undefined });
});

test('a named model whose body nests the pair in metadata (a false positive) is parsed here and answered as the pool would', async () => {
  const messages = turns(30);
  const named = await send(JSON.stringify({ model: 'oai/m-1', messages }));
  assert.equal(named.pooled, true, 'a large body to a named model goes to the pool');
  const nested = await send(JSON.stringify({ metadata: { model: 'router' }, model: 'oai/m-1', messages }));
  assert.equal(nested.pooled, false);
  assert.equal(nested.model, null, 'not routed');
  assert.deepEqual(nested.upstream.messages, named.upstream.messages);
  assert.equal(nested.upstream.model, 'm-1');
});
