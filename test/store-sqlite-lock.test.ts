// Statements on a SQLite connection meeting another process's write lock wait for it on a timer, not in
// SQLite's busy handler: the event loop keeps turning while the lock is held (before: every write on the
// main connection slept in the loop for as long as the lock was held, up to the 5 s busy timeout), the
// writes land once it is released, and a lock held past the bound fails the write as the database being
// unavailable (a 503 to retry), never as a row's fault.
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { test } from 'node:test';
import { KeyAdmin } from '../src/auth/admin.ts';
import { classifyStoreError } from '../src/store/errors.ts';
import { SqliteStore } from '../src/store/sqlite.ts';
import type { InferenceRecord } from '../src/store/types.ts';
import { uuidv7 } from '../src/util/uuid.ts';
import { holdSqliteLock, longestLoopGap } from './helpers/sqlite-lock.ts';

/** Well under the time the lock is held (3 s), well over what a loaded machine's loop pauses by itself. */
const MAX_GAP_MS = 1000;

const rec = (): InferenceRecord => ({
  id: uuidv7(), createdAt: new Date().toISOString(), keyId: null, route: '/v1/chat/completions', clientFormat: 'openai-chat',
  requestedModel: 'p/m', servedModel: 'p/m', provider: 'p', attempts: [], status: 200, errorCode: null, latencyMs: 3, ttftMs: 1,
  stream: false, inputTokens: 1, outputTokens: 2, cacheReadTokens: 0, cacheWriteTokens: 0, reasoningTokens: 0, costUsd: '0.000005',
  finishReason: 'stop', metadata: null, extra: null, clientIp: null, requestBody: null, responseBody: null,
});

async function withStore(t: { after: (fn: () => Promise<void>) => void }, opts: { lockWaitMs?: number } = {}): Promise<{ store: SqliteStore; path: string }> {
  const dir = mkdtempSync(join(tmpdir(), 'gw-lock-'));
  const path = join(dir, 'gateway.db');
  const store = new SqliteStore({ path, ...opts });
  await store.migrate();
  t.after(async () => { await store.close(); rmSync(dir, { recursive: true, force: true }); });
  return { store, path };
}

test('key writes, a transaction and record writes wait for another process\'s lock without stalling the event loop, then land', async (t) => {
  const { store, path } = await withStore(t);
  const admin = new KeyAdmin(store);
  const old = await admin.createKey({ name: 'old' });
  const r = rec();
  const lock = await holdSqliteLock(path, 3000);
  const started = performance.now();
  const { value: created, gapMs } = await longestLoopGap(() => Promise.all([
    admin.createKey({ name: 'created while locked' }),
    store.revokeKey(old.record.id, new Date().toISOString()),
    store.sql.run('UPDATE api_keys SET name = ? WHERE id = ?', ['renamed while locked', old.record.id]),
    store.sql.tx(async (q) => q.run('INSERT INTO key_grace (key_id, hash, valid_until) VALUES (?, ?, ?)', [old.record.id, 'h', '2999-01-01T00:00:00.000Z'])),
    store.touchKeys([{ id: old.record.id, at: new Date().toISOString() }]),
    store.insertInferences([r]),
  ]));
  const waited = performance.now() - started;
  await lock.released;
  t.diagnostic(`writes answered after ${waited.toFixed(0)} ms; longest event-loop gap ${gapMs.toFixed(0)} ms`);
  assert.ok(gapMs < MAX_GAP_MS, `the event loop stalled for ${gapMs.toFixed(0)} ms while the lock was held`);
  assert.ok(waited >= 2500, `the writes waited for the lock (${waited.toFixed(0)} ms)`);
  const keys = await store.listKeys();
  assert.deepEqual(keys.map((k) => k.name).sort(), ['created while locked', 'renamed while locked']);
  assert.equal(keys.find((k) => k.id === created[0].record.id)?.revokedAt, null);
  const was = keys.find((k) => k.id === old.record.id)!;
  assert.ok(was.revokedAt !== null && was.lastUsedAt !== null);
  assert.equal((await store.sql.all('SELECT hash FROM key_grace'))[0]?.hash, 'h');
  assert.equal((await store.getInference(r.id))?.servedModel, 'p/m');
});

test('a lock held past the bound fails the write as the database being unavailable, without stalling, and changes nothing', async (t) => {
  const { store, path } = await withStore(t, { lockWaitMs: 600 });
  const admin = new KeyAdmin(store);
  const lock = await holdSqliteLock(path, 3000);
  const { value: errors, gapMs } = await longestLoopGap(() => Promise.all([
    admin.createKey({ name: 'refused' }).then(() => null, (e: unknown) => e),
    store.sql.tx(async (q) => q.run('DELETE FROM api_keys')).then(() => null, (e: unknown) => e),
  ]));
  t.diagnostic(`longest event-loop gap ${gapMs.toFixed(0)} ms`);
  assert.ok(gapMs < MAX_GAP_MS, `the event loop stalled for ${gapMs.toFixed(0)} ms`);
  for (const e of errors) {
    assert.ok(e instanceof Error, 'the write failed');
    assert.equal(classifyStoreError(e), 'unavailable');
    assert.match(e.message, /the database stayed locked by another connection for 0\.6 s/);
  }
  await lock.released;
  assert.deepEqual(await store.listKeys(), []);
  await admin.createKey({ name: 'after the lock' });
  assert.equal((await store.listKeys()).length, 1, 'the connection works once the lock is released');
});

test('transactions on the shared connection run one at a time; statements issued meanwhile are not part of one; a nested tx joins', async (t) => {
  const { store } = await withStore(t);
  const sql = store.sql;
  await sql.run('CREATE TABLE gate_probe (k TEXT PRIMARY KEY)');
  const pause = () => new Promise((r) => setTimeout(r, 30));
  // Two transactions begun in the same tick, each awaiting between its statements (before: the second
  // failed with "cannot start a transaction within a transaction").
  const tx = (k: string) => sql.tx(async (q) => { await q.run('INSERT INTO gate_probe (k) VALUES (?)', [`${k}1`]); await pause(); await q.run('INSERT INTO gate_probe (k) VALUES (?)', [`${k}2`]); });
  const both = await Promise.allSettled([tx('a'), tx('b')]);
  assert.deepEqual(both.map((r) => r.status), ['fulfilled', 'fulfilled'], JSON.stringify(both));
  // A write issued while a transaction awaits, which then fails: the write is its own, not rolled back with it
  // (before: it ran inside the open transaction and was lost with it, its caller told it was done).
  const failing = sql.tx(async (q) => { await q.run("INSERT INTO gate_probe (k) VALUES ('in-tx')"); await pause(); throw new Error('the transaction fails'); });
  const outside = store.insertKey({ id: 'k-outside', name: 'outside', hash: 'h', createdAt: new Date().toISOString(), expiresAt: null, revokedAt: null, lastUsedAt: null, allowedModels: [], budgetUsd: null, budgetPeriod: null, rpmLimit: null, tpmLimit: null } as never);
  const plain = sql.run("INSERT INTO gate_probe (k) VALUES ('outside')");
  await assert.rejects(failing, /the transaction fails/);
  await outside; await plain;
  assert.equal((await store.getKey('k-outside'))?.name, 'outside');
  const keys = (await sql.all('SELECT k FROM gate_probe ORDER BY k')).map((r) => r.k);
  assert.deepEqual(keys, ['a1', 'a2', 'b1', 'b2', 'outside']);
  // A tx inside a transaction's function joins it.
  await sql.tx(async (q) => { await q.tx(async (qq) => { await qq.run("INSERT INTO gate_probe (k) VALUES ('nested')"); }); });
  assert.equal((await sql.all("SELECT COUNT(*) AS n FROM gate_probe WHERE k = 'nested'"))[0]?.n, 1);
});
