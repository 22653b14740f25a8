// Writes the request path triggers in the background (key last-used times, a feedback metric's first
// definition) run on the store's write thread: while another process holds SQLite's write lock for
// 1.5 s, the event loop keeps turning (before: the main connection's busy handler slept in the event
// loop for as long as the lock was held, up to the 5 s busy timeout).
import assert from 'node:assert/strict';
import { join } from 'node:path';
import { test } from 'node:test';
import { Worker } from 'node:worker_threads';
import { startMockOpenAI } from './mocks/index.ts';
import { startTestGateway } from './helpers/gateway.ts';

const ADMIN = 'admin-key-for-writes-off-the-event-loop';

/** Holds SQLite's write lock on `path` for `ms` from another thread (its own connection); resolves once held. */
function holdWriteLock(path: string, ms: number): Promise<{ released: Promise<void> }> {
  const w = new Worker(`
    const { DatabaseSync } = require('node:sqlite');
    const { parentPort, workerData } = require('node:worker_threads');
    const db = new DatabaseSync(workerData.path, { timeout: 5000 });
    db.exec('BEGIN IMMEDIATE');
    db.exec("UPDATE api_keys SET name = name");
    parentPort.postMessage('held');
    Atomics.wait(new Int32Array(new SharedArrayBuffer(4)), 0, 0, workerData.ms);
    db.exec('COMMIT');
    db.close();
  `, { eval: true, workerData: { path, ms } });
  const released = new Promise<void>((ok) => w.once('exit', () => ok()));
  return new Promise((ok, fail) => { w.once('message', () => ok({ released })); w.once('error', fail); });
}

test('key last-used times and new metric definitions never stall the event loop on a locked SQLite', async (t) => {
  const oa = await startMockOpenAI();
  const gw = await startTestGateway({
    providers: [{ id: 'mockai', format: 'openai-chat', base_url: oa.url }],
    gateway: { auth: { enabled: true, admin_key: ADMIN }, storage: { writer: { batch_size: 1000, flush_ms: 60_000, max_queue: 10000 } } },
  });
  t.after(async () => { await gw.stop(); await oa.close(); });
  const created = await fetch(`${gw.url}/admin/keys`, { method: 'POST', headers: { authorization: `Bearer ${ADMIN}`, 'content-type': 'application/json' }, body: JSON.stringify({ name: 'a' }) });
  const key = ((await created.json()) as { key: string }).key;
  const auth = { authorization: `Bearer ${key}`, 'content-type': 'application/json' };
  const r = await fetch(`${gw.url}/v1/chat/completions`, { method: 'POST', headers: auth, body: JSON.stringify({ model: 'mockai/test-model', messages: [{ role: 'user', content: 'hi' }] }) });
  const id = ((await r.json()) as { id: string }).id;

  const lock = await holdWriteLock(join(gw.dir, 'gateway.db'), 1500);
  let maxGap = 0;
  let last = performance.now();
  const ticker = setInterval(() => { const now = performance.now(); maxGap = Math.max(maxGap, now - last); last = now; }, 5);
  try {
    const touches = gw.services.keys!.flushTouches();
    const fb = fetch(`${gw.url}/v1/feedback`, { method: 'POST', headers: auth, body: JSON.stringify([{ id, feedback: { brand_new_metric: true } }]) });
    const [, res] = await Promise.all([touches, fb]);
    const body = (await res.json()) as Array<{ error: unknown }>;
    assert.equal(body[0]?.error, null, JSON.stringify(body));
    await lock.released;
  } finally {
    clearInterval(ticker);
  }
  t.diagnostic(`longest event-loop gap while the lock was held: ${maxGap.toFixed(0)} ms`);
  assert.ok(maxGap < 400, `the event loop stalled for ${maxGap.toFixed(0)} ms`);
  const stored = (await gw.services.store!.listKeys())[0];
  assert.ok(stored?.lastUsedAt, 'the last-used time was written once the lock was released');
});
