// Router mode with the world changing under a request in flight:
// - a catalog overlay reprices (or retires) the chosen model while its routed stream runs: the stream
//   completes, billed at the price its decision was made with (the snapshot the request started
//   with: the non-routed path does the same), within its max_cost; the next request uses the new price;
// - the API key is revoked, or its budget spent, while a routed stream runs and between the decision
//   and a fallback attempt: no crash, the in-flight answer completes as a named-model one does, and
//   the next request gets the 401/402 in the route's own envelope; a fallback to a pricier target
//   never takes the key past its budget (a key that cannot afford it is served without it).
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { stringify } from 'yaml';
import { startMockOpenAI, startMockAnthropic, type MockUpstream } from './mocks/index.ts';
import { startTestGateway, type TestGateway } from './helpers/gateway.ts';
import type { CatalogOverlay } from '../src/catalog/overlay.ts';

type Rec = Record<string, any>;
const ADMIN = 'router-midflight-admin-key-0123456789';
const caps = { tools: false, vision: false, reasoning: false, structured_output: false, prompt_caching: false };
const WORDS = Array.from({ length: 60 }, (_, i) => `w${i}`).join(' ');

async function recorded(gw: TestGateway, id: string): Promise<Rec> {
  for (let i = 0; i < 100; i++) {
    const rows = await gw.services.store!.sql.all('SELECT * FROM inferences WHERE id = ?', [id]);
    if (rows.length === 1) return rows[0] as Rec;
    await new Promise((r) => setTimeout(r, 20));
  }
  throw new Error(`no record for ${id}`);
}

/** Reads a streamed answer; `midway` runs once, after the first chunk arrived. */
async function readStream(r: Response, midway: () => Promise<void>): Promise<string> {
  const reader = r.body!.getReader();
  const dec = new TextDecoder();
  let text = '';
  let ran = false;
  for (;;) {
    const { done, value } = await reader.read();
    if (done) break;
    text += dec.decode(value, { stream: true });
    if (!ran) { ran = true; await midway(); }
  }
  return text;
}

const overlay = (version: number, providers: CatalogOverlay['providers']): CatalogOverlay => ({ version, created_at: new Date().toISOString(), providers, sources: [] });

test('catalog overlay reprices the chosen model mid-stream: billed at the decision\'s price, within max_cost; the next request pays the new price', async (t) => {
  const up = await startMockOpenAI({ chunkDelayMs: 15, reply: () => WORDS });
  const gw = await startTestGateway({
    providers: [],
    gateway: { router: { exploration: { share: 0 }, learning: { train_interval_ms: 3_600_000, state_poll_ms: 3_600_000 } } },
  });
  t.after(async () => { await gw.stop(); await up.close(); });
  // A provider on the shipped OpenAI catalog (an overlay patches catalog models; hand-written ones win over it).
  writeFileSync(join(gw.providersDir, 'openai.yaml'), stringify({ id: 'openai', name: 'OpenAI', format: 'openai-chat', base_url: up.url, api_key: 'sk-test', auth: { type: 'bearer' },
    catalog: new URL('../providers/catalog/openai.yaml', import.meta.url).pathname }));
  assert.ok((await gw.services.holder.reload()).ok);
  const chat = (body: Rec) => fetch(`${gw.url}/v1/chat/completions`, {
    method: 'POST', headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ model: 'router', models: ['gpt-4o-mini'], stream: true, stream_options: { include_usage: true }, messages: [{ role: 'user', content: 'count for me' }], ...body }),
  });
  const usageOf = (sse: string): { prompt_tokens: number; completion_tokens: number } => {
    const last = sse.split('\n').filter((l) => l.startsWith('data: {')).map((l) => JSON.parse(l.slice(6)) as Rec).findLast((c) => c.usage);
    return last!.usage;
  };
  const maxCost = 0.00003; // about 50 output tokens at the old price, 5 at the new one
  const r1 = await chat({ max_cost: maxCost });
  assert.equal(r1.status, 200);
  const cap1 = Number(r1.headers.get('x-router-max-output-tokens'));
  assert.ok(cap1 > 0 && cap1 < 60, `cap ${cap1}`);
  const versionBefore = gw.services.holder.current.version;
  // Ten times the price, applied as a catalog refresh would, while the stream is running.
  const text1 = await readStream(r1, async () => {
    const res = await gw.services.holder.setCatalogOverlay(overlay(1, { openai: [{ name: 'gpt-4o-mini', pricing: { prompt: '0.0000015', completion: '0.000006' } }] }));
    assert.ok(res.ok && res.changed, JSON.stringify(res));
  });
  assert.notEqual(gw.services.holder.current.version, versionBefore);
  assert.match(text1, /data: \[DONE\]/, 'the in-flight stream completes');
  const u1 = usageOf(text1);
  assert.equal(u1.completion_tokens, cap1, 'capped at the decision\'s output cap');
  const rec1 = await recorded(gw, r1.headers.get('x-inference-id')!);
  const oldCost = u1.prompt_tokens * 0.00000015 + u1.completion_tokens * 0.0000006;
  assert.ok(Math.abs(Number(rec1.cost_usd) - oldCost) < 1e-12, `billed ${rec1.cost_usd}, at the old price ${oldCost}`);
  assert.ok(Number(rec1.cost_usd) <= maxCost);
  assert.equal(rec1.status, 200);

  // The next request decides and bills at the new price: its cap is a tenth, its bill still within max_cost.
  const r2 = await chat({ max_cost: maxCost });
  assert.equal(r2.status, 200);
  const cap2 = Number(r2.headers.get('x-router-max-output-tokens'));
  assert.ok(cap2 > 0 && cap2 <= Math.ceil(cap1 / 10) + 1, `cap ${cap1} -> ${cap2}`);
  const text2 = await r2.text();
  const u2 = usageOf(text2);
  const rec2 = await recorded(gw, r2.headers.get('x-inference-id')!);
  const newCost = u2.prompt_tokens * 0.0000015 + u2.completion_tokens * 0.000006;
  assert.ok(Math.abs(Number(rec2.cost_usd) - newCost) < 1e-12, `billed ${rec2.cost_usd}, at the new price ${newCost}`);
  assert.ok(Number(rec2.cost_usd) <= maxCost);

  // Retired by the overlay while a stream runs: that stream completes; the next routed request has no candidate (400).
  const r3 = await chat({});
  assert.equal(r3.status, 200);
  const text3 = await readStream(r3, async () => {
    const res = await gw.services.holder.setCatalogOverlay(overlay(2, { openai: [{ name: 'gpt-4o-mini', status: 'retired' }] }));
    assert.ok(res.ok, JSON.stringify(res));
  });
  assert.match(text3, /data: \[DONE\]/);
  const rec3 = await recorded(gw, r3.headers.get('x-inference-id')!);
  assert.equal(rec3.status, 200);
  assert.ok(Number(rec3.cost_usd) > 0, 'billed');
  const r4 = await chat({});
  assert.equal(r4.status, 400, await r4.clone().text());
  assert.ok((await r4.json() as Rec).error, 'in the OpenAI envelope');
});

// ---- Keys revoked or out of budget while a routed request is in flight ----

async function keyedGateway(t: { after(fn: () => Promise<void>): void }, opts: { chunkDelayMs?: number; firstByteTimeoutMs?: number; fallbacks?: Record<string, string[]> } = {}): Promise<{ gw: TestGateway; cheap: MockUpstream; pricey: MockUpstream; key(body: Rec): Promise<{ id: string; key: string }> }> {
  const cheap = await startMockOpenAI({ chunkDelayMs: opts.chunkDelayMs ?? 0, reply: () => WORDS });
  const pricey = await startMockAnthropic({ chunkDelayMs: opts.chunkDelayMs ?? 0, reply: () => WORDS });
  const gw = await startTestGateway({
    providers: [
      { id: 'cheap', format: 'openai-chat', base_url: cheap.url, models: [{ name: 'small', pricing: { prompt: '0.000001', completion: '0.000002' }, capabilities: caps, context_window: 16000, max_completion_tokens: 4000 }] },
      { id: 'pricey', format: 'anthropic-messages', base_url: pricey.url, models: [{ name: 'big', pricing: { prompt: '0.00001', completion: '0.0001' }, capabilities: caps, context_window: 16000, max_completion_tokens: 4000 }] },
    ],
    gateway: {
      auth: { enabled: true, admin_key: ADMIN },
      ...(opts.fallbacks ? { fallbacks: opts.fallbacks } : {}),
      upstream: { max_attempts: 3, retry_budget_floor: 1000, ...(opts.firstByteTimeoutMs ? { first_byte_timeout_ms: opts.firstByteTimeoutMs } : {}) },
      router: { exploration: { share: 0 }, learning: { train_interval_ms: 3_600_000, state_poll_ms: 3_600_000 } },
    },
  });
  t.after(async () => { await gw.stop(); await cheap.close(); await pricey.close(); });
  const key = async (body: Rec) => {
    const r = await fetch(`${gw.url}/admin/keys`, { method: 'POST', headers: { authorization: `Bearer ${ADMIN}`, 'content-type': 'application/json' }, body: JSON.stringify(body) });
    assert.equal(r.status, 201, await r.clone().text());
    return await r.json() as { id: string; key: string };
  };
  return { gw, cheap, pricey, key };
}

const revoke = async (gw: TestGateway, id: string) => {
  const r = await fetch(`${gw.url}/admin/keys/${id}`, { method: 'DELETE', headers: { authorization: `Bearer ${ADMIN}` } });
  assert.equal(r.status, 200);
};
const routed = (gw: TestGateway, key: string, path: '/v1/chat/completions' | '/v1/messages', body: Rec = {}) => fetch(gw.url + path, {
  method: 'POST', headers: { 'content-type': 'application/json', authorization: `Bearer ${key}`, 'anthropic-version': '2023-06-01' },
  body: JSON.stringify({ model: 'router', max_tokens: 200, messages: [{ role: 'user', content: 'count for me' }], ...body }),
});

test('key revoked while a routed stream runs: the stream completes and is billed to the key; the next request is 401 in each route\'s envelope', async (t) => {
  const { gw, key } = await keyedGateway(t, { chunkDelayMs: 10 });
  for (const path of ['/v1/chat/completions', '/v1/messages'] as const) {
    const k = await key({ name: `revoked-${path}` });
    const r = await routed(gw, k.key, path, { stream: true, models: ['small', 'big'], willingness_to_pay: path === '/v1/messages' ? 1 : 1e-9 });
    assert.equal(r.status, 200);
    const text = await readStream(r, () => revoke(gw, k.id));
    assert.match(text, path === '/v1/messages' ? /event: message_stop/ : /data: \[DONE\]/, 'completed after the revocation');
    const rec = await recorded(gw, r.headers.get('x-inference-id')!);
    assert.equal(rec.status, 200);
    assert.equal(rec.key_id, k.id);
    assert.ok(Number(rec.cost_usd) > 0);
    const next = await routed(gw, k.key, path, { stream: true });
    assert.equal(next.status, 401);
    const body = await next.json() as Rec;
    if (path === '/v1/messages') { assert.equal(body.type, 'error'); assert.equal(body.error.type, 'authentication_error'); }
    else { assert.equal(typeof body.error.message, 'string'); assert.equal(body.type, undefined); }
    // The Responses route refuses it in its (OpenAI) envelope too.
    const resp = await fetch(`${gw.url}/v1/responses`, { method: 'POST', headers: { 'content-type': 'application/json', authorization: `Bearer ${k.key}` }, body: JSON.stringify({ model: 'router', input: 'hi' }) });
    assert.equal(resp.status, 401);
    assert.equal(typeof ((await resp.json()) as Rec).error.message, 'string');
  }
  const h = await fetch(`${gw.url}/health`);
  assert.equal(h.status, 200, 'the process is alive and well');
});

test('key revoked between the decision and the fallback: the fallback answers as it would for a named model; the next request is 401', async (t) => {
  const { gw, cheap, pricey, key } = await keyedGateway(t, { firstByteTimeoutMs: 400 });
  const k = await key({ name: 'fallback-revoked' });
  // The first target (cheap) never answers: after the first-byte timeout the plan falls back to pricey. The key is revoked meanwhile.
  cheap.fault({ hang: true });
  const pending = routed(gw, k.key, '/v1/chat/completions', { models: ['small', 'big'], willingness_to_pay: 1e-9 });
  await new Promise((r) => setTimeout(r, 100));
  await revoke(gw, k.id);
  assert.equal(pricey.requests.length, 0, 'revoked before the fallback attempt');
  const r = await pending;
  const text = await r.text();
  assert.equal(r.status, 200, text);
  assert.equal((JSON.parse(text) as Rec).model, 'pricey/big', 'served by the fallback');
  const rec = await recorded(gw, r.headers.get('x-inference-id')!);
  assert.equal(rec.key_id, k.id);
  assert.ok(Number(rec.cost_usd) > 0, 'billed to the key that asked');
  const next = await routed(gw, k.key, '/v1/chat/completions');
  assert.equal(next.status, 401);
  assert.equal(typeof ((await next.json()) as Rec).error.message, 'string');
});

test('a fallback to a pricier target never takes a key past its budget (routed, and a named model\'s configured fallback): the plan keeps the targets it can afford; out of budget is 402 in the route\'s envelope', async (t) => {
  const { gw, cheap, pricey, key } = await keyedGateway(t, { fallbacks: { 'cheap/small': ['pricey/big'] } });
  // The cheap target's worst case ($0.0004 for 200 output tokens) fits the budget; the pricey one's ($0.02) does not.
  const budget = 0.005;
  const k = await key({ name: 'budgeted', budget_usd: String(budget), budget_period: 'day' });
  for (const body of [{ models: ['small', 'big'], willingness_to_pay: 1e-9 }, { model: 'cheap/small' }]) {
    cheap.fault({ status: 503 });
    const r = await routed(gw, k.key, '/v1/chat/completions', body);
    const text = await r.text();
    const rec = await recorded(gw, r.headers.get('x-inference-id')!);
    const spent = Number(rec.cost_usd);
    assert.ok(spent <= budget, `${JSON.stringify(body)}: a request with status ${r.status} spent $${spent} of a $${budget} budget (served by ${rec.served_model}): ${text.slice(0, 200)}`);
    // The pricier target is left out of the plan (src/limits/affordable.ts): the cheap one, retried in place, serves.
    assert.equal(r.status, 200, text);
    assert.equal(r.headers.get('x-gateway-budget-dropped'), 'pricey/big');
    assert.equal(rec.served_model, 'cheap/small');
    assert.equal(pricey.requests.length, 0, 'never called');
    cheap.reset();
  }
  // A budget that covers the pricey worst case: the fallback serves, within it.
  const big = await key({ name: 'roomy', budget_usd: '0.05', budget_period: 'day' });
  cheap.fault({ status: 503 });
  const ok = await routed(gw, big.key, '/v1/chat/completions', { models: ['small', 'big'], willingness_to_pay: 1e-9 });
  assert.equal(ok.status, 200, await ok.clone().text());
  assert.equal(((await ok.json()) as Rec).model, 'pricey/big');
  assert.ok(Number((await recorded(gw, ok.headers.get('x-inference-id')!)).cost_usd) <= 0.05);
  cheap.reset();
  // Out of budget (the worst case alone passes it): the next routed request is 402 in each route's envelope.
  const small = await key({ name: 'tiny-budget', budget_usd: '0.0002', budget_period: 'day' });
  for (const path of ['/v1/chat/completions', '/v1/messages'] as const) {
    const n = await routed(gw, small.key, path, { models: ['small'] });
    assert.equal(n.status, 402, await n.clone().text());
    const body = await n.json() as Rec;
    if (path === '/v1/messages') { assert.equal(body.type, 'error'); assert.match(body.error.message, /Budget exceeded/); }
    else { assert.equal(body.type, undefined); assert.match(body.error.message, /Budget exceeded/); }
  }
});

test('budget spent by a routed stream in flight: a concurrent request is 402 in its envelope, the stream completes within the budget, and once settled the key serves again', async (t) => {
  const { gw, key } = await keyedGateway(t, { chunkDelayMs: 10 });
  // small: worst case 200 output tokens x $0.000002 + the prompt, about $0.0004; the budget holds one such reservation, not two.
  const k = await key({ name: 'one-at-a-time', budget_usd: '0.0006', budget_period: 'day' });
  const r1 = await routed(gw, k.key, '/v1/chat/completions', { stream: true, models: ['small'] });
  assert.equal(r1.status, 200);
  const statuses: number[] = [];
  const text = await readStream(r1, async () => {
    for (const path of ['/v1/chat/completions', '/v1/messages'] as const) {
      const r2 = await routed(gw, k.key, path, { models: ['small'] });
      statuses.push(r2.status);
      const body = await r2.json() as Rec;
      if (path === '/v1/messages') assert.equal(body.type, 'error');
      assert.match(body.error.message, /Budget exceeded/);
    }
  });
  assert.deepEqual(statuses, [402, 402], 'refused while the stream holds the budget');
  assert.match(text, /data: \[DONE\]/, 'the in-flight stream completes');
  const rec = await recorded(gw, r1.headers.get('x-inference-id')!);
  assert.ok(Number(rec.cost_usd) > 0 && Number(rec.cost_usd) <= 0.0006);
  // Settled at its real cost (60 words): the reservation is given back and the key serves again.
  let again = 0;
  for (let i = 0; i < 20 && again !== 200; i++) {
    const r3 = await routed(gw, k.key, '/v1/chat/completions', { models: ['small'] });
    again = r3.status; await r3.text();
    if (again !== 200) await new Promise((r) => setTimeout(r, 25));
  }
  assert.equal(again, 200);
});

test('the passthrough routes reserve for their costliest fallback as well, or leave it out of the plan (embeddings: a named model, a pricier configured fallback)', async (t) => {
  const a = await startMockOpenAI();
  const b = await startMockOpenAI();
  const gw = await startTestGateway({
    providers: [
      { id: 'cheap', format: 'openai-chat', base_url: a.url, models: [{ name: 'emb', pricing: { prompt: '0.0000001', completion: '0' }, capabilities: caps }] },
      { id: 'pricey', format: 'openai-chat', base_url: b.url, models: [{ name: 'emb', pricing: { prompt: '0.00001', completion: '0' }, capabilities: caps }] },
    ],
    gateway: { auth: { enabled: true, admin_key: ADMIN }, fallbacks: { 'cheap/emb': ['pricey/emb'] }, upstream: { max_attempts: 3, retry_budget_floor: 1000 } },
  });
  t.after(async () => { await gw.stop(); await a.close(); await b.close(); });
  const r0 = await fetch(`${gw.url}/admin/keys`, { method: 'POST', headers: { authorization: `Bearer ${ADMIN}`, 'content-type': 'application/json' }, body: JSON.stringify({ name: 'emb', budget_usd: '0.0001', budget_period: 'day' }) });
  const k = await r0.json() as { key: string };
  const input = 'word '.repeat(200); // ~250 tokens by bytes: $0.000025 on cheap, $0.0025 on pricey
  a.fault({ status: 503 });
  const r = await fetch(`${gw.url}/v1/embeddings`, { method: 'POST', headers: { 'content-type': 'application/json', authorization: `Bearer ${k.key}` }, body: JSON.stringify({ model: 'cheap/emb', input }) });
  const text = await r.text();
  const rec = await recorded(gw, r.headers.get('x-inference-id')!);
  assert.ok(Number(rec.cost_usd) <= 0.0001, `status ${r.status}, spent $${rec.cost_usd} of $0.0001 (served by ${rec.served_model}): ${text.slice(0, 120)}`);
  // Left out of the plan: the cheap model, retried in place, serves.
  assert.equal(r.status, 200, text.slice(0, 200));
  assert.equal(r.headers.get('x-gateway-budget-dropped'), 'pricey/emb');
  assert.equal(rec.served_model, 'cheap/emb');
  assert.equal(b.requests.length, 0, 'never called');
});

test('the chosen model\'s provider removed from the config while its routed stream runs: the stream completes and is billed; the next request routes to what is left', async (t) => {
  const a = await startMockOpenAI({ chunkDelayMs: 15, reply: () => WORDS });
  const b = await startMockOpenAI({ reply: () => WORDS });
  const gw = await startTestGateway({
    providers: [
      { id: 'gone', format: 'openai-chat', base_url: a.url, models: [{ name: 'm', pricing: { prompt: '0.0000001', completion: '0.0000002' }, capabilities: caps, context_window: 16000, max_completion_tokens: 4000 }] },
      { id: 'stays', format: 'openai-chat', base_url: b.url, models: [{ name: 'm', pricing: { prompt: '0.000001', completion: '0.000002' }, capabilities: caps, context_window: 16000, max_completion_tokens: 4000 }] },
    ],
    gateway: { router: { exploration: { share: 0 }, learning: { train_interval_ms: 3_600_000, state_poll_ms: 3_600_000 } } },
  });
  t.after(async () => { await gw.stop(); await a.close(); await b.close(); });
  const chat = () => fetch(`${gw.url}/v1/chat/completions`, { method: 'POST', headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ model: 'router', stream: true, stream_options: { include_usage: true }, willingness_to_pay: 1e-9, messages: [{ role: 'user', content: 'count for me' }] }) });
  const r1 = await chat();
  assert.equal(r1.headers.get('x-router-model'), 'gone/m');
  const text = await readStream(r1, async () => {
    rmSync(join(gw.providersDir, 'gone.yaml'));
    const res = await gw.services.holder.reload();
    assert.ok(res.ok && res.changed, JSON.stringify(res));
  });
  assert.match(text, /data: \[DONE\]/, 'the in-flight stream completes');
  assert.match(text, /w59/, 'in full');
  const rec = await recorded(gw, r1.headers.get('x-inference-id')!);
  assert.equal(rec.status, 200);
  assert.equal(rec.served_model, 'gone/m');
  assert.ok(Number(rec.cost_usd) > 0);
  const r2 = await chat();
  assert.equal(r2.status, 200);
  assert.equal(r2.headers.get('x-router-model'), 'stays/m');
  await r2.text();
});
