// End to end, through the real HTTP gateway: every call leaves one inference record whose tokens and
// cost equal what the mock upstream reported (cost = tokens x TEST_PRICING, exact decimal strings),
// for streaming and non-streaming calls in both client formats, same-format and cross-format;
// attempts (with a fallback) are recorded; /metrics shows the named series after traffic; and a
// response id is usable by /v1/feedback at once, before its record is flushed.
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { startMockOpenAI, startMockAnthropic, type MockUpstream } from './mocks/index.ts';
import { startTestGateway, TEST_PRICING, type TestGateway } from './helpers/gateway.ts';
import type { InferenceRecord } from '../src/store/types.ts';

let oa: MockUpstream; let an: MockUpstream; let gw: TestGateway;
const UUID_RE = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/;

before(async () => {
  oa = await startMockOpenAI();
  an = await startMockAnthropic();
  gw = await startTestGateway({
    providers: [
      { id: 'mock', format: 'openai-chat', base_url: oa.url },
      { id: 'anth', format: 'anthropic-messages', base_url: an.url },
      { id: 'dead', format: 'openai-chat', base_url: 'http://127.0.0.1:9' },
    ],
    gateway: {
      fallbacks: { 'dead/test-model': ['mock/test-model'] },
      upstream: { retry_budget_floor: 1000, ejection: { consecutive_failures: 1000 } },
    },
  });
});
after(async () => { await gw.stop(); await oa.close(); await an.close(); });

/** Exact decimal string of tokens x a per-token price given as a decimal string (both non-negative). */
function mulPrice(tokens: number, price: string): bigint {
  const [i, f = ''] = price.split('.');
  return BigInt(tokens) * BigInt(`${i}${f.padEnd(12, '0')}`); // in units of 1e-12 USD
}
function pico(s: string): bigint { const [i, f = ''] = s.split('.'); return BigInt(`${i}${f.padEnd(12, '0')}`); }
function fromPico(n: bigint): string {
  const s = n.toString().padStart(13, '0');
  const out = `${s.slice(0, -12)}.${s.slice(-12)}`.replace(/\.?0+$/, '');
  return out === '' ? '0' : out;
}

/** What the mock reports for this conversation: asked directly with a non-streaming call (the mocks are deterministic). */
async function mockUsage(format: 'openai' | 'anthropic', messages: unknown[]): Promise<{ input: number; output: number }> {
  if (format === 'openai') {
    const r = await fetch(`${oa.url}/chat/completions`, { method: 'POST', headers: { 'content-type': 'application/json', authorization: 'Bearer x' }, body: JSON.stringify({ model: 'test-model', messages }) });
    const j = (await r.json()) as { usage: { prompt_tokens: number; completion_tokens: number } };
    return { input: j.usage.prompt_tokens, output: j.usage.completion_tokens };
  }
  const r = await fetch(`${an.url}/messages`, { method: 'POST', headers: { 'content-type': 'application/json', 'x-api-key': 'x', 'anthropic-version': '2023-06-01' }, body: JSON.stringify({ model: 'test-model', max_tokens: 256, messages }) });
  const j = (await r.json()) as { usage: { input_tokens: number; output_tokens: number } };
  return { input: j.usage.input_tokens, output: j.usage.output_tokens };
}

async function recordOf(id: string): Promise<InferenceRecord> {
  for (let i = 0; i < 100; i++) {
    const rec = (await gw.services.store!.listInferences({ limit: 500 })).find((r) => r.id === id);
    if (rec) return rec;
    await new Promise((r) => setTimeout(r, 20));
  }
  throw new Error(`no record for ${id}`);
}

type Case = { client: 'openai' | 'anthropic'; model: string; upstream: 'openai' | 'anthropic'; stream: boolean };
const cases: Case[] = [];
for (const client of ['openai', 'anthropic'] as const) {
  for (const [model, upstream] of [['mock/test-model', 'openai'], ['anth/test-model', 'anthropic']] as const) {
    for (const stream of [false, true]) cases.push({ client, model, upstream, stream });
  }
}

const measured: string[] = [];
for (const c of cases) {
  test(`${c.client} client -> ${c.upstream} upstream, ${c.stream ? 'streaming' : 'non-streaming'}: record tokens and cost match the mock's usage`, async () => {
    const text = `records ${c.client} ${c.upstream} ${c.stream ? 'stream' : 'json'} please count these words`;
    const messages = [{ role: 'user', content: text }];
    const want = await mockUsage(c.upstream, messages);
    const path = c.client === 'openai' ? '/v1/chat/completions' : '/v1/messages';
    const r = await fetch(`${gw.url}${path}`, {
      method: 'POST', headers: { 'content-type': 'application/json', 'anthropic-version': '2023-06-01' },
      body: JSON.stringify({ model: c.model, messages, max_tokens: 256, stream: c.stream, metadata: c.client === 'anthropic' ? { user_id: 'u-1' } : undefined }),
    });
    const body = await r.text();
    assert.equal(r.status, 200, body);
    const id = r.headers.get('x-inference-id')!;
    assert.match(id, UUID_RE);
    if (!c.stream) {
      const j = JSON.parse(body) as { id: string; usage: Record<string, number> };
      assert.equal(j.id, id, 'the response id is the inference id');
      // The client sees the same usage the upstream reported.
      if (c.client === 'openai') assert.deepEqual([j.usage.prompt_tokens, j.usage.completion_tokens], [want.input, want.output]);
      else assert.deepEqual([j.usage.input_tokens, j.usage.output_tokens], [want.input, want.output]);
    } else {
      assert.ok(body.includes(id), 'the stream carries the inference id');
    }
    const rec = await recordOf(id);
    assert.equal(rec.status, 200);
    assert.equal(rec.stream, c.stream);
    assert.equal(rec.route, path);
    assert.equal(rec.servedModel, c.model);
    assert.equal(rec.provider, c.model.split('/')[0]);
    assert.equal(rec.inputTokens, want.input, 'input tokens');
    assert.equal(rec.outputTokens, want.output, 'output tokens');
    assert.equal(rec.cacheReadTokens, 0);
    assert.equal(rec.cacheWriteTokens, 0);
    const cost = fromPico(mulPrice(want.input, TEST_PRICING.prompt) + mulPrice(want.output, TEST_PRICING.completion));
    assert.equal(rec.costUsd, cost, 'cost is tokens x price, as an exact decimal string');
    assert.equal(rec.attempts.length, 1);
    assert.equal(rec.attempts[0]!.provider, c.model.split('/')[0]);
    assert.equal(rec.attempts[0]!.status, 200);
    assert.equal(rec.finishReason !== null, true);
    if (c.stream) assert.ok(rec.ttftMs !== null && rec.ttftMs >= 0 && rec.ttftMs <= rec.latencyMs);
    measured.push(`${c.client}->${c.upstream} ${c.stream ? 'stream' : 'json'}: ${want.input}+${want.output} tokens, $${rec.costUsd}`);
  });
}

test('sum of record costs equals the sum of the metric counter (exact decimal)', async () => {
  const recs = (await gw.services.store!.listInferences({ limit: 500 })).filter((r) => r.status === 200);
  const total = recs.reduce((s, r) => s + pico(r.costUsd), 0n);
  const m = await (await fetch(`${gw.url}/metrics`)).text();
  const costs = [...m.matchAll(/^gateway_cost_usd_total\{provider="(\w+)"\} ([0-9.]+)$/gm)].reduce((s, x) => s + pico(x[2]!), 0n);
  assert.equal(fromPico(costs), fromPico(total));
});

test('a fallback records both attempts, the failed one first', async () => {
  const r = await fetch(`${gw.url}/v1/chat/completions`, {
    method: 'POST', headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ model: 'dead/test-model', messages: [{ role: 'user', content: 'fall back' }] }),
  });
  assert.equal(r.status, 200);
  const rec = await recordOf(r.headers.get('x-inference-id')!);
  assert.deepEqual(rec.attempts.map((a) => a.provider), ['dead', 'mock']);
  assert.equal(rec.attempts[0]!.status, null);
  assert.ok(rec.attempts[0]!.error);
  assert.equal(rec.attempts[1]!.status, 200);
  assert.equal(rec.servedModel, 'mock/test-model');
  assert.equal(rec.requestedModel, 'dead/test-model');
});

test('refused requests are recorded too (status and error code, zero cost)', async () => {
  const r = await fetch(`${gw.url}/v1/chat/completions`, {
    method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ model: 'mock/test-model', n: 2, messages: [{ role: 'user', content: 'x' }] }),
  });
  assert.equal(r.status, 400);
  const rec = await recordOf(r.headers.get('x-inference-id')!);
  assert.equal(rec.status, 400);
  assert.ok(rec.errorCode);
  assert.equal(rec.costUsd, '0');
});

test('GET /metrics: the named series with sensible values after traffic', async () => {
  const unknown = await fetch(`${gw.url}/v1/chat/completions`, {
    method: 'POST', headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ model: `mock/no-such-model-${Date.now()}`, messages: [{ role: 'user', content: 'x' }] }),
  });
  assert.equal(unknown.status, 404);
  await gw.services.holder.reload(); // one config reload (unchanged)
  await new Promise((r) => setTimeout(r, 100));
  const r = await fetch(`${gw.url}/metrics`);
  assert.equal(r.status, 200);
  assert.match(r.headers.get('content-type')!, /^text\/plain; version=0\.0\.4/);
  const m = await r.text();
  const val = (re: RegExp): number => { const x = re.exec(m); assert.ok(x, `missing ${re}`); return Number(x[1]); };
  // Requests by route, model, provider and status.
  assert.ok(val(/^gateway_requests_total\{route="\/v1\/chat\/completions",model="mock\/test-model",provider="mock",status="200"\} (\d+)$/m) >= 3);
  assert.ok(val(/^gateway_requests_total\{route="\/v1\/messages",model="anth\/test-model",provider="anth",status="200"\} (\d+)$/m) >= 2);
  // Refused before the model resolved: the label is "unknown", never the client's string (bounded cardinality).
  assert.ok(val(/^gateway_requests_total\{route="\/v1\/chat\/completions",model="unknown",provider="none",status="400"\} (\d+)$/m) >= 1);
  assert.ok(val(/^gateway_requests_total\{route="\/v1\/chat\/completions",model="unknown",provider="none",status="404"\} (\d+)$/m) >= 1);
  assert.equal(m.includes('no-such-model-'), false);
  // Latency and TTFT histograms: buckets, sum and count, cumulative.
  const count = val(/^gateway_request_duration_seconds_count\{route="\/v1\/chat\/completions",provider="mock"\} (\d+)$/m);
  assert.ok(count >= 3);
  assert.equal(val(/^gateway_request_duration_seconds_bucket\{route="\/v1\/chat\/completions",provider="mock",le="\+Inf"\} (\d+)$/m), count);
  assert.ok(val(/^gateway_request_duration_seconds_sum\{route="\/v1\/chat\/completions",provider="mock"\} ([0-9.e-]+)$/m) > 0);
  assert.ok(val(/^gateway_time_to_first_token_seconds_count\{route="\/v1\/chat\/completions",provider="mock"\} (\d+)$/m) >= 1);
  assert.match(m, /^# TYPE gateway_request_duration_seconds histogram$/m);
  assert.match(m, /^# TYPE gateway_time_to_first_token_seconds histogram$/m);
  // Tokens and cost.
  assert.ok(val(/^gateway_tokens_total\{type="input",provider="mock"\} (\d+)$/m) > 0);
  assert.ok(val(/^gateway_tokens_total\{type="output",provider="anth"\} (\d+)$/m) > 0);
  assert.ok(val(/^gateway_cost_usd_total\{provider="mock"\} ([0-9.]+)$/m) > 0);
  // Upstream errors and fallbacks by provider (the dead provider above).
  assert.ok(val(/^gateway_upstream_errors_total\{provider="dead",reason="[a-z_0-9]+"\} (\d+)$/m) >= 1);
  assert.ok(val(/^gateway_fallbacks_total\{from_provider="dead"\} (\d+)$/m) >= 1);
  // Writer queue depth and drops; config reloads.
  assert.ok(val(/^gateway_writer_queue_depth (\d+)$/m) >= 0);
  assert.equal(val(/^gateway_writer_dropped_total (\d+)$/m), 0);
  assert.ok(val(/^gateway_writer_flushed_total (\d+)$/m) >= 10);
  assert.ok(val(/^gateway_config_reloads_total\{result="(?:ok|unchanged)"\} (\d+)$/m) >= 1);
  // Every sample line is well formed Prometheus text.
  for (const line of m.split('\n')) {
    if (line === '' || line.startsWith('#')) continue;
    assert.match(line, /^[a-z_:][a-z0-9_:]*(\{([a-z_]+="(?:[^"\\]|\\.)*",?)*\})? -?[0-9.e+-]+|[+-]Inf|NaN$/i, line);
  }
});

test('feedback on a response id right after the response, before its record is flushed', async (t) => {
  // A second gateway whose writer holds records for a minute: the record is only in memory.
  const slowWriter = await startTestGateway({
    providers: [{ id: 'mock', format: 'openai-chat', base_url: oa.url }],
    gateway: { storage: { writer: { batch_size: 10000, flush_ms: 60_000, max_queue: 10000 } } },
  });
  t.after(() => slowWriter.stop());
  for (const stream of [false, true]) {
    const r = await fetch(`${slowWriter.url}/v1/chat/completions`, {
      method: 'POST', headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ model: 'mock/test-model', stream, messages: [{ role: 'user', content: 'rate me' }] }),
    });
    assert.equal(r.status, 200);
    await r.text();
    const id = r.headers.get('x-inference-id')!;
    assert.equal(await slowWriter.services.store!.getInference(id), null, 'not flushed yet');
    const fb = await fetch(`${slowWriter.url}/v1/feedback`, {
      method: 'POST', headers: { 'content-type': 'application/json' },
      body: JSON.stringify([{ id, feedback: { ok: true } }, { id: '01890000-0000-7000-8000-000000000000', feedback: { ok: true } }]),
    });
    assert.equal(fb.status, 200);
    const results = (await fb.json()) as Array<{ feedback_ids: Record<string, string> | null; error: { status_code: number; message: string } | null }>;
    assert.equal(results[0]!.error, null);
    assert.match(results[0]!.feedback_ids!.ok!, UUID_RE);
    assert.equal(results[1]!.feedback_ids, null, 'an unknown id is refused');
    assert.equal(results[1]!.error!.status_code, 400);
  }
});

test('figures', () => { console.log(`# records measured:\n# ${measured.join('\n# ')}`); });
