// Stored-response writes through a writer of their own (the gateway passes the store's write thread):
// the input items extracted from the request bytes by the writer with the same ids the main thread
// gives them; reads of a row whose items only the writer holds wait for that write (read-your-writes);
// a write that fails (rejected or thrown) is reported, never leaves a read hanging, stays readable and
// is retried (bounded); and the real write thread inserts rows the main store reads.
import { after, test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { openStore } from '../src/store/open.ts';
import { WriteThread } from '../src/store/write-thread.ts';
import { ResponseStore } from '../src/responses/store.ts';
import { insertStoredResponse, storedInputItems, type StoredResponseRow } from '../src/responses/rows.ts';
import { uuidv7 } from '../src/util/uuid.ts';

type Rec = Record<string, any>;
const dir = mkdtempSync(join(tmpdir(), 'gw-resp-writes-'));
const opts = { sqlitePath: join(dir, 'gw.db') };
const store = await openStore(opts);
after(async () => { await store.close(); rmSync(dir, { recursive: true, force: true }); });

const input = [{ role: 'user', content: 'hello there' }, { type: 'function_call_output', call_id: 'c1', output: 'done' }];
const bodyOf = (inp: unknown): Buffer => Buffer.from(JSON.stringify({ model: 'm', input: inp, store: true }));
const row = (previousId: string | null = null) => {
  const id = uuidv7();
  return { id, keyId: 'k', createdAt: Date.now(), expiresAt: Date.now() + 60_000, previousId, response: { id, object: 'response', output: [{ id: `msg_${id}`, type: 'message', role: 'assistant', content: [{ type: 'output_text', text: `answer ${id}` }] }] } };
};

test('a pooled body: reads wait for the slow writer, then get the items it extracted (same ids as the main thread gives)', async () => {
  let release!: () => void;
  const gate = new Promise<void>((r) => { release = r; });
  const writes: StoredResponseRow[] = [];
  const rs = new ResponseStore(store.sql, (e) => { throw e; }, async (r) => { writes.push(r); await gate; await insertStoredResponse(store.sql, r); });
  const a = row();
  rs.save({ ...a, inputItems: null }, bodyOf(input));
  assert.equal(writes[0]!.body!.length, bodyOf(input).length);
  assert.equal(writes[0]!.inputJson, undefined, 'the main thread did not serialise the input');
  let got: Rec | null | undefined;
  const reading = rs.get(a.id, 'k').then((g) => { got = g; });
  const chained = rs.conversation(a.id, 'k');
  await new Promise((r) => setTimeout(r, 30));
  assert.equal(got, undefined, 'the read waits for the write');
  release();
  await reading;
  assert.deepEqual(got!.inputItems, storedInputItems(input, a.id));
  assert.equal((await chained).length, 3);
  // Another key still sees nothing, without waiting.
  const b = row();
  const rs2 = new ResponseStore(store.sql, (e) => { throw e; }, () => new Promise(() => {}));
  rs2.save({ ...b, inputItems: null }, bodyOf('x'));
  assert.equal(await rs2.get(b.id, 'other'), null);
});

test('parsed input: served from memory at once while the writer has not committed', async () => {
  const rs = new ResponseStore(store.sql, (e) => { throw e; }, () => new Promise(() => {}));
  const a = row();
  rs.save({ ...a, inputItems: storedInputItems(input, a.id) }, bodyOf(input));
  const c = row(a.id);
  rs.save({ ...c, inputItems: storedInputItems('next', c.id) }, bodyOf('next'));
  assert.deepEqual((await rs.conversation(c.id, 'k')).map((i: Rec) => i.content?.[0]?.text ?? i.output), ['hello there', 'done', `answer ${a.id}`, 'next', `answer ${c.id}`]);
  assert.equal((await rs.get(a.id, 'k'))!.id, a.id);
});

test('another replica: a response whose row is still being committed is found by a chained turn, a GET and a DELETE there; an old unknown id is refused at once', async () => {
  // Replica A's writer commits each row 300 ms after its answer; replica B shares the database only.
  const late = (r: StoredResponseRow) => new Promise<void>((ok, fail) => setTimeout(() => { insertStoredResponse(store.sql, r).then(ok, fail); }, 300));
  const onA = new ResponseStore(store.sql, (e) => { throw e; }, late);
  const onB = new ResponseStore(store.sql, (e) => { throw e; });
  const a = row();
  onA.save({ ...a, inputItems: storedInputItems(input, a.id) }, bodyOf(input));
  // Before: 400 previous_response_not_found, the row landing 300 ms later.
  assert.deepEqual((await onB.conversation(a.id, 'k')).map((i: Rec) => i.content?.[0]?.text ?? i.output), ['hello there', 'done', `answer ${a.id}`]);
  const g = row();
  onA.save({ ...g, inputItems: storedInputItems('get me', g.id) }, bodyOf('get me'));
  assert.equal((await onB.get(g.id, 'k'))?.id, g.id);
  const d = row();
  onA.save({ ...d, inputItems: storedInputItems('delete me', d.id) }, bodyOf('delete me'));
  assert.equal(await onB.delete(d.id, 'k'), true);
  await onA.settle();
  // An id minted long ago (or not by a gateway) is not waited for.
  const t = Date.now();
  await assert.rejects(onB.conversation('01a20958-c42c-7ca1-bd54-18ce92424ad0', 'k'), /not found/);
  assert.equal(await onB.get('not-a-uuid', 'k'), null);
  assert.ok(Date.now() - t < 200, `old ids answered at once (${Date.now() - t} ms)`);
});

test('a failing write is reported, kept readable from memory (its items taken from the body) and retried until it lands', async () => {
  for (const fail of [async () => { throw new Error('disk full'); }, () => { throw new Error('thread gone'); }]) {
    const errors: string[] = [];
    let failing = true;
    const write = (r: StoredResponseRow): Promise<void> => (failing ? (fail as () => Promise<void>)() : insertStoredResponse(store.sql, r));
    const rs = new ResponseStore(store.sql, (e) => errors.push((e as Error).message), write, { retries: { delayMs: 10, maxDelayMs: 20 } });
    const a = row();
    rs.save({ ...a, inputItems: null }, bodyOf(input));
    assert.deepEqual((await rs.get(a.id, 'k'))!.inputItems, storedInputItems(input, a.id), 'read does not hang, and finds it');
    assert.equal((await rs.conversation(a.id, 'k')).length, 3);
    assert.equal(await rs.get(a.id, 'other'), null, 'still scoped to its key');
    await new Promise((r) => setTimeout(r, 60));
    assert.ok(rs.retryStats().failures >= 2, 'retried');
    assert.match(errors[0]!, /disk full|thread gone/);
    failing = false;
    const until = Date.now() + 3000;
    while (rs.retryStats().waiting > 0 && Date.now() < until) await new Promise((r) => setTimeout(r, 10));
    assert.equal((await store.sql.all('SELECT id FROM stored_responses WHERE id = ?', [a.id])).length, 1);
    assert.equal((await rs.get(a.id, 'k'))!.id, a.id, 'now read from the database');
  }
  assert.throws(() => new ResponseStore(store.sql).save({ ...row(), inputItems: null }), /input items or its request body/);
});

test('retries are bounded (the oldest response is given up) and a row the store refuses is not retried; a waiting response can be deleted', async () => {
  const errors: string[] = [];
  const refused = Object.assign(new Error('value too long'), { code: 'ROW_VALUE' });
  let err: Error = new Error('database down');
  const rs = new ResponseStore(store.sql, (e) => errors.push((e as Error).message), async () => { throw err; }, { retries: { maxRows: 2, delayMs: 60_000 } });
  const [a, b, c] = [row(), row(), row()];
  for (const r of [a, b, c]) rs.save({ ...r, inputItems: [] });
  await rs.settle();
  assert.deepEqual(rs.retryStats(), { waiting: 2, failures: 3, dropped: 1 });
  assert.equal(await rs.get(a.id, 'k'), null, 'the oldest was given up');
  assert.match(errors.at(-1)!, new RegExp(`response ${a.id} was not stored`));
  assert.equal((await rs.get(c.id, 'k'))!.id, c.id);
  assert.equal(await rs.delete(b.id, 'k'), true);
  assert.equal(await rs.get(b.id, 'k'), null);
  assert.equal(rs.retryStats().waiting, 1);
  err = refused;
  const d = row();
  rs.save({ ...d, inputItems: [] });
  await rs.settle();
  assert.equal(await rs.get(d.id, 'k'), null, 'refused for its values: given up at once');
  assert.deepEqual(rs.retryStats(), { waiting: 1, failures: 4, dropped: 2 });
});

test('shutdown (close) writes what waits for a retry at once, without the back-off, and counts what the database still refuses as lost', async () => {
  let failing = true;
  const write = async (r: StoredResponseRow): Promise<void> => { if (failing) throw new Error('database down'); await insertStoredResponse(store.sql, r); };
  const errors: string[] = [];
  const rs = new ResponseStore(store.sql, (e) => errors.push((e as Error).message), write, { retries: { delayMs: 60_000 } });
  const [a, b] = [row(), row()];
  for (const r of [a, b]) rs.save({ ...r, inputItems: [] });
  await rs.settle();
  assert.equal(rs.retryStats().waiting, 2, 'waiting a minute for the next try');
  failing = false;
  const t0 = Date.now();
  assert.equal(await rs.close(), 0, 'both written at shutdown');
  assert.ok(Date.now() - t0 < 5000, 'without waiting out the back-off');
  assert.equal((await store.sql.all('SELECT id FROM stored_responses WHERE id IN (?, ?)', [a.id, b.id])).length, 2);
  // The database still down at shutdown: the responses are lost, counted and reported.
  failing = true;
  const rs2 = new ResponseStore(store.sql, (e) => errors.push((e as Error).message), write, { retries: { delayMs: 60_000 } });
  const c = row();
  rs2.save({ ...c, inputItems: [] });
  await rs2.settle();
  assert.equal(await rs2.close(), 1);
  assert.match(errors.at(-1)!, new RegExp(`response ${c.id} was not stored: the gateway stopped`));
  assert.equal(rs2.retryStats().waiting, 0);
  // A write that hangs: close gives up at its deadline and counts the response lost.
  const rs3 = new ResponseStore(store.sql, (e) => errors.push((e as Error).message), () => new Promise(() => {}));
  rs3.save({ ...row(), inputItems: [] });
  assert.equal(await rs3.close(200), 1);
  assert.match(errors.at(-1)!, /1 stored responses were not confirmed written within 200 ms/);
});

test('the store write thread inserts rows (input parsed there) that the main store reads', async () => {
  const thread = new WriteThread(opts);
  await thread.ready();
  try {
    const rs = new ResponseStore(store.sql, (e) => { throw e; }, thread.insertStoredResponse);
    const a = row();
    rs.save({ ...a, inputItems: null }, bodyOf(input));
    const got = await rs.get(a.id, 'k');
    assert.deepEqual(got!.inputItems, storedInputItems(input, a.id));
    assert.equal((got!.response as Rec).output[0].content[0].text, `answer ${a.id}`);
    // A row whose body is not JSON: the thread's error comes back as the write's failure.
    const errors: unknown[] = [];
    const bad = new ResponseStore(store.sql, (e) => errors.push(e), thread.insertStoredResponse);
    const b = row();
    bad.save({ ...b, inputItems: null }, Buffer.from('{not json'));
    await bad.settle();
    assert.equal(errors.length, 1);
    assert.equal(await bad.get(b.id, 'k'), null);
  } finally { await thread.close(); }
});

test('expired rows are purged by the writer after an insert, at most once an hour', async () => {
  const old = row();
  await insertStoredResponse(store.sql, { ...old, expiresAt: Date.now() - 1000, responseJson: JSON.stringify(old.response), inputJson: '[]' });
  const seen: StoredResponseRow[] = [];
  const rs = new ResponseStore(store.sql, (e) => { throw e; }, async (r) => { seen.push(r); await insertStoredResponse(store.sql, r); });
  rs.save({ ...row(), inputItems: [] });
  rs.save({ ...row(), inputItems: [] });
  await rs.settle();
  assert.equal(typeof seen[0]!.purgeBefore, 'number');
  assert.equal(seen[1]!.purgeBefore, undefined, 'one purge per hour');
  assert.equal((await store.sql.all('SELECT id FROM stored_responses WHERE id = ?', [old.id])).length, 0);
});
