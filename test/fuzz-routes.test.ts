// Property-based fuzzing (fast-check) of every route's request validator and decoder through the real
// HTTP server: chat-completions (plain and router mode), messages, count_tokens, responses and its
// input_tokens, the router's dry run, feedback, a pass-through route, and the admin bodies (/admin/keys,
// the dashboard API's keys and users). Bodies are valid templates with fields swapped for arbitrary
// JSON, plus raw byte soup. Every answer must be a success or a 4xx in the route's own envelope, read
// to its end; nothing may crash, hang or stay in flight. Fixed seed; RELIABILITY=long runs 10x longer.
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import fc from 'fast-check';
import { chatBody, countTokensBody, embeddingsBody, feedbackBody, keyBody, keyFields, maybe, messagesBody, open, rankBody, rawBody, responsesBody, responsesFields, userBody } from './helpers/fuzz-bodies.ts';
import { startMockAnthropic, startMockBedrock, startMockGemini, startMockOpenAI, type MockUpstream } from './mocks/index.ts';
import { startTestGateway, TEST_PRICING, type TestGateway } from './helpers/gateway.ts';
import { settled } from './helpers/records.ts';
import { reportFigures } from './helpers/figures.ts';
import { SECRETS, assertNoSecrets, captureOutput, gatewayKeySecret, publicText, storedText, type OutputCapture } from './helpers/secret-scan.ts';

const LONG = process.env.RELIABILITY === 'long';
const SEED = Number(process.env.FUZZ_SEED ?? 20261113);
/** Runs per route: 200 x 12 routes in `npm test`, 3,000 each in the long mode. */
const RUNS = Number(process.env.FUZZ_RUNS ?? (LONG ? 3000 : 200));

let gw: TestGateway; let key = ''; let keyId = ''; let capture: OutputCapture;
const answers: string[] = [];
const mocks: MockUpstream[] = [];
const stats = { requests: 0, byStatus: {} as Record<string, number>, fiveHundreds: 0 };

before(async () => {
  capture = captureOutput();
  const [oai, ant, gem, bed] = await Promise.all([startMockOpenAI(), startMockAnthropic(), startMockGemini(), startMockBedrock()]);
  mocks.push(oai, ant, gem, bed);
  const model = { name: 'test-model', pricing: TEST_PRICING, max_completion_tokens: 4096, capabilities: { tools: true, vision: true, reasoning: true, structured_output: true } };
  gw = await startTestGateway({
    providers: [
      { id: 'oai', format: 'openai-chat', base_url: oai.url, models: [model] },
      { id: 'ant', format: 'anthropic-messages', base_url: ant.url, models: [model] },
      { id: 'gem', format: 'gemini', base_url: gem.url, models: [model] },
      { id: 'bed', format: 'bedrock-converse', base_url: bed.url, models: [{ ...model, upstream: 'anthropic.claude-test-model' }] },
    ],
    gateway: { auth: { enabled: true, admin_key: SECRETS.admin }, upstream: { max_attempts: 1, ejection: { consecutive_failures: 1_000_000 } } },
  });
  const r = await fetch(`${gw.url}/admin/keys`, { method: 'POST', headers: { authorization: `Bearer ${SECRETS.admin}`, 'content-type': 'application/json' }, body: JSON.stringify({ name: 'fuzz' }) });
  key = ((await r.json()) as { key: string }).key;
  // A second key for the edit route to change at will (the first keeps serving the other routes).
  const e = await fetch(`${gw.url}/admin/keys`, { method: 'POST', headers: { authorization: `Bearer ${SECRETS.admin}`, 'content-type': 'application/json' }, body: JSON.stringify({ name: 'fuzz-edit' }) });
  keyId = ((await e.json()) as { id: string }).id;
});

after(async () => {
  try {
    // Nothing any fuzzed body made the gateway log, store, answer or show carries a secret.
    assertNoSecrets({ 'the logs': capture.text(), 'the records': await storedText(gw), 'answers': answers.join('\n'), '/metrics and /health': await publicText(gw.url) },
      [SECRETS.admin, gatewayKeySecret(key)]);
  } finally { capture.stop(); }
  reportFigures(LONG ? 'fuzz-routes-long' : 'fuzz-routes', { seed: SEED, runsPerRoute: RUNS, ...stats });
  await gw.stop();
  for (const m of mocks) await m.close();
});

// ---- the routes ----

type Route = { name: string; method: string; path: string | (() => string); envelope: 'openai' | 'anthropic'; auth: 'key' | 'admin'; body: fc.Arbitrary<unknown>;
  /** Statuses a success may have. */ ok?: number[];
  /** Bodies always tried first: counterexamples the long runs found, kept as regressions. */
  examples?: unknown[] };
const ROUTES: Route[] = [
  { name: 'chat-completions', method: 'POST', path: '/v1/chat/completions', envelope: 'openai', auth: 'key', body: chatBody },
  { name: 'messages', method: 'POST', path: '/v1/messages', envelope: 'anthropic', auth: 'key', body: messagesBody },
  { name: 'count_tokens', method: 'POST', path: '/v1/messages/count_tokens', envelope: 'anthropic', auth: 'key', body: countTokensBody },
  { name: 'responses', method: 'POST', path: '/v1/responses', envelope: 'openai', auth: 'key', body: responsesBody },
  { name: 'responses input_tokens', method: 'POST', path: '/v1/responses/input_tokens', envelope: 'openai', auth: 'key', body: fc.record(responsesFields, open) },
  { name: 'router rank', method: 'POST', path: '/v1/router/rank', envelope: 'openai', auth: 'key', body: rankBody,
    // max_cost 1e308 was a 500: toFixed wrote it as "1e+308", which the decimal arithmetic refused (fixed in src/router/decide.ts).
    examples: [{ models: ['oai/test-model', 'ant/test-model'], max_cost: 1e308, messages: [{ role: 'user', content: 'hi' }] }, { max_cost: 1e21, messages: [{ role: 'user', content: 'hi' }] }] },
  { name: 'feedback', method: 'POST', path: '/v1/feedback', envelope: 'openai', auth: 'key', body: feedbackBody },
  { name: 'embeddings (pass-through)', method: 'POST', path: '/v1/embeddings', envelope: 'openai', auth: 'key', body: embeddingsBody },
  { name: 'admin keys', method: 'POST', path: '/admin/keys', envelope: 'openai', auth: 'admin', body: keyBody, ok: [201] },
  { name: 'admin API keys (create)', method: 'POST', path: '/admin/api/v1/keys', envelope: 'openai', auth: 'admin', body: keyBody, ok: [200, 201] },
  { name: 'admin API keys (edit)', method: 'PATCH', path: () => `/admin/api/v1/keys/${keyId}`, envelope: 'openai', auth: 'admin', body: fc.record({ ...keyFields, name: maybe(fc.constantFrom('fuzz', 'renamed')) }, open) },
  { name: 'admin API users', method: 'POST', path: '/admin/api/v1/users', envelope: 'openai', auth: 'admin', body: userBody, ok: [200, 201] },
  // The dashboard's dry run takes the rank route's bodies (through the same preparation).
  { name: 'admin API router preview', method: 'POST', path: '/admin/api/v1/router/preview', envelope: 'openai', auth: 'admin', body: rankBody,
    examples: [{ models: ['oai/test-model', 'ant/test-model'], max_cost: 1e308, messages: [{ role: 'user', content: 'hi' }] }] },
];

function checkEnvelope(envelope: Route['envelope'], body: Record<string, any>): void {
  if (envelope === 'anthropic') {
    assert.equal(body.type, 'error');
    assert.equal(typeof body.error?.type, 'string');
    assert.equal(typeof body.error?.message, 'string');
  } else {
    assert.equal(typeof body.error?.message, 'string');
    assert.equal(typeof body.error?.type, 'string');
  }
}

async function send(route: Route, payload: unknown, raw: boolean): Promise<void> {
  const path = typeof route.path === 'function' ? route.path() : route.path;
  const auth = route.auth === 'admin' ? SECRETS.admin : key;
  const r = await fetch(`${gw.url}${path}`, {
    method: route.method, signal: AbortSignal.timeout(15_000),
    headers: { 'content-type': 'application/json', authorization: `Bearer ${auth}` },
    body: raw ? String(payload) : JSON.stringify(payload),
  });
  const bodyText = await r.text();
  if (answers.length < 5000) answers.push(bodyText.slice(0, 4000));
  stats.requests++;
  stats.byStatus[r.status] = (stats.byStatus[r.status] ?? 0) + 1;
  const ok = route.ok ?? [200];
  if (ok.includes(r.status)) return;
  if (r.status >= 500) stats.fiveHundreds++;
  assert.ok(r.status >= 400 && r.status < 500, `${route.name}: ${r.status} for ${(raw ? String(payload) : JSON.stringify(payload)).slice(0, 600)}\n-> ${bodyText.slice(0, 400)}`);
  assert.match(r.headers.get('content-type') ?? '', /application\/json/);
  checkEnvelope(route.envelope, JSON.parse(bodyText) as Record<string, any>);
}

for (const route of ROUTES) {
  test(`fuzz ${route.name}: ${RUNS} bodies, every one a success or a 4xx in its envelope`, async () => {
    await fc.assert(
      fc.asyncProperty(fc.oneof({ weight: 5, arbitrary: route.body.map((b) => ({ b, raw: false })) }, { weight: 1, arbitrary: rawBody.map((b) => ({ b, raw: true })) }),
        async ({ b, raw }) => { await send(route, b, raw); }),
      { seed: SEED, numRuns: RUNS, endOnFailure: true, examples: (route.examples ?? []).map((b) => [{ b, raw: false }] as [{ b: unknown; raw: boolean }]) },
    );
    assert.equal(await settled(gw, 5000), 0, 'nothing left in flight');
    assert.equal((await fetch(`${gw.url}/health`)).status, 200);
  });
}
