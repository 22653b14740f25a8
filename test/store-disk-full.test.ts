// SQLite on a full filesystem: the error reported is the real one ("database or disk is full"), never
// the "cannot rollback - no transaction is active" that an unconditional ROLLBACK after SQLite's own
// rollback used to put in its place; the writer classifies it as an outage (rows kept, back-off) and
// writes them once space is back. Uses a real 4 MiB tmpfs (an empty database takes 1 MiB in 16 KB
// pages) when the test may mount one (root, as on CI), else SQLite's max_page_count on an ordinary
// file as the stand-in; the output says which.
import assert from 'node:assert/strict';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { DatabaseSync } from 'node:sqlite';
import { test } from 'node:test';
import { RecordWriter } from '../src/records/writer.ts';
import { classifyStoreError } from '../src/store/errors.ts';
import { SqliteStore } from '../src/store/sqlite.ts';
import type { InferenceRecord } from '../src/store/types.ts';
import { uuidv7 } from '../src/util/uuid.ts';
import { smallFilesystem } from './helpers/small-fs.ts';

const rec = (body: string): InferenceRecord => ({
  id: uuidv7(), createdAt: new Date().toISOString(), keyId: 'k', route: '/v1/chat/completions', clientFormat: 'openai-chat',
  requestedModel: 'openai/m', servedModel: 'openai/m', provider: 'openai', attempts: [], status: 200, errorCode: null,
  latencyMs: 5, ttftMs: null, stream: false, inputTokens: 1, outputTokens: 1, cacheReadTokens: 0, cacheWriteTokens: 0,
  reasoningTokens: 0, costUsd: '0.001', finishReason: 'stop', metadata: null, extra: null, clientIp: null, requestBody: body,
  responseBody: null,
});

test('a full disk is reported as a full disk, classified as an outage, and the rows are written once space is back', async (t) => {
  const fs = smallFilesystem(4);
  const dir = fs?.dir ?? mkdtempSync(join(tmpdir(), 'gw-full-'));
  mkdirSync(join(dir, 'db'), { recursive: true });
  // Something else on the same filesystem, removed later to free space as an operator would.
  const ballast = join(dir, 'ballast');
  writeFileSync(ballast, Buffer.alloc(fs ? 1536 * 1024 : 1));
  const path = join(dir, 'db', 'gw.db');
  const store = new SqliteStore({ path });
  const extra: DatabaseSync[] = [];
  t.after(async () => {
    for (const db of extra) db.close();
    await store.close();
    if (fs) fs.cleanup(); else rmSync(dir, { recursive: true, force: true });
  });
  await store.migrate();
  let limitPages: ((n: number) => void) | null = null;
  if (!fs) {
    // Stand-in: a page limit makes SQLite answer SQLITE_FULL exactly as a full filesystem does.
    const db = new DatabaseSync(path);
    extra.push(db);
    const pages = Number((db.prepare('PRAGMA page_count').get() as { page_count: number }).page_count);
    limitPages = (n) => db.exec(`PRAGMA max_page_count = ${n}`);
    limitPages(pages + 8);
  }
  t.diagnostic(fs ? 'real 4 MiB tmpfs' : 'max_page_count stand-in (mount not permitted here)');

  const body = 'x'.repeat(64 * 1024);
  let failure: unknown = null;
  for (let i = 0; i < 64 && failure === null; i++) {
    try { await store.insertInferences(Array.from({ length: 4 }, () => rec(body))); } catch (e) { failure = e; }
  }
  assert.ok(failure, 'the filesystem filled up');
  assert.match((failure as Error).message, /database or disk is full/);
  assert.doesNotMatch((failure as Error).message, /cannot rollback/);
  assert.equal(classifyStoreError(failure), 'unavailable');
  // Fill what SQLite's rollback gave back, with small rows, so the writer's batch below cannot fit.
  for (let i = 0; i < 400; i++) {
    try { await store.insertInferences([rec('y'.repeat(4096))]); } catch { break; }
  }

  // Through the writer: reported as such, rows kept (not isolated and dropped), back-off.
  const errors: string[] = [];
  const w = new RecordWriter({ store, batchSize: 100, flushMs: 20, maxBackoffMs: 40, onError: (e) => errors.push((e as Error).message) });
  const pending = Array.from({ length: 3 }, () => rec(body));
  for (const r of pending) w.enqueue(r);
  await w.flush();
  assert.match(errors[0] ?? '', /database or disk is full/);
  assert.deepEqual([w.stats().queued, w.stats().dropped, w.stats().rejected], [3, 0, 0]);

  // Space comes back: the operator removes other files (the ballast), or the page limit is lifted.
  rmSync(ballast, { force: true });
  if (limitPages) limitPages(1_000_000);
  const end = Date.now() + 5000;
  while (w.stats().queued > 0 && Date.now() < end) { await new Promise((r) => setTimeout(r, 20)); await w.flush(); }
  const res = await w.close(1000);
  assert.deepEqual([res.dropped, w.stats().dropped], [0, 0], errors.join('\n'));
  for (const r of pending) assert.ok(await store.getInference(r.id));
});
