// The gateway's worker threads carry names the OS shows (top -H, ps -L, /proc/<pid>/task/*/comm), so
// an operator can tell which one is busy; the event loop's own thread is never renamed, even though
// a worker's module (the router's) is also imported there for its inline path.
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { readdirSync, readFileSync } from 'node:fs';
import { startMockOpenAI, type MockUpstream } from './mocks/index.ts';
import { startTestGateway, TEST_PRICING, type TestGateway } from './helpers/gateway.ts';

const names = (): Map<string, string> => new Map(readdirSync('/proc/self/task').map((t) => [t, readFileSync(`/proc/self/task/${t}/comm`, 'utf8').trim()]));

let up: MockUpstream; let gw: TestGateway;
const before0 = process.platform === 'linux' ? names().get(String(process.pid)) : undefined;
before(async () => {
  up = await startMockOpenAI();
  gw = await startTestGateway({
    providers: [{ id: 'openai', format: 'openai-chat', base_url: up.url, models: [{ name: 'gpt-4o-mini', pricing: TEST_PRICING }] }],
    gateway: { workers: { threads: 1 } },
  });
});
after(async () => { await gw?.stop(); await up?.close(); });

test('worker threads are named gw-*; the main thread keeps its name', { skip: process.platform !== 'linux' && 'Linux only' }, async () => {
  // A routed request brings the router's worker up, a large body for a named model the conversion pool's.
  for (const [model, text] of [['router', 'hello'], ['openai/gpt-4o-mini', `hello ${'x'.repeat(300_000)}`]]) {
    const r = await fetch(`${gw.url}/v1/chat/completions`, { method: 'POST', headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ model, messages: [{ role: 'user', content: text }] }) });
    assert.equal(r.status, 200, await r.text());
  }
  const deadline = Date.now() + 5_000;
  let seen = new Set<string>();
  while (Date.now() < deadline) {
    seen = new Set(names().values());
    if (seen.has('gw-store') && seen.has('gw-router') && seen.has('gw-convert')) break;
    await new Promise((res) => setTimeout(res, 50));
  }
  for (const n of ['gw-store', 'gw-router', 'gw-convert']) assert.ok(seen.has(n), `${n} among ${[...seen].join(', ')}`);
  assert.equal(names().get(String(process.pid)), before0, 'the event loop thread is not renamed');
});
