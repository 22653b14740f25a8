// POST /v1/feedback semantics against an in-memory Store fake: results, rows, ownership,
// metric typing, request-level errors, and the worker-pool path giving the inline results.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { handleFeedback, handleFeedbackBytes, type FeedbackContext, type FeedbackResult } from '../src/feedback/handle.ts';
import { createFlattenPool, type FlattenPool } from '../src/feedback/pool.ts';
import { GatewayError } from '../src/gateway-error.ts';
import type { MetricClaim, MetricDef } from '../src/feedback/metric-store.ts';
import type { FeedbackRow, InferenceRef, MetricType } from '../src/store/types.ts';
import { isUuid, uuidv7 } from '../src/util/uuid.ts';

const KEY = 'key-a';
const OTHER = 'key-b';

/** Metric definition store fake, per scope (API key) like the real table: first claim wins; calls are recorded. */
function fakeMetrics(preset: Record<string, MetricType> = {}) {
  const defs = new Map<string, MetricDef>();
  const k = (scope: string, name: string): string => `${scope}\u0000${name}`;
  const calls = { ensure: [] as string[], get: [] as string[][] };
  const m = {
    defs, calls,
    has: (name: string, scope = KEY): boolean => defs.has(k(scope, name)),
    set: (name: string, type: MetricType, scope = KEY, optimize: 'max' | 'min' | null = type === 'comment' ? null : 'max'): void => {
      defs.set(k(scope, name), { type, optimize });
    },
    async load(scope: string, names: string[]): Promise<Map<string, MetricDef>> {
      calls.get.push([...names]);
      return new Map(names.flatMap((n) => (defs.has(k(scope, n)) ? [[n, defs.get(k(scope, n))!] as const] : [])));
    },
    async claim(scope: string, wanted: MetricClaim[]): Promise<Map<string, MetricDef>> {
      for (const w of wanted) {
        calls.ensure.push(w.metric);
        if (!defs.has(k(scope, w.metric))) defs.set(k(scope, w.metric), { type: w.type, optimize: w.optimize });
      }
      return new Map(wanted.map((w) => [w.metric, defs.get(k(scope, w.metric))!]));
    },
  };
  for (const [n, t] of Object.entries(preset)) m.set(n, t);
  return m;
}

function setup(opts: { keyId?: string | null; metrics?: ReturnType<typeof fakeMetrics> } = {}) {
  const inferences = new Map<string, InferenceRef>();
  const rows: FeedbackRow[] = [];
  const lookups: string[] = [];
  let enqueues = 0;
  const metrics = opts.metrics ?? fakeMetrics();
  const addInference = (keyId: string | null = KEY): string => {
    const id = uuidv7();
    inferences.set(id, { id, keyId, servedModel: 'openai/gpt-4o', createdAt: new Date().toISOString() });
    return id;
  };
  const ctx: FeedbackContext = {
    keyId: opts.keyId === undefined ? KEY : opts.keyId,
    lookup: async (id) => { lookups.push(id); return inferences.get(id) ?? null; },
    metrics,
    enqueue: (r) => { enqueues++; rows.push(...r); },
  };
  return { ctx, rows, lookups, metrics, addInference, enqueues: () => enqueues };
}

const ok = (r: FeedbackResult | undefined): Record<string, string> => {
  assert.ok(r && r.error === null, `expected success, got ${JSON.stringify(r)}`);
  return r.feedback_ids;
};
const err = (r: FeedbackResult | undefined): string => {
  assert.ok(r && r.feedback_ids === null, `expected failure, got ${JSON.stringify(r)}`);
  assert.equal(r.error.status_code, 400);
  return r.error.message;
};

test('every value type becomes a typed row; feedback_ids use the flattened keys', async () => {
  const s = setup();
  const id = s.addInference();
  const before = Date.now();
  const [r] = await handleFeedback([{
    id, tags: { env: 'prod' }, optimize: 'min',
    feedback: { good: true, stars: 4, note: 'fine', judge: { score: 0.5, reason: 'half right' }, q: { acc: { top1: 0.9 } } },
  }], s.ctx);
  const ids = ok(r);
  assert.deepEqual(Object.keys(ids), ['good', 'stars', 'note', 'judge', 'q.acc.top1']);
  assert.ok(Object.values(ids).every(isUuid));
  assert.equal(new Set(Object.values(ids)).size, 5);
  assert.equal(s.enqueues(), 1);
  assert.deepEqual(s.rows.map((x) => [x.id, x.metric, x.type, x.value, x.reason]), [
    [ids.good, 'good', 'boolean', 'true', null],
    [ids.stars, 'stars', 'float', '4', null],
    [ids.note, 'note', 'comment', 'fine', null],
    [ids.judge, 'judge', 'float', '0.5', 'half right'],
    [ids['q.acc.top1'], 'q.acc.top1', 'float', '0.9', null],
  ]);
  for (const row of s.rows) {
    assert.equal(row.inferenceId, id);
    assert.equal(row.keyId, KEY);
    assert.equal(row.optimize, 'min');
    assert.deepEqual(row.tags, { env: 'prod' });
    const t = Date.parse(row.createdAt);
    assert.ok(t >= before - 1 && t <= Date.now() + 1 && row.createdAt.endsWith('Z'));
  }
  assert.deepEqual(Object.fromEntries([...s.metrics.defs].map(([k, d]) => [k.split('\u0000')[1], d])), {
    good: { type: 'boolean', optimize: 'min' }, stars: { type: 'float', optimize: 'min' }, note: { type: 'comment', optimize: null },
    judge: { type: 'float', optimize: 'min' }, 'q.acc.top1': { type: 'float', optimize: 'min' },
  });
});

test('failures are per event, in order; other events are unaffected', async () => {
  const s = setup();
  const a = s.addInference();
  const theirs = s.addInference(OTHER);
  const missing = uuidv7();
  const res = await handleFeedback([
    { id: a, feedback: { x: 1 } },
    { id: a, feedback: { list: [1, 2] } },
    { id: a, feedback: { nothing: null } },
    { id: a, feedback: { s: { score: [true] } } },
    { id: missing, feedback: { x: 2 } },
    { id: theirs, feedback: { x: 3 } },
    { id: 'abc', feedback: {} },
    { feedback: {} },
    { id: a, feedback: {} },
    { id: a, feedback: { x: 4 } },
  ], s.ctx);
  assert.equal(res.length, 10);
  ok(res[0]);
  assert.match(err(res[1]), /^feedback\.list: array is not a supported/);
  assert.match(err(res[2]), /^feedback\.nothing: null is not a supported/);
  assert.equal(err(res[3]), 'feedback.s.score must be a boolean, number or string; got array');
  assert.equal(err(res[4]), `Inference ID ${missing} does not exist`);
  // Another key's inference: the very same message as a missing one.
  assert.equal(err(res[5]), `Inference ID ${theirs} does not exist`);
  assert.equal(err(res[6]), 'id must be a UUID string; got "abc"');
  assert.equal(err(res[7]), 'id is required (the inference id, a UUID string)');
  assert.deepEqual(res[8], { feedback_ids: {}, error: null });
  ok(res[9]);
  assert.deepEqual(s.rows.map((r) => r.value), ['1', '4']);
  assert.deepEqual(s.lookups, [a, missing, theirs], 'each distinct id is looked up once');
});

test('empty feedback yields {} and enqueues nothing; keyless gateway matches keyless inferences', async () => {
  const s = setup({ keyId: null });
  const mine = s.addInference(null);
  const keyed = s.addInference(KEY);
  const res = await handleFeedback([{ id: mine, feedback: {} }, { id: keyed, feedback: { a: true } }, { id: mine, feedback: { a: true } }], s.ctx);
  assert.deepEqual(res[0], { feedback_ids: {}, error: null });
  assert.equal(err(res[1]), `Inference ID ${keyed} does not exist`);
  ok(res[2]);
  assert.equal(s.rows.length, 1);
  assert.equal(s.rows[0]!.keyId, null);
  const empty = setup();
  assert.deepEqual(await handleFeedback([], empty.ctx), []);
  assert.equal(empty.enqueues(), 0);
});

test('metric types are fixed on first use, within a request and across requests', async () => {
  const s = setup();
  const id = s.addInference();
  const first = await handleFeedback([{ id, feedback: { m: true } }, { id, feedback: { m: 0.3 } }, { id, feedback: { m: false } }], s.ctx);
  ok(first[0]);
  assert.equal(err(first[1]), "feedback.m: metric m is boolean; got float (a metric's type is fixed by its first value)");
  ok(first[2]);
  assert.deepEqual(s.metrics.calls.ensure, ['m']);
  const second = await handleFeedback([{ id, feedback: { m: 'text' } }, { id, feedback: { m: { score: true } } }], s.ctx);
  assert.equal(err(second[0]), "feedback.m: metric m is boolean; got comment (a metric's type is fixed by its first value)");
  ok(second[1]);
  // The second request was answered from the cache: no store query, no new claim.
  assert.equal(s.metrics.calls.get.length, 1);
  assert.deepEqual(s.metrics.calls.ensure, ['m']);
  assert.deepEqual(s.rows.map((r) => r.value), ['true', 'false', 'true']);
});

test('types already in the store are loaded in one query; a failing event claims nothing', async () => {
  const metrics = fakeMetrics({ acc: 'float', 'q.tone': 'comment' });
  const s = setup({ metrics });
  const id = s.addInference();
  const res = await handleFeedback([{ id, feedback: { acc: 0.7, q: { tone: 'ok' } } }, { id, feedback: { fresh: true, acc: 'high' } }], s.ctx);
  ok(res[0]);
  assert.equal(err(res[1]), "feedback.acc: metric acc is float; got comment (a metric's type is fixed by its first value)");
  assert.deepEqual(metrics.calls.get, [['acc', 'q.tone', 'fresh']]);
  assert.deepEqual(metrics.calls.ensure, [], 'the failed event must not fix the type of "fresh"');
  assert.equal(metrics.has('fresh'), false);
  assert.deepEqual(s.rows.map((r) => r.metric), ['acc', 'q.tone']);
});

test('a type fixed concurrently elsewhere (claim returns another type) fails the event whole', async () => {
  const metrics = fakeMetrics();
  // Another replica wins the race after our getMetricTypes ran.
  metrics.load = async (_scope, names) => { metrics.calls.get.push(names); return new Map(); };
  metrics.set('race', 'comment');
  const s = setup({ metrics });
  const id = s.addInference();
  const [r] = await handleFeedback([{ id, feedback: { ok: 1, race: 2 } }], s.ctx);
  assert.equal(err(r), "feedback.race: metric race is comment; got float (a metric's type is fixed by its first value)");
  assert.equal(s.rows.length, 0);
  assert.equal(s.enqueues(), 0);
});

test('request-level errors are GatewayErrors (400), not per-event results', async () => {
  const s = setup();
  for (const body of [{ id: 'x', feedback: {} }, null, 'events', 3]) {
    await assert.rejects(handleFeedback(body, s.ctx), (e: unknown) => {
      assert.ok(e instanceof GatewayError);
      assert.equal(e.code, 'invalid_body');
      assert.equal(e.status, 400);
      assert.match(e.message, /^the feedback body must be a JSON array of events; got (object|null|string|number)$/);
      return true;
    });
  }
  const small = { ...s.ctx, limits: { maxEventsPerRequest: 2 } };
  const id = s.addInference();
  assert.equal((await handleFeedback([{ id, feedback: {} }, { id, feedback: {} }], small)).length, 2);
  await assert.rejects(handleFeedback([{ id, feedback: {} }, { id, feedback: {} }, {}], small),
    { name: 'GatewayError', code: 'invalid_body', status: 400, message: 'at most 2 feedback events per request; got 3' });
  await assert.rejects(handleFeedbackBytes(new TextEncoder().encode('[{"id": '), s.ctx),
    (e: unknown) => e instanceof GatewayError && e.code === 'invalid_json' && /^request body is not valid JSON/.test(e.message));
  assert.equal(s.enqueues(), 0);
});

/** Results and rows with the random parts (feedback ids, timestamps) replaced, for comparison. */
function normalise(res: FeedbackResult[], rows: FeedbackRow[]) {
  const ids = new Map<string, string>();
  const name = (u: string) => { if (!ids.has(u)) ids.set(u, `#${ids.size}`); return ids.get(u)!; };
  const r = res.map((x) => (x.error ? x : { error: null, feedback_ids: Object.fromEntries(Object.entries(x.feedback_ids).map(([k, v]) => [k, name(v)])) }));
  return { results: r, rows: rows.map((x) => ({ ...x, id: name(x.id), createdAt: 'T' })) };
}

test('the worker pool gives the inline results, and is used only above poolMinBytes', async (t) => {
  const real = createFlattenPool({ minThreads: 1, maxThreads: 2 });
  t.after(() => real.close());
  let runs = 0;
  const pool: FlattenPool = { threads: real.threads, run: (b, l) => { runs++; return real.run(b, l); }, close: () => real.close() };

  const inline = setup();
  const pooled = setup();
  const events: unknown[] = [];
  for (let i = 0; i < 300; i++) {
    const id = inline.addInference(i % 7 === 0 ? OTHER : KEY);
    events.push(i % 5 === 0
      ? { id, feedback: { bad: [i] } }
      // optimize given on odd events, left out on even ones (then the metric's fixed direction applies).
      : { id, tags: { n: String(i) }, optimize: i % 2 ? 'min' : undefined, feedback: { q: { s: { score: i % 3 === 0, reason: `r${i}` } }, v: i, c: `c${i}`, t: i % 11 === 0 ? 'x' : i } });
  }
  // Same inferences, separate metric stores and row sinks: the two paths see the same world.
  pooled.ctx.lookup = inline.ctx.lookup;
  const text = JSON.stringify(events);
  const a = await handleFeedbackBytes(Buffer.from(text), { ...inline.ctx, pool, limits: { poolMinBytes: text.length + 1 } });
  assert.equal(runs, 0, 'below the threshold the pool is not used');
  const b = await handleFeedbackBytes(Buffer.from(text), { ...pooled.ctx, pool, limits: { poolMinBytes: text.length } });
  assert.equal(runs, 1, 'at the threshold the pool is used');
  assert.deepEqual(normalise(b, pooled.rows), normalise(a, inline.rows));
  assert.equal(a.length, events.length);
  assert.ok(a.some((x) => x.error?.message.includes('metric t is float; got comment')), 'type conflicts happen in this batch');
  assert.ok(inline.rows.length > 500);

  // Request-level errors come back the same way from the worker.
  const big = { ...pooled.ctx, pool, limits: { poolMinBytes: 1, maxEventsPerRequest: 1 } };
  await assert.rejects(handleFeedbackBytes(Buffer.from('{"a":1}'), big), { code: 'invalid_body' });
  await assert.rejects(handleFeedbackBytes(Buffer.from('[{},{}]'), big), { code: 'invalid_body', message: 'at most 1 feedback events per request; got 2' });
  await assert.rejects(handleFeedbackBytes(Buffer.from('[1,'), big), { code: 'invalid_json' });
  assert.equal(runs, 4);
});

test('metric definitions are per key: another key neither inherits a type nor learns that the metric exists', async () => {
  const metrics = fakeMetrics();
  const a = setup({ keyId: KEY, metrics });
  const b = setup({ keyId: OTHER, metrics });
  const idA = a.addInference(KEY);
  const idB = b.addInference(OTHER);
  ok((await handleFeedback([{ id: idA, feedback: { secret_metric: true } }], a.ctx))[0]);
  // Key B's first value for the same name is its own, of another type: accepted, no mention of A's metric.
  ok((await handleFeedback([{ id: idB, feedback: { secret_metric: 0.5 } }], b.ctx))[0]);
  assert.equal(err((await handleFeedback([{ id: idA, feedback: { secret_metric: 0.5 } }], a.ctx))[0]),
    "feedback.secret_metric: metric secret_metric is boolean; got float (a metric's type is fixed by its first value)");
  assert.deepEqual([metrics.has('secret_metric', KEY), metrics.has('secret_metric', OTHER)], [true, true]);
});

test('optimize is fixed per metric by its first value; left out, the metric keeps its direction; comments have none', async () => {
  const s = setup();
  const id = s.addInference();
  const [first, clash, omitted, comment] = await handleFeedback([
    { id, feedback: { latency_ok: 0.4, note: 'x' }, optimize: 'min' },
    { id, feedback: { latency_ok: 0.2 }, optimize: 'max' },
    { id, feedback: { latency_ok: 0.3 } },
    { id, feedback: { note: 'y' }, optimize: 'max' },
  ], s.ctx);
  ok(first); ok(omitted); ok(comment);
  assert.equal(err(clash), 'feedback.latency_ok: metric latency_ok is optimized "min"; got optimize "max" (a metric\'s direction is fixed by its first value; send "min" or leave optimize out)');
  assert.deepEqual(s.rows.map((r) => [r.metric, r.optimize]), [['latency_ok', 'min'], ['note', 'min'], ['latency_ok', 'min'], ['note', 'max']]);
  const fresh = setup();
  const id2 = fresh.addInference();
  ok((await handleFeedback([{ id: id2, feedback: { f: 1 } }], fresh.ctx))[0]);
  assert.deepEqual([...fresh.metrics.defs.values()], [{ type: 'float', optimize: 'max' }], 'a new metric without optimize is "max"');
});

test('the database unavailable: per-event 503 results, never "does not exist", and the batch is still HTTP 200 material', async () => {
  const s = setup();
  const known = s.addInference(); // in memory (not flushed): still answerable
  const flushed = uuidv7();
  s.ctx.lookup = async (id) => {
    if (id === known) return { id, keyId: KEY, servedModel: 'openai/gpt-4o', createdAt: new Date().toISOString() };
    throw new Error('connect ECONNREFUSED 127.0.0.1:5432');
  };
  s.metrics.load = async () => { throw new Error('connect ECONNREFUSED'); };
  const res = await handleFeedback([{ id: flushed, feedback: { m: 1 } }, { id: known, feedback: { m: 1 } }, { id: 'nope', feedback: {} }], s.ctx);
  assert.equal(res.length, 3);
  for (const r of res.slice(0, 2)) {
    assert.ok(r.feedback_ids === null && r.error.status_code === 503, JSON.stringify(r));
    assert.doesNotMatch(r.error.message, /does not exist/);
    assert.match(r.error.message, /retry/);
  }
  assert.equal(err(res[2]), 'id must be a UUID string; got "nope"');
  assert.equal(s.rows.length, 0);

  // Types readable but a new metric cannot be claimed: that event gets 503, one with known metrics passes.
  const t2 = setup({ metrics: fakeMetrics({ known_m: 'float' }) });
  const id = t2.addInference();
  t2.metrics.claim = async () => { throw new Error('database is locked'); };
  const [a, b] = await handleFeedback([{ id, feedback: { new_m: true } }, { id, feedback: { known_m: 2 } }], t2.ctx);
  assert.ok(a?.error?.status_code === 503);
  ok(b);
});

test('an inference another replica answered moments ago, its record not flushed yet, is looked for again: stored, not "does not exist"', async () => {
  const s = setup();
  s.ctx.lateWithinMs = () => 1000;
  // Replica A's record of `late` lands 300 ms after the event reaches this replica.
  const late = uuidv7();
  const lands = Date.now() + 300;
  const inner = s.ctx.lookup;
  s.ctx.lookup = async (id) => (id === late && Date.now() >= lands ? { id, keyId: KEY, servedModel: 'openai/gpt-4o', createdAt: new Date().toISOString() } : inner(id));
  const unknown = uuidv7();
  const old = '01a20958-c42c-7ca1-bd54-18ce92424ad0'; // minted days ago: not waited for
  let t = Date.now();
  const res = await handleFeedback([{ id: late, feedback: { m: 1 } }, { id: unknown, feedback: { m: 1 } }, { id: old, feedback: { m: 1 } }], s.ctx);
  ok(res[0]!); // before: 'does not exist', and never stored
  assert.equal(s.rows.length, 1);
  assert.equal(err(res[1]), `Inference ID ${unknown} does not exist`);
  assert.equal(err(res[2]), `Inference ID ${old} does not exist`);
  let took = Date.now() - t;
  assert.ok(took >= 1000 && took < 1500, `the recent unknown id waited lateWithinMs, no more (${took} ms)`);
  assert.equal(s.lookups.filter((id) => id === old).length, 1, 'an old id is looked up once');
  // Another key's recent inference takes as long as an unknown id: the wait does not reveal it exists.
  const theirs = s.addInference(OTHER);
  t = Date.now();
  assert.equal(err((await handleFeedback([{ id: theirs, feedback: { m: 1 } }], s.ctx))[0]), `Inference ID ${theirs} does not exist`);
  took = Date.now() - t;
  assert.ok(took >= 1000 && took < 1500, `another key's inference answered after the same wait (${took} ms)`);
});

test('the write queue\'s room: events past it answer 503, also when other requests took room during a claim', async () => {
  const s = setup();
  const id = s.addInference();
  // 4 rows of room when the request starts, 2 once its new metrics are claimed (another request queued two).
  const room = [4, 2];
  s.ctx.room = () => ({ rows: room.shift() ?? 0, bytes: Infinity });
  const r = await handleFeedback([
    { id, feedback: { a: 1, b: 2 } }, { id, feedback: { c: true } }, { id, feedback: { d: 'x', e: 'y' } }, { id, feedback: {} },
  ], s.ctx);
  ok(r[0]); ok(r[3]);
  for (const late of [r[1], r[2]]) {
    assert.equal(late!.error?.status_code, 503);
    assert.match(late!.error!.message, /write queue is full/);
  }
  assert.deepEqual(s.rows.map((x) => x.metric), ['a', 'b']);
  assert.equal(s.metrics.has('d'), false, 'an event refused for room before its claim fixes no metric');
});

test('the write queue\'s room in bytes: an event past max_queue_bytes answers 503 (the queue would drop its oldest rows)', async () => {
  const s = setup();
  const id = s.addInference();
  // Rows to spare, 1,000 estimated bytes: a 400-character comment is about 600 of them (feedbackBytes).
  s.ctx.room = () => ({ rows: 100, bytes: 1000 });
  const long = 'x'.repeat(400);
  const r = await handleFeedback([{ id, feedback: { a: long } }, { id, feedback: { b: long } }, { id, feedback: { c: 1 } }], s.ctx);
  ok(r[0]); ok(r[2]);
  assert.equal(r[1]!.error?.status_code, 503);
  assert.match(r[1]!.error!.message, /write queue is full/);
  assert.deepEqual(s.rows.map((x) => x.metric), ['a', 'c']);
});
