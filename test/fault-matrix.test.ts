// Fault injection through the mock upstreams, as one table: every fault x every wire format (OpenAI
// chat, Anthropic messages, Gemini, Bedrock, and the native Responses relay) x every client format
// (chat-completions, messages, responses) x streamed and not x the model named or chosen by the router.
// Each case asserts the client got a well-formed answer in its envelope (or a terminated stream), the
// record has the status sent and the tokens billed (partial where the answer was cut), no request is
// left in flight, the process serves; a routed case also that the decision is recorded with the attempt
// and that the bill stayed under its max_cost. `npm test` runs each fault once per wire, stream mode and
// routing (the client format rotates); RELIABILITY=long runs the whole cross product. A secret scan over everything the gateway said closes the suite.
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { createServer } from 'node:net';
import { startMockAnthropic, startMockBedrock, startMockGemini, startMockOpenAI, type Fault, type MockUpstream } from './mocks/index.ts';
import { startTestGateway, TEST_PRICING, type TestGateway, type TestProvider } from './helpers/gateway.ts';
import { recordOf, settled } from './helpers/records.ts';
import { SECRETS, assertNoSecrets, captureOutput, gatewayKeySecret, publicText, storedText, type OutputCapture } from './helpers/secret-scan.ts';
import { checkAnswer, CLIENTS, type ClientName, type Outcome } from './helpers/answer-shape.ts';
import { reportFigures } from './helpers/figures.ts';
import type { AttemptRecord } from '../src/store/types.ts';

const LONG = process.env.RELIABILITY === 'long';

type WireName = 'oai' | 'ant' | 'gem' | 'bed' | 'oair';
type Wire = { name: WireName; format: TestProvider['format']; start(): Promise<MockUpstream>; clients: ClientName[];
  /** Stream chunks after which the answer's text has reached the client (cut and stall points). */
  contentAfter: number;
  /** Stream chunks before the first content event (what the gateway holds before it commits: a message_start, a role chunk). */
  preamble: number; paths?: Record<string, string>; upstreamModel?: string };

const WIRES: Wire[] = [
  { name: 'oai', format: 'openai-chat', start: () => startMockOpenAI({ apiKey: SECRETS.provider }), clients: ['chat', 'messages', 'responses'], contentAfter: 3, preamble: 1 },
  { name: 'ant', format: 'anthropic-messages', start: () => startMockAnthropic({ apiKey: SECRETS.provider }), clients: ['chat', 'messages', 'responses'], contentAfter: 5, preamble: 1 },
  { name: 'gem', format: 'gemini', start: () => startMockGemini({ apiKey: SECRETS.provider }), clients: ['chat', 'messages', 'responses'], contentAfter: 2, preamble: 0 },
  { name: 'bed', format: 'bedrock-converse', start: () => startMockBedrock(), clients: ['chat', 'messages', 'responses'], contentAfter: 3, preamble: 1, upstreamModel: 'anthropic.claude-test-model' },
  // The Responses API relayed natively to an OpenAI provider that serves it (paths.responses).
  { name: 'oair', format: 'openai-chat', start: () => startMockOpenAI({ apiKey: SECRETS.provider }), clients: ['responses'], contentAfter: 6, preamble: 2, paths: { responses: '/responses' } },
];

/** What a fault may lead to, per request mode; absent = the fault does not apply to that mode. */
type Expect = { stream?: Outcome[]; json?: Outcome[]; status?: (s: number) => boolean };
type FaultCase = { name: string; fault?: (w: Wire) => Fault; dead?: true; expect: Expect };

const ERR: Outcome[] = ['error'];
const CUT: Outcome[] = ['partial'];
const OK: Outcome[] = ['ok'];
const server5xx = (s: number): boolean => s >= 500 && s <= 599;

const FAULTS: FaultCase[] = [
  { name: 'connect refused', dead: true, expect: { stream: ERR, json: ERR, status: server5xx } },
  { name: 'reset before headers', fault: () => ({ resetConnection: true }), expect: { stream: ERR, json: ERR, status: server5xx } },
  { name: 'reset after headers', fault: () => ({ disconnectAfterChunks: 0 }), expect: { stream: ERR, json: ERR, status: server5xx } },
  { name: 'cut mid-stream', fault: (w) => ({ disconnectAfterChunks: w.contentAfter }), expect: { stream: CUT, json: ERR, status: server5xx } },
  { name: 'slow first byte (within the timeout)', fault: () => ({ delayFirstByteMs: 150 }), expect: { stream: OK, json: OK } },
  { name: 'slow first byte (past the timeout)', fault: () => ({ delayFirstByteMs: 2500 }), expect: { stream: ERR, json: ERR, status: (s) => s === 504 } },
  { name: 'stall mid-stream', fault: (w) => ({ stallAfterChunks: w.contentAfter }), expect: { stream: CUT, json: ERR, status: server5xx } },
  // An event cut short, or one that is not a JSON object (`data: null`, `42`, a Bedrock payload `null`), is
  // data loss in every format and path: before content the attempt fails (502 here, no fallback target);
  // after content the stream ends with an error event and the answer is billed as partial. Never a success.
  { name: 'malformed frame', fault: (w) => ({ inject: 'malformed', afterChunks: w.preamble }), expect: { stream: ERR, json: ERR, status: server5xx } },
  { name: 'malformed frame after content', fault: (w) => ({ inject: 'malformed', afterChunks: w.contentAfter }), expect: { stream: CUT } },
  { name: 'non-object frame', fault: (w) => ({ inject: 'scalar', afterChunks: w.preamble }), expect: { stream: ERR, json: ERR, status: server5xx } },
  { name: 'non-object frame after content', fault: (w) => ({ inject: 'scalar', afterChunks: w.contentAfter }), expect: { stream: CUT } },
  { name: 'error as the first event', fault: () => ({ inject: 'error', afterChunks: 0 }), expect: { stream: ERR, json: ERR, status: server5xx } },
  { name: 'error after content', fault: (w) => ({ inject: 'error', afterChunks: w.contentAfter }), expect: { stream: CUT } },
  { name: 'wrong content type', fault: () => ({ contentType: 'text/html; charset=utf-8' }), expect: { stream: ['ok', 'error'], json: ['ok', 'error'], status: server5xx } },
  { name: 'HTML page with status 200', fault: () => ({ status: 200, body: '<html><body><h1>Welcome to nginx!</h1></body></html>' }), expect: { stream: ERR, json: ERR, status: server5xx } },
  { name: 'oversized event', fault: (w) => ({ inject: 'oversize', afterChunks: w.contentAfter }), expect: { stream: CUT } },
  ...(LONG ? [{ name: 'oversized JSON body', fault: () => ({ inject: 'oversize' }), expect: { json: ERR, status: server5xx } } satisfies FaultCase] : []),
  { name: 'oversized error body', fault: () => ({ status: 500, body: `upstream trace ${'x'.repeat(8 * 1024 * 1024)}` }), expect: { stream: ERR, json: ERR, status: server5xx } },
  { name: 'invalid UTF-8 in the text', fault: () => ({ inject: 'badUtf8' }), expect: { stream: OK, json: OK } },
  { name: 'upstream 500 echoing the provider key', fault: () => ({ status: 500, body: { error: { message: `internal error for key ${SECRETS.provider} (Authorization: Bearer ${SECRETS.provider})`, type: 'server_error' }, message: `key ${SECRETS.provider}` } }), expect: { stream: ERR, json: ERR, status: server5xx } },
  { name: 'upstream 401 (the operator key, not the client)', fault: () => ({ status: 401 }), expect: { stream: ERR, json: ERR, status: (s) => s === 502 } },
];

type Case = { fault: FaultCase; wire: Wire; client: ClientName; stream: boolean; routed: boolean };

/** A routed case's bound: below the uncapped bill, so the router caps the output (an answer of 256 tokens would cost more). */
const MAX_COST = 0.0003;

/** Every case of the cross product (long), or each fault once per wire and mode with the client rotating. */
function cases(): Case[] {
  const out: Case[] = [];
  let turn = 0;
  for (const fault of FAULTS) {
    for (const wire of WIRES) {
      for (const stream of [true, false]) {
        if ((stream ? fault.expect.stream : fault.expect.json) === undefined) continue;
        for (const routed of [false, true]) {
          const clients = LONG ? wire.clients : [wire.clients[turn++ % wire.clients.length]!];
          for (const client of clients) out.push({ fault, wire, client, stream, routed });
        }
      }
    }
  }
  return out;
}

const ADMIN = SECRETS.admin;
let gw: TestGateway; let key = ''; let capture: OutputCapture;
const mocks = new Map<WireName, MockUpstream>();
const errorBodies: string[] = [];
const tally = { cases: 0, ok: 0, error: 0, partial: 0, ms: 0 };

async function deadPort(): Promise<number> {
  const s = createServer().listen(0, '127.0.0.1');
  await new Promise((r) => s.once('listening', r));
  const port = (s.address() as { port: number }).port;
  await new Promise((r) => s.close(r));
  return port;
}

before(async () => {
  capture = captureOutput();
  for (const w of WIRES) mocks.set(w.name, await w.start());
  const dead = await deadPort();
  const model = (w: Wire) => [{ name: 'test-model', pricing: TEST_PRICING, max_completion_tokens: 4096, ...(w.upstreamModel ? { upstream: w.upstreamModel } : {}), capabilities: { tools: true, reasoning: true } }];
  const providers: TestProvider[] = WIRES.flatMap((w) => [
    { id: w.name, format: w.format, base_url: mocks.get(w.name)!.url, api_key: SECRETS.provider, models: model(w), ...(w.paths ? { paths: w.paths } : {}) },
    { id: `${w.name}-dead`, format: w.format, base_url: `http://127.0.0.1:${dead}${new URL(mocks.get(w.name)!.url).pathname}`, api_key: SECRETS.provider, models: model(w), ...(w.paths ? { paths: w.paths } : {}) },
  ]);
  gw = await startTestGateway({
    providers,
    gateway: {
      auth: { enabled: true, admin_key: ADMIN },
      storage: { log_bodies: 'full' },
      upstream: { first_byte_timeout_ms: 900, idle_timeout_ms: 900, connect_timeout_ms: 500, max_attempts: 1, ejection: { consecutive_failures: 100000 } },
      router: { exploration: { share: 0 }, learning: { train_interval_ms: 3_600_000, state_poll_ms: 3_600_000 } },
    },
  });
  const r = await fetch(`${gw.url}/admin/keys`, { method: 'POST', headers: { authorization: `Bearer ${ADMIN}`, 'content-type': 'application/json' }, body: JSON.stringify({ name: 'fault-matrix' }) });
  assert.equal(r.status, 201);
  key = ((await r.json()) as { key: string }).key;
});

after(async () => {
  try {
    // Nothing any fault made the gateway say, store or show carries a secret.
    assertNoSecrets({
      'the logs': capture.text(), 'the records': await storedText(gw), 'error bodies': errorBodies.join('\n'), '/metrics and /health': await publicText(gw.url),
    }, [SECRETS.provider, ADMIN, gatewayKeySecret(key)]);
  } finally {
    capture.stop();
    reportFigures(LONG ? 'fault-matrix-long' : 'fault-matrix', { ...tally, faults: FAULTS.length, wires: WIRES.length, crashes: 0, leftInFlight: 0 });
    await gw.stop();
    for (const m of mocks.values()) await m.close();
  }
});

/** Routed cases whose recorded decision the last test checks (the router's worker writes them in the background). */
const routedCases: Array<{ id: string; model: string; failed: boolean; name: string }> = [];

const PROMPT = 'fault matrix prompt with several words to echo back through the gateway';

for (const c of cases()) {
  const mode = c.stream ? 'stream' : 'json';
  test(`${c.fault.name}: ${c.wire.name} wire, ${c.client} client, ${mode}${c.routed ? ', routed' : ''}`, async () => {
    const mock = mocks.get(c.wire.name)!;
    mock.reset();
    if (c.fault.fault) mock.fault(c.fault.fault(c.wire));
    const model = `${c.wire.name}${c.fault.dead ? '-dead' : ''}/test-model`;
    // Routed: the router's only candidate is the faulty offer (one attempt, as for the named model).
    const body = c.routed ? { ...CLIENTS[c.client].body('router', c.stream, PROMPT), models: [model], max_cost: MAX_COST } : CLIENTS[c.client].body(model, c.stream, PROMPT);
    const t0 = Date.now();
    const r = await fetch(`${gw.url}${CLIENTS[c.client].path}`, {
      method: 'POST', signal: AbortSignal.timeout(20_000),
      headers: { 'content-type': 'application/json', authorization: `Bearer ${key}` },
      body: JSON.stringify(body),
    });
    const bytes = Buffer.from(await r.arrayBuffer());
    const allowed = (c.stream ? c.fault.expect.stream : c.fault.expect.json)!;
    const outcome = checkAnswer(c.client, r, bytes, c.stream);
    assert.ok(allowed.includes(outcome.kind), `expected ${allowed.join(' or ')}, got ${outcome.kind} (${r.status}): ${bytes.toString('utf8').slice(0, 400)}`);
    if (outcome.kind === 'error') {
      errorBodies.push(bytes.toString('utf8'));
      if (c.fault.expect.status) assert.ok(c.fault.expect.status(r.status), `status ${r.status}`);
    }
    if (c.fault.name.startsWith('invalid UTF-8')) assert.match(outcome.text, /\uFFFD/, 'bad bytes become U+FFFD, the rest of the text survives');

    // Nothing hangs: the request is no longer in flight, and the process still serves.
    assert.equal(await settled(gw, 5000), 0, 'inFlight back to 0');
    assert.equal((await fetch(`${gw.url}/health`)).status, 200);

    const id = r.headers.get('x-inference-id');
    assert.ok(id, 'every answer carries its inference id');
    const rec = await recordOf(gw, id);
    assert.equal(rec.status, r.status, 'the record has the status the client got');
    assert.equal(rec.stream, c.stream);
    if (outcome.kind === 'ok') {
      assert.equal(rec.partial ?? false, false);
      assert.equal(rec.errorCode, null);
      assert.ok(rec.inputTokens > 0 && rec.outputTokens > 0, `billed ${rec.inputTokens}/${rec.outputTokens}`);
      assert.notEqual(rec.costUsd, '0');
    } else if (outcome.kind === 'partial') {
      assert.equal(rec.partial, true, 'a cut answer is recorded as partial');
      assert.ok(rec.inputTokens > 0, `input billed: ${rec.inputTokens}`);
      assert.ok(rec.outputTokens > 0, `output relayed is billed: ${rec.outputTokens}`);
      assert.notEqual(rec.costUsd, '0');
    } else {
      assert.ok(rec.errorCode, 'an error is recorded with its code');
      assert.equal(rec.outputTokens, 0, 'no output reached the client, none is billed');
    }
    if (c.routed) {
      assert.equal(r.headers.get('x-router-model'), model, 'the routed answer names the router\'s choice');
      assert.ok(r.headers.get('x-router-decision-id'), 'and its decision');
      assert.ok(Number(rec.costUsd) <= MAX_COST, `recorded cost ${rec.costUsd} within max_cost ${MAX_COST}`);
      routedCases.push({ id, model, failed: outcome.kind === 'error', name: `${c.fault.name}: ${c.wire.name}, ${c.client}, ${mode}` });
    }
    tally.cases++; tally[outcome.kind]++; tally.ms += Date.now() - t0;
  });
}

test('every routed case left its decision, with the attempt and how it ended', async () => {
  assert.ok(routedCases.length > 0);
  const decisions = new Map<string, { chosen: string; attempts: AttemptRecord[] }>();
  for (let i = 0; i < 250 && decisions.size < routedCases.length; i++) {
    if (i > 0) await new Promise((r) => setTimeout(r, 20));
    for (const row of await gw.services.store!.sql.all('SELECT inference_id, decision FROM router_decisions')) decisions.set(row.inference_id as string, JSON.parse(row.decision as string));
  }
  for (const c of routedCases) {
    const d = decisions.get(c.id);
    assert.ok(d, `${c.name}: decision recorded`);
    assert.equal(d.chosen, c.model, c.name);
    assert.equal(d.attempts.length, 1, `${c.name}: the decision holds the attempt`);
    const at = d.attempts[0]!;
    assert.equal(at.provider, c.model.split('/')[0], c.name);
    if (c.failed) assert.ok(at.error !== null || (at.status ?? 0) >= 400, `${c.name}: the failed attempt says so: ${JSON.stringify(at)}`);
  }
});
