// POST /v1/feedback through the gateway with ids of real inferences made seconds before (some not
// yet flushed), on SQLite and PostgreSQL: per-event results in order, metric typing, ownership,
// storage and the per-model statistics the dashboard and router read.
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { rmSync } from 'node:fs';
import { startMockOpenAI, type MockUpstream } from './mocks/index.ts';
import { startTestGateway, type TestGateway } from './helpers/gateway.ts';
import { PG_URL, dropSchema, freshSchema, pgAvailable } from './helpers/pg.ts';

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-7[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/;

for (const backend of ['sqlite', 'postgres'] as const) {
  describe(`feedback end to end (${backend})`, async () => {
    const havePg = backend === 'sqlite' || await pgAvailable(); // throws under CI=true when PostgreSQL is down
    const schema = freshSchema('fb');
    let oa: MockUpstream; let gw: TestGateway; let adminKey = 'admin-key-for-feedback-e2e-tests'; let keyA = ''; let keyB = '';
    before(async () => {
      if (!havePg) return;
      oa = await startMockOpenAI();
      const storage = backend === 'postgres' ? { database_url: PG_URL } : {};
      gw = await startTestGateway({
        providers: [{ id: 'mockai', format: 'openai-chat', base_url: oa.url, models: [{ name: 'm1' }, { name: 'm2' }] }],
        // A long flush window: feedback must find inferences that are still only in memory.
        gateway: { auth: { enabled: true, admin_key: adminKey }, storage: { ...storage, writer: { batch_size: 10000, flush_ms: 60000, max_queue: 10000 } } },
        env: backend === 'postgres' ? { GATEWAY_PG_SCHEMA: schema } : {},
      });
      const mk = async (name: string) => ((await (await fetch(`${gw.url}/admin/keys`, { method: 'POST', headers: { authorization: `Bearer ${adminKey}`, 'content-type': 'application/json' }, body: JSON.stringify({ name }) })).json()) as { key: string }).key;
      keyA = await mk('a'); keyB = await mk('b');
    });
    after(async () => {
      if (!havePg) return;
      await gw.stop(); await oa.close();
      if (backend === 'postgres') await dropSchema(schema);
    });

    const infer = async (key: string, model = 'mockai/m1'): Promise<string> => {
      const r = await fetch(`${gw.url}/v1/chat/completions`, { method: 'POST', headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' }, body: JSON.stringify({ model, messages: [{ role: 'user', content: 'rate me' }] }) });
      assert.equal(r.status, 200);
      return ((await r.json()) as { id: string }).id;
    };
    const feedback = async (key: string, body: unknown) => {
      const r = await fetch(`${gw.url}/v1/feedback`, { method: 'POST', headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' }, body: typeof body === 'string' ? body : JSON.stringify(body) });
      return { status: r.status, json: await r.json() as any };
    };

    test('every value kind on a fresh (unflushed) inference, one UUID per flattened key', { skip: !havePg }, async () => {
      const id = await infer(keyA);
      const r = await feedback(keyA, [{ id, feedback: { correct: true, rating: 4, note: 'good', quality: { score: 0.9, reason: 'clear' }, nested: { deeper: { helpful: false } } }, tags: { team: 'x' }, optimize: 'max' }]);
      assert.equal(r.status, 200);
      assert.equal(r.json.length, 1);
      assert.equal(r.json[0].error, null);
      assert.deepEqual(Object.keys(r.json[0].feedback_ids).sort(), ['correct', 'nested.deeper.helpful', 'note', 'quality', 'rating']);
      for (const v of Object.values(r.json[0].feedback_ids)) assert.match(v as string, UUID);
    });

    test('a batch keeps order; bad events fail alone with status_code 400 and null ids', { skip: !havePg }, async () => {
      const id = await infer(keyA);
      const r = await feedback(keyA, [
        { id, feedback: { ok2: true } },
        { id, feedback: { list: [1, 2] } },
        { id, feedback: { nothing: null } },
        { id: '01890a5d-ac96-774b-bcce-b302099a8057', feedback: { ok2: true } },
        { id, feedback: {} },
        { id, feedback: { s: { score: [1] } } },
      ]);
      assert.equal(r.status, 200);
      assert.equal(r.json.length, 6);
      assert.equal(r.json[0].error, null);
      for (const i of [1, 2, 3, 5]) { assert.equal(r.json[i].feedback_ids, null); assert.equal(r.json[i].error.status_code, 400); }
      assert.match(r.json[3].error.message, /does not exist/);
      assert.deepEqual(r.json[4], { feedback_ids: {}, error: null });
    });

    test("another key's inference is reported exactly like an unknown id", { skip: !havePg }, async () => {
      const id = await infer(keyA);
      const r = await feedback(keyB, [{ id, feedback: { x: true } }]);
      assert.equal(r.json[0].error.message, `Inference ID ${id} does not exist`);
    });

    test('metric types are fixed on first use, across requests', { skip: !havePg }, async () => {
      const id = await infer(keyA);
      const first = await feedback(keyA, [{ id, feedback: { typed_metric: true } }]);
      assert.equal(first.json[0].error, null);
      const second = await feedback(keyA, [{ id, feedback: { typed_metric: 0.5 } }]);
      assert.equal(second.json[0].feedback_ids, null);
      assert.match(second.json[0].error.message, /typed_metric/);
    });

    test('a body that is not an array, or not JSON, is a 400 in the OpenAI envelope', { skip: !havePg }, async () => {
      const a = await feedback(keyA, { id: 'x', feedback: {} });
      assert.equal(a.status, 400); assert.equal(a.json.error.code, 'invalid_body');
      const b = await feedback(keyA, '[{');
      assert.equal(b.status, 400); assert.equal(b.json.error.code, 'invalid_json');
      const c = await fetch(`${gw.url}/v1/feedback`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: '[]' });
      assert.equal(c.status, 401);
    });

    test('rows are stored and aggregated per model and metric (count, mean, boolean rate)', { skip: !havePg }, async () => {
      const ids = [await infer(keyA, 'mockai/m2'), await infer(keyA, 'mockai/m2'), await infer(keyA, 'mockai/m2')];
      const r = await feedback(keyA, ids.map((id, i) => ({ id, feedback: { thumbs_up: i < 2, stars: i + 1 }, optimize: 'max' })));
      assert.ok(r.json.every((x: any) => x.error === null));
      await gw.stopKeepingFiles();
      // Restart on the same store: everything acknowledged was flushed at shutdown.
      const store = await (await import('../src/store/open.ts')).openStore(backend === 'postgres'
        ? { sqlitePath: '', databaseUrl: PG_URL, pgSchema: schema } : { sqlitePath: gw.services.holder.current.storage.sqlitePath });
      try {
        const stats = await store.feedbackStats({ since: new Date(Date.now() - 60_000).toISOString(), until: new Date(Date.now() + 60_000).toISOString(), model: 'mockai/m2' });
        const thumbs = stats.find((s) => s.metric === 'thumbs_up')!;
        assert.equal(thumbs.count, 3); assert.equal(thumbs.type, 'boolean');
        assert.ok(Math.abs(thumbs.rate! - 2 / 3) < 1e-9);
        const stars = stats.find((s) => s.metric === 'stars')!;
        assert.equal(stars.count, 3); assert.equal(stars.type, 'float'); assert.equal(stars.mean, 2);
      } finally { await store.close(); rmSync(gw.dir, { recursive: true, force: true }); }
      gw = await startTestGateway({ providers: [{ id: 'mockai', format: 'openai-chat', base_url: oa.url }] });
    });
  });
}

describe('feedback past the writer queue bound (sqlite)', () => {
  test('an event the write queue cannot take answers 503 instead of being acknowledged and dropped', async (t) => {
    const oa = await startMockOpenAI();
    // flush_ms long and batch_size above the bound: nothing is written while the request is handled.
    const gw = await startTestGateway({
      providers: [{ id: 'mockai', format: 'openai-chat', base_url: oa.url, models: [{ name: 'm1' }] }],
      gateway: { storage: { writer: { batch_size: 1000, flush_ms: 60000, max_queue: 50 } } },
    });
    let running = true;
    t.after(async () => { if (running) await gw.stopKeepingFiles(); await oa.close(); rmSync(gw.dir, { recursive: true, force: true }); });
    const r = await fetch(`${gw.url}/v1/chat/completions`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ model: 'mockai/m1', messages: [{ role: 'user', content: 'hi' }] }) });
    const id = ((await r.json()) as { id: string }).id;
    // 30 events of 2 values: 60 rows for a queue of 50 (which also holds the inference's record lane apart).
    const f = await fetch(`${gw.url}/v1/feedback`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(Array.from({ length: 30 }, (_, i) => ({ id, feedback: { n: i, ok: true } }))) });
    assert.equal(f.status, 200);
    const results = (await f.json()) as Array<{ feedback_ids: Record<string, string> | null; error: { status_code: number; message: string } | null }>;
    const stored = results.filter((x) => x.error === null);
    assert.equal(stored.length, 25);
    for (const x of results.slice(25)) {
      assert.equal(x.error?.status_code, 503);
      assert.match(x.error!.message, /write queue is full.*retry it later/);
    }
    assert.equal(gw.services.writerStats!().dropped, 0, 'nothing acknowledged was dropped');
    running = false;
    await gw.stopKeepingFiles();
    const { openStore } = await import('../src/store/open.ts');
    const store = await openStore({ sqlitePath: gw.services.holder.current.storage.sqlitePath });
    try {
      const rows = await store.sql.all('SELECT id FROM feedback');
      assert.deepEqual(new Set(rows.map((x) => x.id)), new Set(stored.flatMap((x) => Object.values(x.feedback_ids!))));
    } finally { await store.close(); }
  });
});
