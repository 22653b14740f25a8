// The record writer against a real SQLite store wrapped to fail on demand: flush by size and by time,
// bounded memory with counted drops while the store is down, recovery, lookups of unwritten ids and close().
import assert from 'node:assert/strict';
import { setTimeout as sleep } from 'node:timers/promises';
import { test, type TestContext } from 'node:test';
import { feedbackBytes } from '../src/records/queue.ts';
import { RecordWriter } from '../src/records/writer.ts';
import { SqliteStore } from '../src/store/sqlite.ts';
import type { FeedbackRow, InferenceRecord } from '../src/store/types.ts';
import { uuidv7 } from '../src/util/uuid.ts';

/** A SQLite store whose batch writes (and ping) throw while `down` is set and wait `delayMs` first, counting the calls. */
class FlakyStore extends SqliteStore {
  down = false;
  calls = 0;
  delayMs = 0;
  override async insertInferences(recs: InferenceRecord[]): Promise<void> {
    this.calls++;
    if (this.delayMs > 0) await sleep(this.delayMs);
    if (this.down) throw new Error('database unavailable');
    return super.insertInferences(recs);
  }
  override async insertFeedback(rows: FeedbackRow[]): Promise<void> {
    if (this.down) throw new Error('database unavailable');
    return super.insertFeedback(rows);
  }
  /** A database that is down answers nothing: the writer's probe fails too, so it backs off instead of isolating rows. */
  override async ping(): Promise<void> {
    if (this.down) throw new Error('database unavailable');
    return super.ping();
  }
}

async function flaky(): Promise<FlakyStore> {
  const s = new FlakyStore({ path: ':memory:' });
  await s.migrate();
  return s;
}

const rec = (over: Partial<InferenceRecord> = {}): InferenceRecord => ({
  id: uuidv7(), createdAt: new Date().toISOString(), keyId: 'k', route: '/v1/chat/completions', clientFormat: 'openai-chat',
  requestedModel: 'openai/m', servedModel: 'openai/m', provider: 'openai', attempts: [], status: 200, errorCode: null,
  latencyMs: 5, ttftMs: null, stream: false, inputTokens: 1, outputTokens: 1, cacheReadTokens: 0, cacheWriteTokens: 0,
  reasoningTokens: 0, costUsd: '0.001', finishReason: 'stop', metadata: null, extra: null, clientIp: null, requestBody: null,
  responseBody: null, ...over,
});

/** The writer's main counters (stats() has more: bytes, rejected, repaired ...). */
const counts = (w: RecordWriter) => { const s = w.stats(); return { queued: s.queued, dropped: s.dropped, flushed: s.flushed, failures: s.failures }; };

const count = async (s: SqliteStore): Promise<number> => (await s.listInferences({ limit: 100_000 })).length;

async function until(cond: () => Promise<boolean> | boolean, ms = 3000): Promise<void> {
  const end = Date.now() + ms;
  while (!(await cond())) {
    if (Date.now() > end) assert.fail('condition not reached in time');
    await sleep(5);
  }
}

test('flushes full batches at once and the rest on close', async (t) => {
  const store = await flaky();
  t.after(() => store.close());
  const w = new RecordWriter({ store, batchSize: 5, flushMs: 60_000 });
  for (let i = 0; i < 12; i++) w.enqueue(rec());
  await until(async () => (await count(store)) === 10);
  assert.deepEqual(counts(w), { queued: 2, dropped: 0, flushed: 10, failures: 0 });
  await w.close();
  assert.equal(await count(store), 12);
  assert.deepEqual(counts(w), { queued: 0, dropped: 0, flushed: 12, failures: 0 });
  w.enqueue(rec()); // after close: counted, never thrown
  assert.equal(w.stats().dropped, 1);
});

test('flushes a partial batch after flushMs', async (t) => {
  const store = await flaky();
  t.after(() => store.close());
  const w = new RecordWriter({ store, batchSize: 1000, flushMs: 30 });
  t.after(() => w.close());
  for (let i = 0; i < 3; i++) w.enqueue(rec());
  assert.equal(await count(store), 0);
  await until(async () => (await count(store)) === 3);
  assert.equal(w.stats().flushed, 3);
});

test('a flush writes what was queued when it was called, not the records that keep arriving during its writes', async (t) => {
  const store = await flaky();
  t.after(() => store.close());
  store.delayMs = 20;
  const w = new RecordWriter({ store, batchSize: 1000, flushMs: 60_000 });
  t.after(() => w.close());
  for (let i = 0; i < 5; i++) w.enqueue(rec());
  const first = w.flush();
  // Arrivals during the write: draining until empty would chase these with a commit of a few rows each.
  for (let i = 0; i < 3; i++) { await sleep(5); w.enqueue(rec()); }
  await first;
  assert.equal(store.calls, 1);
  assert.equal(await count(store), 5);
  assert.equal(w.stats().queued, 3);
  // A flush asked while a write runs makes one more pass after it, so what it was called for is written.
  const running = w.flush();
  w.enqueue(rec());
  const second = w.flush();
  await Promise.all([running, second]);
  assert.equal(await count(store), 9);
  assert.equal(store.calls, 3);
  assert.deepEqual(counts(w), { queued: 0, dropped: 0, flushed: 9, failures: 0 });
});

test('a failing store: memory stays bounded, drops are counted (oldest first), then it recovers', async (t) => {
  const store = await flaky();
  t.after(() => store.close());
  const errors: unknown[] = [];
  const w = new RecordWriter({ store, batchSize: 10, flushMs: 20, maxQueue: 50, maxBackoffMs: 40, onError: (e) => errors.push(e) });
  t.after(() => w.close());
  store.down = true;
  const recs = Array.from({ length: 200 }, () => rec());
  for (const r of recs) w.enqueue(r);
  await until(() => w.stats().failures >= 2);
  const s = w.stats();
  assert.equal(s.queued, 50);
  assert.equal(s.dropped, 150);
  assert.equal(s.flushed, 0);
  assert.match(String(errors[0]), /database unavailable/);
  const callsWhileDown = store.calls;
  await sleep(60);
  assert.ok(store.calls - callsWhileDown <= 3, 'backs off instead of hammering the store');

  store.down = false;
  await until(async () => (await count(store)) === 50);
  const stored = new Set((await store.listInferences({ limit: 1000 })).map((r) => r.id));
  assert.deepEqual([...stored].sort(), recs.slice(150).map((r) => r.id).sort(), 'the newest records survive');
  const after = w.stats();
  assert.deepEqual([after.queued, after.dropped, after.flushed], [0, 150, 50]);
  assert.ok(after.failures >= s.failures);
});

test('a timer tick during a slow failing write does not retry it before the back-off', async (t) => {
  const store = await flaky();
  store.down = true;
  store.delayMs = 150; // several ticks of the timer pass during each write
  const w = new RecordWriter({ store, batchSize: 1000, flushMs: 20, maxBackoffMs: 5000 });
  t.after(async () => { store.down = false; store.delayMs = 0; await w.close(); await store.close(); });
  w.enqueue(rec());
  await until(() => w.stats().failures === 1, 5000);
  await sleep(10); // the back-off after the first failure is 20 ms
  assert.equal(store.calls, 1);
});

test('unwritten ids answer before the flush (queued or in the batch being written); lookup falls back to the store', async (t) => {
  const store = await flaky();
  t.after(() => store.close());
  const w = new RecordWriter({ store, batchSize: 100, flushMs: 60_000 });
  const [a, b, c] = [rec({ servedModel: 'x/a' }), rec(), rec()];
  w.enqueue(a!);
  assert.deepEqual(w.recent(a!.id), { id: a!.id, keyId: 'k', servedModel: 'x/a', createdAt: a!.createdAt });
  assert.deepEqual(await w.lookup(a!.id), { id: a!.id, keyId: 'k', servedModel: 'x/a', createdAt: a!.createdAt });
  assert.equal(await count(store), 0);
  w.enqueue(b!);
  w.enqueue(c!);
  assert.equal(w.recent(c!.id)?.id, c!.id);
  // While the store is slow, the batch being written is still found in memory.
  store.delayMs = 200;
  const flushing = w.flush();
  await new Promise((r) => setTimeout(r, 50));
  assert.equal(w.stats().queued, 3, 'in flight');
  assert.equal(w.recent(b!.id)?.id, b!.id, 'found in the batch being written');
  await flushing;
  store.delayMs = 0;
  assert.equal(w.recent(a!.id), undefined, 'written: memory forgets it');
  assert.deepEqual(await w.lookup(a!.id), { id: a!.id, keyId: 'k', servedModel: 'x/a', createdAt: a!.createdAt });
  assert.equal(await w.lookup(uuidv7()), null);
  await w.close();
});

test('feedback rows are written; records with values no column can hold are repaired at enqueue, stored and flagged', async (t) => {
  const store = await flaky();
  t.after(() => store.close());
  const errors: unknown[] = [];
  const w = new RecordWriter({ store, batchSize: 100, flushMs: 60_000, onError: (e) => errors.push(e) });
  const r = rec();
  w.enqueue(r);
  const badCost = rec({ costUsd: 'twelve' });
  const badTime = rec({ createdAt: 'yesterday' });
  w.enqueue(badCost);
  w.enqueue(badTime);
  w.enqueueFeedback([{ id: uuidv7(), inferenceId: r.id, keyId: 'k', metric: 'thumbs', type: 'boolean', value: 'true', reason: null,
    tags: {}, optimize: 'max', createdAt: new Date().toISOString() }]);
  assert.equal(w.stats().repaired, 2);
  assert.equal(errors.length, 1, 'reported once per 10 s, with a count');
  assert.match(String(errors[0]), /1 record\(s\) had values no column can hold/);
  await w.close();
  assert.deepEqual(counts(w), { queued: 0, dropped: 0, flushed: 4, failures: 0 });
  const stored = new Map((await store.listInferences({ limit: 10 })).map((x) => [x.id, x]));
  assert.equal(stored.get(badCost.id)?.costUsd, '0');
  assert.deepEqual(stored.get(badCost.id)?.extra, { repaired: { costUsd: 'twelve' } });
  assert.deepEqual(stored.get(badTime.id)?.extra, { repaired: { createdAt: 'yesterday' } });
  const stats = await store.feedbackStats({ since: '2000-01-01T00:00:00Z', until: '2100-01-01T00:00:00Z' });
  assert.deepEqual(stats.map((x) => [x.model, x.metric, x.count, x.rate]), [['openai/m', 'thumbs', 1, 1]]);
});

test('close gives up after its timeout on a dead store and counts what was lost', async (t) => {
  const store = await flaky();
  t.after(() => store.close());
  store.down = true;
  const w = new RecordWriter({ store, batchSize: 10, flushMs: 10, maxBackoffMs: 20 });
  for (let i = 0; i < 7; i++) w.enqueue(rec());
  const started = Date.now();
  await w.close(150);
  assert.ok(Date.now() - started < 1000);
  const s = w.stats();
  assert.deepEqual([s.queued, s.dropped, s.flushed], [0, 7, 0]);
  assert.ok(s.failures >= 2, 'retried during close');
});

/** A writer bounded at 1 MiB of queue over a store that is down; the test's end brings the store back and closes both. */
async function outageWriter(t: TestContext): Promise<{ store: FlakyStore; w: RecordWriter }> {
  const store = await flaky();
  t.after(() => store.close());
  store.down = true;
  const w = new RecordWriter({ store, batchSize: 1000, flushMs: 20, maxQueue: 1_000_000, maxQueueBytes: 1024 * 1024, maxBackoffMs: 40 });
  t.after(async () => { store.down = false; await w.close(500); });
  return { store, w };
}

test('the queue is bounded by bytes too: with full bodies logged, an outage drops the oldest rows, counted, and memory stays under the bound', async (t) => {
  const { store, w } = await outageWriter(t);
  const body = 'b'.repeat(50_000); // about 100 KB a record with request and response logged
  const recs = Array.from({ length: 60 }, () => rec({ requestBody: body, responseBody: body }));
  for (const r of recs) w.enqueue(r);
  const s = w.stats();
  assert.ok(s.queuedBytes <= 1024 * 1024, `queued ${s.queuedBytes} bytes`);
  assert.equal(s.queued + s.dropped, 60);
  assert.ok(s.dropped >= 49, `dropped ${s.dropped}`);
  // The newest survive (oldest first out), and are written when the store is back.
  store.down = false;
  await w.flush();
  const stored = new Set((await store.listInferences({ limit: 100 })).map((r) => r.id));
  assert.equal(stored.size, s.queued);
  for (const r of recs.slice(60 - s.queued)) assert.ok(stored.has(r.id));
});

test('feedback room counts both bounds: rows and estimated bytes, as the queue sizes them', async (t) => {
  const { w } = await outageWriter(t);
  const row = (value: string): FeedbackRow => ({ id: uuidv7(), inferenceId: uuidv7(), keyId: 'k', metric: 'note', type: 'comment', value, reason: null, tags: {}, optimize: 'max', createdAt: new Date().toISOString() });
  const before = w.feedbackRoom();
  assert.deepEqual(before, { rows: 1_000_000, bytes: 1024 * 1024 });
  const r = row('c'.repeat(100_000));
  w.enqueueFeedback([r]);
  assert.deepEqual(w.feedbackRoom(), { rows: 999_999, bytes: 1024 * 1024 - feedbackBytes(r) });
  // Filled to the bound (the oldest dropped): less room than one more such row takes.
  w.enqueueFeedback(Array.from({ length: 12 }, () => row('c'.repeat(100_000))));
  const left = w.feedbackRoom().bytes;
  assert.ok(left >= 0 && left < feedbackBytes(r), `room ${left}`);
});

test('a failing records lane does not hold the feedback lane back', async (t) => {
  const store = await flaky();
  t.after(() => store.close());
  const w = new RecordWriter({ store, batchSize: 100, flushMs: 60_000, maxBackoffMs: 60_000 });
  t.after(() => w.close(200));
  // Records fail (an outage of their table only), feedback is accepted.
  store.insertInferences = async () => { throw Object.assign(new Error('could not extend file'), { code: '53100' }); };
  w.enqueue(rec());
  w.enqueueFeedback([{ id: uuidv7(), inferenceId: uuidv7(), keyId: 'k', metric: 'm', type: 'float', value: '1', reason: null, tags: {}, optimize: 'max', createdAt: new Date().toISOString() }]);
  await w.flush();
  const s = w.stats();
  assert.deepEqual([s.queued, s.flushed, s.failures, s.dropped], [1, 1, 1, 0]);
});

test('an unclassified write error while the database does not even answer a ping is an outage: rows kept, back-off, no hang', async (t) => {
  const store = await flaky();
  t.after(() => store.close());
  const w = new RecordWriter({ store, batchSize: 100, flushMs: 60_000, maxBackoffMs: 60_000 });
  t.after(() => w.close(200));
  store.insertInferences = async () => { throw new Error('something odd'); };
  store.ping = () => new Promise(() => {}); // a blackholed host: no answer at all
  w.enqueue(rec()); w.enqueue(rec());
  const t0 = Date.now();
  await w.flush();
  assert.ok(Date.now() - t0 < 5000, 'the probe gives up after 2 s');
  const s = w.stats();
  assert.deepEqual([s.queued, s.dropped, s.rejected, s.consecutiveFailures], [2, 0, 0, 1]);
});

test('an outage met while isolating a refused batch puts back exactly the unwritten rows, in order, once', async (t) => {
  const store = await flaky();
  t.after(() => store.close());
  const w = new RecordWriter({ store, batchSize: 100, flushMs: 60_000, maxBackoffMs: 60_000 });
  t.after(() => w.close(200));
  const recs = [rec(), rec(), rec(), rec()];
  let call = 0;
  const real = SqliteStore.prototype.insertInferences.bind(store);
  store.insertInferences = async (b) => {
    call++;
    if (call === 1) throw Object.assign(new Error('value out of range'), { code: '22003' }); // a row error: isolate
    if (call === 2) return real(b);                                                           // first half lands
    throw Object.assign(new Error('connection lost'), { code: '08006' });                     // then an outage
  };
  for (const r of recs) w.enqueue(r);
  await w.flush();
  const s = w.stats();
  assert.deepEqual([s.queued, s.flushed, s.dropped, s.rejected], [2, 2, 0, 0]);
  store.insertInferences = real;
  void w.close(1000); // retries at once, past the back-off
  await until(async () => (await count(store)) === 4);
  assert.equal(w.stats().flushed, 4, 'each row written once');
});

test('the byte bound counts what metadata and extra hold: large extra objects (a router field any request can carry) cannot keep an outage queue past it', async (t) => {
  const { w } = await outageWriter(t);
  // About 100 KB a record in extra (nested, as JSON gives it), bodies not logged; and one in metadata.
  const extra = () => ({ team: 'x', notes: Array.from({ length: 100 }, (_, i) => ({ i, text: 'e'.repeat(1000) })) });
  for (let i = 0; i < 60; i++) w.enqueue(rec({ extra: extra() }));
  w.enqueue(rec({ metadata: { note: 'm'.repeat(200_000) } }));
  const s = w.stats();
  assert.ok(s.queuedBytes <= 1024 * 1024, `queued ${s.queuedBytes} bytes`);
  assert.equal(s.queued + s.dropped, 61);
  assert.ok(s.dropped >= 49, `dropped ${s.dropped}`);
  // What is taken and put back during the outage is counted as it was queued: the estimate does not drift.
  await sleep(150);
  const later = w.stats();
  assert.equal(later.queued + later.dropped, 61);
  assert.ok(later.queuedBytes <= 1024 * 1024 && later.queuedBytes > 0, `queued ${later.queuedBytes} bytes`);
});
