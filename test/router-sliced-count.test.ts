// Long new text under max_cost is counted off the event loop's critical path: the decision stops at
// the bound and lists it, the HTTP path counts it in slices with the loop free between them and
// decides again on the exact count: the same plan and caps as counting it at once.
import { test, after } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, mkdirSync, writeFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { stringify } from 'yaml';
import { compileConfig } from '../src/config/compile.ts';
import { loadConfig } from '../src/config/load.ts';
import { maxAffordableOutputTokens } from '../src/catalog/cost.ts';
import { decide, type DecideInput } from '../src/router/decide.ts';
import { parseRouterParams } from '../src/router/params.ts';
import { viewRequest } from '../src/router/request-view.ts';
import { emptyState } from '../src/router/quality/index.ts';
import { RouterService } from '../src/router/service.ts';
import { codecFor } from '../src/formats/registry.ts';
import { countLater, countPromptTokens, countPromptTokensSliced, DEFER_CHARS, SLICE_CHARS, warmTokenizers } from '../src/tokens/index.ts';
import { sliceEnds } from '../src/tokens/slices.ts';

const caps = { tools: false, vision: false, reasoning: false, structured_output: false, prompt_caching: true };
function config() {
  const dir = mkdtempSync(join(tmpdir(), 'gw-sliced-'));
  mkdirSync(join(dir, 'providers'));
  const model = (name: string, prompt: string, completion: string) => ({ name, pricing: { prompt, completion }, capabilities: caps, context_window: 400000, max_completion_tokens: 8000 });
  for (const [id, models] of [['pa', [model('gpt-4o-mini', '0.00000015', '0.0000006'), model('gpt-4o', '0.0000025', '0.00001'), model('gpt-4-turbo', '0.00001', '0.00003')]], ['pb', [model('gpt-4o', '0.000003', '0.000012')]]] as const) {
    writeFileSync(join(dir, 'providers', `${id}.yaml`), stringify({ id, name: id, format: 'openai-chat', base_url: 'http://127.0.0.1:9/v1', api_key: 'sk-test', auth: { type: 'bearer' }, models }));
  }
  writeFileSync(join(dir, 'gateway.yaml'), stringify({ version: 1, providers_dir: './providers', router: { exploration: { share: 0 } } }));
  const cfg = compileConfig(loadConfig(join(dir, 'gateway.yaml'), {}), {});
  rmSync(dir, { recursive: true, force: true });
  return cfg;
}
const cfg = config();
const health = { isEjected: () => false, latencyMs: () => null, errorRate: () => 0 };
let n = 0;
/** A long prompt no test has counted before (the encodings' caches are process-wide). */
const freshText = (lines = 400) => `${++n} ${Date.now()}\n${Array.from({ length: lines }, (_, i) => `item ${i}: the value is ${(i * 7919) % 1000} and the status reads fine`).join('\n')}`;
const body = (text: string, extra: Record<string, unknown> = {}) => ({ model: 'router', messages: [{ role: 'user', content: text }], ...extra });
function input(b: Record<string, unknown>, over: Partial<DecideInput> = {}): DecideInput {
  const params = parseRouterParams(b);
  const view = viewRequest(codecFor('openai-chat').client!.decodeRequest(b), params, null, '/v1/chat/completions', null);
  return { cfg, settings: cfg.router, params, view, policy: null, quality: emptyState(), output: {}, health, affinity: null, maxAttempts: 3, fullRanking: true, ...over };
}
/** Runs fn while a setImmediate chain counts the event loop's turns; the chain stops however fn ends. */
async function turnsDuring<T>(fn: () => Promise<T> | T): Promise<{ value: T; turns: number }> {
  let turns = 0;
  let ticking = true;
  const tick = (): void => { turns++; if (ticking) setImmediate(tick); };
  setImmediate(tick);
  try { return { value: await fn(), turns }; } finally { ticking = false; }
}
const plan = (d: { plan: Array<{ candidate: { id: string }; maxOutputTokens?: number }> }) => d.plan.map((t) => [t.candidate.id, t.maxOutputTokens]);

const router = new RouterService({ sql: null, settings: () => cfg.router, isEjected: () => false });
after(() => router.close());

test('decide with deferChars: long new text under a binding max_cost is listed and the decision stops there; decided again once counted', async () => {
  await warmTokenizers();
  const text = freshText();
  const d = decide(input(body(text, { max_cost: 0.3 }), { deferChars: DEFER_CHARS }));
  // Only gpt-4-turbo (cl100k_base) is near the bound: the gpt-4o offers (o200k_base) afford their whole output cap anyway.
  assert.deepEqual([...d.deferred!.keys()], ['cl100k_base']);
  for (const texts of d.deferred!.values()) assert.deepEqual(texts, [text]);
  assert.deepEqual([d.plan, d.ranked, d.chosen], [[], [], null], 'a stopped decision plans nothing');
  // Counted later, the next decision has the exact count where the bound is near, and caps on it.
  await countLater(d.deferred!);
  const again = decide(input(body(text, { max_cost: 0.3 }), { deferChars: DEFER_CHARS }));
  assert.equal(again.deferred, undefined);
  const req = codecFor('openai-chat').client!.decodeRequest(body(text));
  const turbo = again.ranked.find((x) => x.id === 'pa/gpt-4-turbo')!;
  assert.equal(turbo.tokensExact, true);
  assert.equal(turbo.inputTokens, countPromptTokens(req, 'pa/gpt-4-turbo').tokens);
  assert.equal(turbo.inputTokensCeiling, turbo.inputTokens);
  for (const t of again.plan) {
    const r = again.ranked.find((x) => x.id === t.candidate.id)!;
    assert.equal(t.maxOutputTokens, Math.min(maxAffordableOutputTokens(t.candidate.entry.model.pricing, r.inputTokensCeiling, '0.3')!, t.candidate.maxOutput));
  }
  // Without deferChars nothing is deferred: the same text counted at once.
  const atOnce = decide(input(body(freshText(), { max_cost: 0.3 })));
  assert.equal(atOnce.deferred, undefined);
  assert.equal(atOnce.ranked.find((x) => x.id === 'pa/gpt-4-turbo')!.tokensExact, true);
});

test('decide with deferChars: short new text, or a max_cost far from binding, is not deferred', async () => {
  await warmTokenizers();
  const short = decide(input(body(`${freshText(20)}`, { max_cost: 0.000_5 }), { deferChars: DEFER_CHARS }));
  assert.equal(short.deferred, undefined);
  const far = decide(input(body(freshText(), { max_cost: 500 }), { deferChars: DEFER_CHARS }));
  assert.equal(far.deferred, undefined, 'no bound near: nothing to count');
});

test('routeSliced: the same plan as route(), the event loop turning between slices; synchronous when nothing is deferred', async () => {
  await warmTokenizers();
  assert.ok(!(router.routeSliced(cfg, body('What is 2 + 2?', { max_cost: 0.01 }), 'openai-chat', null, '/v1/chat/completions', 'a') instanceof Promise));
  const text = freshText();
  const { value: routed, turns } = await turnsDuring(() => {
    const pending = router.routeSliced(cfg, body(text, { max_cost: 0.3 }), 'openai-chat', null, '/v1/chat/completions', 'b');
    assert.ok(pending instanceof Promise);
    return pending;
  });
  // The text in slices: the loop turned at least once per slice.
  assert.ok(turns >= sliceEnds(text, SLICE_CHARS).length, `${turns} turns for ${sliceEnds(text, SLICE_CHARS).length} slices per encoding`);
  assert.equal(routed.decision.ranked.find((x) => x.id === 'pa/gpt-4-turbo')!.tokensExact, true);
  assert.equal(routed.headers['x-router-decision-id'], 'b');
  const sync = router.route(cfg, body(text, { max_cost: 0.3 }), 'openai-chat', null, '/v1/chat/completions', 'c');
  assert.deepEqual(plan(routed.decision), plan(sync.decision));
  assert.deepEqual(routed.targets.map((t) => t.maxOutputTokens), sync.targets.map((t) => t.maxOutputTokens));
});

test('routeSliced without max_cost: a long new prompt is estimated in slices first, then decided as route() decides', async () => {
  await warmTokenizers();
  const text = freshText(600);
  const { value: routed, turns } = await turnsDuring(() => {
    const pending = router.routeSliced(cfg, body(text, { willingness_to_pay: 0.01 }), 'openai-chat', null, '/v1/chat/completions', 'e');
    assert.ok(pending instanceof Promise, 'a promise: the estimate is made later');
    return pending;
  });
  assert.ok(turns >= 2, `${turns} turns`);
  const sync = router.route(cfg, body(text, { willingness_to_pay: 0.01 }), 'openai-chat', null, '/v1/chat/completions', 'f');
  assert.deepEqual(plan(routed.decision), plan(sync.decision));
  assert.deepEqual(routed.decision.ranked.map((r) => [r.id, r.inputTokens, r.expectedCostUsd]), sync.decision.ranked.map((r) => [r.id, r.inputTokens, r.expectedCostUsd]));
  // Estimated once: the same prompt again is decided at once.
  assert.ok(!(router.routeSliced(cfg, body(text, { willingness_to_pay: 0.01 }), 'openai-chat', null, '/v1/chat/completions', 'g') instanceof Promise));
});

test('routeSliced: no candidate under max_cost is the same 400, after counting', async () => {
  await warmTokenizers();
  await assert.rejects(async () => { await router.routeSliced(cfg, body(freshText(), { max_cost: 0.000_01 }), 'openai-chat', null, '/v1/chat/completions', 'd'); },
    (e: Error & { status?: number; headers?: Record<string, string> }) => e.status === 400 && /max_cost/.test(e.message) && e.headers?.['x-router-decision-id'] === 'd');
});

test('countPromptTokensSliced: the figures of countPromptTokens, long text counted in slices', async () => {
  await warmTokenizers();
  const text = freshText();
  const req = codecFor('openai-chat').client!.decodeRequest(body(text));
  const { value: sliced, turns } = await turnsDuring(() => countPromptTokensSliced(req, 'openai/gpt-4o'));
  assert.ok(turns >= sliceEnds(text, SLICE_CHARS).length, `${turns} turns`);
  assert.deepEqual(sliced, countPromptTokens(req, 'openai/gpt-4o'));
  assert.equal(sliced.exact, true);
  const other = codecFor('openai-chat').client!.decodeRequest(body(freshText()));
  assert.deepEqual(await countPromptTokensSliced(other, 'anthropic/claude-sonnet-4-5'), countPromptTokens(other, 'anthropic/claude-sonnet-4-5'));
});

test('over HTTP: a routed request with a long new prompt under max_cost, and count_tokens on it, answer with exact counts', async () => {
  const { startMockOpenAI } = await import('./mocks/index.ts');
  const { startTestGateway } = await import('./helpers/gateway.ts');
  await warmTokenizers();
  const oai = await startMockOpenAI();
  const models = [
    { name: 'gpt-4o-mini', pricing: { prompt: '0.00000015', completion: '0.0000006' }, capabilities: caps, context_window: 400000, max_completion_tokens: 8000 },
    { name: 'gpt-4-turbo', pricing: { prompt: '0.00001', completion: '0.00003' }, capabilities: caps, context_window: 400000, max_completion_tokens: 8000 },
  ];
  const gw = await startTestGateway({ providers: [{ id: 'oai', format: 'openai-chat', base_url: oai.url, models }], gateway: { router: { exploration: { share: 0 } } } });
  try {
    const text = freshText();
    const post = (path: string, b: Record<string, unknown>) => fetch(`${gw.url}${path}`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(b) });
    // Only gpt-4-turbo may answer: it is near its bound, so its cap rests on the exact cl100k count.
    const r = await post('/v1/chat/completions', body(text, { models: ['gpt-4-turbo'], max_cost: 0.3 }));
    assert.equal(r.status, 200, await r.clone().text());
    assert.equal(r.headers.get('x-router-model'), 'oai/gpt-4-turbo');
    await r.json();
    // The gateway's own router, deciding the same body now that the count is cached: exact, the same cap.
    const same = gw.services.router!.route(gw.services.holder.current, body(text, { models: ['gpt-4-turbo'], max_cost: 0.3 }), 'openai-chat', null, '/v1/chat/completions', 'z');
    const t0 = same.decision.plan[0]!;
    const r0 = same.decision.ranked.find((x) => x.id === t0.candidate.id)!;
    assert.equal(r0.tokensExact, true);
    assert.equal(r0.inputTokens, countPromptTokens(codecFor('openai-chat').client!.decodeRequest(body(text)), 'oai/gpt-4-turbo').tokens);
    const cap = t0.maxOutputTokens!;
    assert.equal(cap, Math.min(maxAffordableOutputTokens(t0.candidate.entry.model.pricing, r0.inputTokens, '0.3')!, 8000));
    assert.equal(r.headers.get('x-router-max-output-tokens'), String(cap));
    const sent = oai.requests.at(-1)!.body as Record<string, unknown>;
    assert.equal(sent.max_completion_tokens ?? sent.max_tokens, cap);
    // The dry run measures a long new prompt the same way: the bound's candidate counted exactly.
    const dryText = freshText();
    const dry = await post('/v1/router/rank', body(dryText, { models: ['gpt-4-turbo'], max_cost: 0.3 }));
    assert.equal(dry.status, 200);
    const turbo = ((await dry.json()) as { candidates: Array<Record<string, unknown>> }).candidates.find((c) => c.id === 'oai/gpt-4-turbo')!;
    assert.equal(turbo.input_tokens_exact, true);
    assert.equal(turbo.input_tokens, countPromptTokens(codecFor('openai-chat').client!.decodeRequest(body(dryText)), 'oai/gpt-4-turbo').tokens);
    // count_tokens (Anthropic body) for an OpenAI-family model: the exact count, the same as counting at once.
    const other = freshText();
    const c = await post('/v1/messages/count_tokens', { model: 'oai/gpt-4o-mini', messages: [{ role: 'user', content: other }] });
    assert.equal(c.status, 200);
    assert.equal(c.headers.get('x-gateway-token-count'), 'exact:o200k_base');
    const want = countPromptTokens(codecFor('anthropic-messages').client!.decodeRequest({ model: 'x', max_tokens: 1, messages: [{ role: 'user', content: other }] }), 'oai/gpt-4o-mini').tokens;
    assert.deepEqual(await c.json(), { input_tokens: want });
  } finally {
    await gw.stop();
    await oai.close();
  }
});
