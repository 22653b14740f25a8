// The write thread: batches inserted off the event loop are read back by the main store; a dead
// thread hands writes back to the main store instead of losing them.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { openStore } from '../src/store/open.ts';
import { WriteThread, withWriteThread } from '../src/store/write-thread.ts';
import type { InferenceRecord, Store } from '../src/store/types.ts';
import { uuidv7 } from '../src/util/uuid.ts';

const rec = (): InferenceRecord => ({
  id: uuidv7(), createdAt: new Date().toISOString(), keyId: null, route: '/v1/chat/completions', clientFormat: 'openai-chat',
  requestedModel: 'p/m', servedModel: 'p/m', provider: 'p', attempts: [], status: 200, errorCode: null, latencyMs: 3, ttftMs: 1,
  stream: false, inputTokens: 1, outputTokens: 2, cacheReadTokens: 0, cacheWriteTokens: 0, reasoningTokens: 0, costUsd: '0.000005',
  finishReason: 'stop', metadata: null, extra: null, clientIp: null, requestBody: null, responseBody: null,
});

/** A SQLite store in a temp dir with a write thread in front; cleaned up after `fn`. */
async function withThreadStore(fn: (x: { store: Store; thread: WriteThread; s: Store }) => Promise<void>): Promise<void> {
  const dir = mkdtempSync(join(tmpdir(), 'gw-wt-'));
  const opts = { sqlitePath: join(dir, 'g.db') };
  const store = await openStore(opts);
  const thread = new WriteThread(opts);
  try {
    await thread.ready();
    await fn({ store, thread, s: withWriteThread(store, thread) });
  } finally { await thread.close(); await store.close(); rmSync(dir, { recursive: true, force: true }); }
}

test('inserts through the thread are visible to the main store, and a dead thread falls back', async () => {
  await withThreadStore(async ({ store, thread, s }) => {
    const batch = [rec(), rec(), rec()];
    await s.insertInferences(batch);
    for (const r of batch) assert.equal((await store.getInference(r.id))?.servedModel, 'p/m');
    await thread.close();
    assert.equal(thread.alive, false);
    const late = rec();
    await s.insertInferences([late]);
    assert.ok(await store.getInference(late.id));
  });
});

test('records cross the thread as tuples and land with every field exactly as queued', async () => {
  await withThreadStore(async ({ store, s }) => {
    const full: InferenceRecord = {
      ...rec(), createdAt: '2026-02-28T23:59:59.999Z', keyId: 'k-1', clientFormat: 'anthropic-messages', requestedModel: 'a/b',
      attempts: [{ provider: 'x', model: 'm1', status: 503, error: 'upstream_error', latencyMs: 7 }, { provider: 'p', model: 'm', status: 200, error: null, latencyMs: 2 }],
      status: 200, errorCode: null, latencyMs: 12, ttftMs: null, stream: true, inputTokens: 123456789, outputTokens: 42, cacheReadTokens: 3,
      cacheWriteTokens: 4, reasoningTokens: 5, costUsd: '123.000000000000000000001', finishReason: 'end_turn',
      metadata: { user: 'ü', nested: { a: [1, 2.5, null, true] } }, extra: { e: 'x' }, clientIp: '::1',
      requestBody: '{"model":"a/b","messages":[{"role":"user","content":"héllo \\"q\\" 🙂"}]}', responseBody: 'ok 🙂',
    };
    const failed: InferenceRecord = { ...rec(), servedModel: null, provider: null, status: 502, errorCode: 'no_route', costUsd: '0' };
    await s.insertInferences([full, failed]);
    const back = new Map((await store.listInferences({ limit: 10 })).map((r) => [r.id, r]));
    assert.deepEqual(back.get(full.id), full);
    assert.deepEqual(back.get(failed.id), failed);
    await s.insertInferences([full]); // a retried record is not a second row
    assert.equal((await store.listInferences({ limit: 10 })).length, 2);
  });
});

test('last-used times of keys are written by the thread, so the main connection never waits on the write lock', async () => {
  await withThreadStore(async ({ store, s }) => {
    await store.insertKey({ id: 'k1', name: 'n', hash: 'h'.repeat(64), createdAt: '2026-01-01T00:00:00.000Z', lastUsedAt: null, expiresAt: null,
      revokedAt: null, allowedModels: [], budgetUsd: null, budgetPeriod: null, rpmLimit: null, tpmLimit: null });
    const direct = store.touchKeys.bind(store);
    store.touchKeys = async () => { throw new Error('the main store must not write last-used times while the thread lives'); };
    try {
      await s.touchKeys([{ id: 'k1', at: '2026-03-05T00:00:00.000Z' }]);
    } finally { store.touchKeys = direct; }
    assert.equal((await store.getKey('k1'))?.lastUsedAt, '2026-03-05T00:00:00.000Z');
  });
});
