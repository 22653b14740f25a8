// A config reload that changes workers.threads resizes the worker pools of a running gateway: new
// pools (or none, for 0) take the next requests, the replaced ones finish what they were given and
// close, and no request fails because of the swap. An unchanged thread count leaves the pools alone.
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { readFileSync, writeFileSync } from 'node:fs';
import { parse, stringify } from 'yaml';
import { startMockAnthropic, startMockOpenAI, type MockUpstream } from './mocks/index.ts';
import { startTestGateway, type TestGateway } from './helpers/gateway.ts';
import type { ConvertPool, PreparedRequest } from '../src/engine/convert-pool.ts';
import { flattenBatchBytes, type BatchResult } from '../src/feedback/batch.ts';
import { resolveLimits } from '../src/feedback/limits.ts';
import type { FlattenPool } from '../src/feedback/pool.ts';
import { uuidv7 } from '../src/util/uuid.ts';
import { loadConfig } from '../src/config/load.ts';

type Rec = Record<string, any>;
const THRESHOLD = 16 * 1024;

let oai: MockUpstream; let ant: MockUpstream; let gw: TestGateway;
// An OpenAI-format upstream that holds each request until the test releases it, then answers 500,
// so the gateway falls back to ant/test-model at a moment the test chooses.
let held: Server;
const arrived: Array<() => void> = [];
const released: Array<() => void> = [];

before(async () => {
  [oai, ant] = await Promise.all([startMockOpenAI(), startMockAnthropic()]);
  held = createServer((req, res) => {
    req.resume();
    req.on('end', () => {
      new Promise<void>((ok) => { released.push(ok); arrived.shift()?.(); }).then(() => {
        res.writeHead(500, { 'content-type': 'application/json' });
        res.end(JSON.stringify({ error: { message: 'held, then failed', type: 'server_error' } }));
      });
    });
  });
  await new Promise<void>((ok) => held.listen(0, '127.0.0.1', ok));
  const heldUrl = `http://127.0.0.1:${(held.address() as AddressInfo).port}/v1`;
  gw = await startTestGateway({
    providers: [
      { id: 'oai', format: 'openai-chat', base_url: oai.url },
      { id: 'ant', format: 'anthropic-messages', base_url: ant.url },
      { id: 'held', format: 'openai-chat', base_url: heldUrl },
    ],
    gateway: {
      reload: { watch: false },
      fallbacks: { 'held/test-model': ['ant/test-model'] },
      upstream: { max_attempts: 2, retry_budget_floor: 100 },
      workers: { threads: 1, convert_threshold_bytes: THRESHOLD, feedback_threshold_bytes: THRESHOLD },
    },
  });
});
after(async () => {
  await gw.stop();
  await oai.close(); await ant.close();
  await new Promise((ok) => held.close(ok));
});

/** Rewrites gateway.yaml's workers section and reloads (load, then apply, as SIGHUP does). */
function reloadWorkers(workers: Rec): void {
  const doc = parse(readFileSync(gw.configFile, 'utf8')) as Rec;
  doc.workers = { ...doc.workers, ...workers };
  writeFileSync(gw.configFile, stringify(doc));
  // Loaded here and applied at once (what a reload does after its loader thread answers), so the swap lands at a known moment.
  const r = gw.services.holder.apply(loadConfig(gw.configFile, {}));
  assert.deepEqual({ ok: r.ok, changed: r.ok && r.changed }, { ok: true, changed: true }, JSON.stringify(r));
}

const health = async (): Promise<Rec> => (await (await fetch(`${gw.url}/health`)).json()) as Rec;

const waitFor = async (cond: () => boolean | Promise<boolean>, what: string, ms = 5000): Promise<void> => {
  const t0 = Date.now();
  while (Date.now() - t0 < ms) { if (await cond()) return; await new Promise((r) => setTimeout(r, 5)); }
  throw new Error(`${what}: not met in time`);
};

/** A chat body of about `bytes` bytes (above the threshold, so it goes to the conversion pool when there is one). */
function bigChat(model: string, last: string, bytes = 300_000): Rec {
  const turn = 'An earlier turn about the weather in several cities and what to pack for each. '.repeat(20);
  const messages: Rec[] = [];
  for (let i = 0; messages.length * turn.length < bytes; i++) messages.push({ role: i % 2 === 0 ? 'user' : 'assistant', content: `${i}: ${turn}` });
  if (messages.at(-1)!.role === 'user') messages.push({ role: 'assistant', content: 'ok' });
  messages.push({ role: 'user', content: last });
  return { model, max_tokens: 50, messages };
}

/** A feedback batch (about 1 KB per event) for unknown inferences: a 200 with one error per event. */
function bigFeedback(events: number): unknown[] {
  return Array.from({ length: events }, (_, i) => ({ id: uuidv7(), feedback: { rating: i, comment: 'c'.repeat(1000) } }));
}

async function post(path: string, body: unknown): Promise<{ status: number; json: Rec; headers: Headers }> {
  const r = await fetch(`${gw.url}${path}`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(body) });
  const text = await r.text();
  return { status: r.status, json: JSON.parse(text) as Rec, headers: r.headers };
}

/** Counts the calls made to a pool (wrapping the object the gateway holds); `onCall` runs once the call has been submitted. */
function watchConvert(p: ConvertPool, onCall?: () => void): { busy: () => number; answered: () => number } {
  let busy = 0; let answered = 0;
  const prepare = p.prepare.bind(p);
  p.prepare = async (...a) => {
    busy++;
    const pending = prepare(...a);
    onCall?.();
    try { return await pending; } finally { busy--; answered++; }
  };
  return { busy: () => busy, answered: () => answered };
}
function watchFlatten(p: FlattenPool): { answered: () => number } {
  let answered = 0;
  const run = p.run.bind(p);
  p.run = async (...a) => { try { return await run(...a); } finally { answered++; } };
  return { answered: () => answered };
}

test('workers.threads 1 -> 3: new pools take new work while the old ones finish theirs, then close', async () => {
  assert.deepEqual((await health()).workers, { threads: 1, retiring: 0 });
  const oldConvert = gw.services.convert!;
  const oldFlatten = gw.services.feedback!.pool!;
  assert.equal(oldConvert.threads, 1);
  assert.equal(oldFlatten.threads, 1);
  const limits = resolveLimits();
  const fbText = JSON.stringify(bigFeedback(500));
  const cfg = gw.services.holder.current;

  // The reload lands while the first request that reached the old conversion pool waits for it,
  // with more work queued on the old pools' single threads: three bodies and three feedback batches.
  const atSwap: Rec = {};
  const prepared: Array<Promise<PreparedRequest>> = [];
  const flattened: Array<Promise<BatchResult>> = [];
  let fired = false;
  const c = watchConvert(oldConvert, () => {
    if (fired) return; // the direct calls below go through this wrapper too
    fired = true;
    for (let i = 0; i < 3; i++) {
      prepared.push(oldConvert.prepare(Buffer.from(JSON.stringify(bigChat('oai/test-model', `direct ${i}`))), 'openai-chat', cfg));
      flattened.push(oldFlatten.run(Buffer.from(fbText), limits));
    }
    reloadWorkers({ threads: 3 });
    Object.assign(atSwap, { busy: c.busy(), retiring: gw.services.pools!.retiring, convert: gw.services.convert, flatten: gw.services.feedback!.pool });
  });
  const f = watchFlatten(oldFlatten);
  const chats = Array.from({ length: 6 }, (_, i) => post('/v1/chat/completions', bigChat('oai/test-model', `question ${i}`)));
  const feedback = Array.from({ length: 4 }, () => post('/v1/feedback', bigFeedback(500)));

  const answers = await Promise.all(chats);
  answers.forEach((a, i) => {
    assert.equal(a.status, 200, JSON.stringify(a.json));
    assert.equal(a.json.choices[0].message.content, `Echo: question ${i}`);
  });
  for (const a of await Promise.all(feedback)) {
    assert.equal(a.status, 200, JSON.stringify(a.json));
    assert.equal(a.json.length, 500);
    assert.match(a.json[0].error.message, /does not exist/);
  }

  // Swapped at once, in the fields the request path reads, while the old pools still had work.
  assert.ok(fired, 'a request reached the old conversion pool');
  const swap = atSwap;
  assert.ok(swap.busy >= 4, `in the old conversion pool at the swap: ${swap.busy}`);
  assert.equal(swap.retiring, 1, 'the old pools were still finishing');
  assert.notEqual(swap.convert, oldConvert);
  assert.equal(swap.convert.threads, 3);
  assert.notEqual(swap.flatten, oldFlatten);
  assert.equal(swap.flatten.threads, 3);
  assert.equal(gw.services.convert, swap.convert);

  // Everything submitted to the old pools before the swap was answered, correctly.
  const entry = gw.services.holder.current.models.get('oai/test-model')!;
  for (const [i, p] of (await Promise.all(prepared)).entries()) {
    assert.equal(p.meta.model, 'oai/test-model');
    const out = JSON.parse((await p.encodeFor(entry)).body.toString()) as Rec;
    assert.equal(out.messages.at(-1).content, `direct ${i}`);
  }
  const expected = flattenBatchBytes(Buffer.from(fbText), limits);
  for (const r of await Promise.all(flattened)) assert.deepEqual(r, expected);
  assert.ok(f.answered() >= 3);

  await waitFor(async () => (await health()).workers.retiring === 0, 'the old pools closed');
  assert.deepEqual((await health()).workers, { threads: 3, retiring: 0 });

  // The new pools serve.
  const n = watchConvert(gw.services.convert!);
  const after = await post('/v1/chat/completions', bigChat('oai/test-model', 'after the swap'));
  assert.equal(after.status, 200);
  assert.equal(after.json.choices[0].message.content, 'Echo: after the swap');
  assert.equal(n.answered(), 1, 'the new conversion pool took the request');
});

test('a reload that leaves workers.threads unchanged keeps the same pools', async () => {
  const convert = gw.services.convert;
  const flatten = gw.services.feedback!.pool;
  reloadWorkers({ convert_threshold_bytes: THRESHOLD * 2 });
  assert.equal(gw.services.holder.current.workers.convertThresholdBytes, THRESHOLD * 2);
  assert.equal(gw.services.convert, convert);
  assert.equal(gw.services.feedback!.pool, flatten);
  assert.deepEqual((await health()).workers, { threads: 3, retiring: 0 });
});

test('workers.feedback_threshold_bytes follows a reload', async () => {
  reloadWorkers({ feedback_threshold_bytes: THRESHOLD * 4 });
  assert.equal(gw.services.feedback!.limits!.poolMinBytes, THRESHOLD * 4);
});

test('workers.threads 3 -> 0: no pools; a request prepared in the old pool encodes its fallback inline', async () => {
  const oldConvert = gw.services.convert!;
  const c = watchConvert(oldConvert);
  // Prepared (parsed, validated, encoded for held/) in the pool, then held at the upstream.
  const reached = new Promise<void>((ok) => arrived.push(ok));
  const pending = post('/v1/chat/completions', bigChat('held/test-model', 'fall back after the swap'));
  await reached;
  assert.equal(c.answered(), 1, 'prepared by the old pool');

  reloadWorkers({ threads: 0 });
  assert.equal(gw.services.convert, null);
  assert.equal(gw.services.feedback!.pool, undefined);
  // Nothing is under way in the old pools: they close now, before the held request falls back.
  await waitFor(async () => (await health()).workers.retiring === 0, 'the old pools closed');
  assert.deepEqual((await health()).workers, { threads: 0, retiring: 0 });

  ant.reset();
  released.shift()!();
  const r = await pending;
  assert.equal(r.status, 200, JSON.stringify(r.json));
  assert.equal(r.headers.get('x-gateway-provider'), 'ant');
  assert.equal(r.json.choices[0].message.content, 'Echo: fall back after the swap');
  const up = ant.requests.at(-1)!.body as Rec;
  assert.equal(up.model, 'test-model');
  assert.deepEqual(up.messages.at(-1).content, [{ type: 'text', text: 'fall back after the swap' }]);

  // Inline from now on: large bodies and feedback batches still succeed.
  const big = await post('/v1/chat/completions', bigChat('oai/test-model', 'inline now'));
  assert.equal(big.status, 200);
  assert.equal(big.json.choices[0].message.content, 'Echo: inline now');
  const fb = await post('/v1/feedback', bigFeedback(200));
  assert.equal(fb.status, 200);
  assert.equal(fb.json.length, 200);
  assert.equal(c.answered(), 1, 'the retired pool got nothing more');
});

test('workers.threads 0 -> 2: pools are built again and used', async () => {
  reloadWorkers({ threads: 2, feedback_threshold_bytes: THRESHOLD });
  assert.equal(gw.services.convert!.threads, 2);
  assert.equal(gw.services.feedback!.pool!.threads, 2);
  const c = watchConvert(gw.services.convert!);
  const f = watchFlatten(gw.services.feedback!.pool!);
  const r = await post('/v1/chat/completions', bigChat('oai/test-model', 'pooled again'));
  assert.equal(r.status, 200);
  assert.equal(r.json.choices[0].message.content, 'Echo: pooled again');
  const fb = await post('/v1/feedback', bigFeedback(200));
  assert.equal(fb.status, 200);
  assert.deepEqual([c.answered(), f.answered()], [1, 1]);
  assert.deepEqual((await health()).workers, { threads: 2, retiring: 0 });
});
