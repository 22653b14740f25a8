// A stored response whose write fails is not lost: it stays readable from memory (a chained turn
// finds it) while its write is retried in the background, and lands once the database takes writes
// again. Before, a failed write dropped it from memory: the turn chained before the failure was
// answered from memory, any later one got previous_response_not_found.
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import OpenAI from 'openai';
import { startMockAnthropic, type MockUpstream } from './mocks/index.ts';
import { startTestGateway, type TestGateway } from './helpers/gateway.ts';
import { responseStoreOf } from '../src/http/responses-route.ts';
import { insertStoredResponse, type StoredResponseRow } from '../src/responses/rows.ts';

type Rec = Record<string, any>;
let ant: MockUpstream; let gw: TestGateway;
/** While true, every stored-response write fails as a database that cannot be reached does. */
let down = false;
const attempts: string[] = [];

before(async () => {
  ant = await startMockAnthropic();
  gw = await startTestGateway({ providers: [{ id: 'ant', format: 'anthropic-messages', base_url: ant.url }] });
  // The write the gateway would make (its write thread), behind a switch; set before the first
  // Responses request, which builds the response store with it.
  const real = gw.services.responseWrites!;
  gw.services.responseWrites = async (row: StoredResponseRow) => {
    attempts.push(row.id);
    if (down) throw Object.assign(new Error('connect ECONNREFUSED 127.0.0.1:5432'), { code: 'ECONNREFUSED' });
    await real(row);
  };
});
after(async () => { await gw.stop(); await ant.close(); });

const sentMessages = (): Rec[] => (ant.requests.at(-1)!.body as Rec).messages;
const storedRow = async (id: string): Promise<number> => (await gw.services.store!.sql.all('SELECT id FROM stored_responses WHERE id = ?', [id])).length;

test('a response whose write failed is found by later chained turns, and written once the database is back', async () => {
  const c = new OpenAI({ baseURL: `${gw.url}/v1`, apiKey: 'sk-test', maxRetries: 0 });
  down = true;
  const first = await c.responses.create({ model: 'ant/test-model', input: 'my name is Ada' });
  const rs = responseStoreOf(gw.services)!;
  await rs.settle(); // its first write has failed
  assert.ok(attempts.includes(first.id));
  assert.equal(await storedRow(first.id), 0);

  // Two turns chained from it while the database is still down: both find it.
  for (const input of ['what is my name', 'and again']) {
    const next = await c.responses.create({ model: 'ant/test-model', input, previous_response_id: first.id });
    assert.equal(next.previous_response_id, first.id);
    assert.deepEqual(sentMessages().map((m) => m.content[0].text), ['my name is Ada', 'Echo: my name is Ada', input]);
  }
  assert.equal((await c.responses.retrieve(first.id)).id, first.id, 'GET finds it too');
  await rs.settle();
  assert.equal(rs.retryStats().waiting, 3, 'each turn waits for its write');

  // The database is back: the retry writes it (the first retry comes after about a second).
  down = false;
  const until = Date.now() + 8000;
  while (rs.retryStats().waiting > 0 && Date.now() < until) await new Promise((r) => setTimeout(r, 50));
  assert.equal(await storedRow(first.id), 1, 'written by the retry');
  const stats = rs.retryStats();
  assert.equal(stats.waiting, 0);
  assert.equal(stats.dropped, 0);
  assert.ok(stats.failures >= 3, `the first write of each turn failed (${stats.failures})`);
  const metrics = await (await fetch(`${gw.url}/metrics`)).text();
  assert.match(metrics, /^gateway_stored_response_write_failures_total [1-9]/m);

  // A later turn chains from it as read from the database.
  const later = await c.responses.create({ model: 'ant/test-model', input: 'still there?', previous_response_id: first.id });
  assert.equal(later.previous_response_id, first.id);
  assert.deepEqual(sentMessages().map((m) => m.content[0].text), ['my name is Ada', 'Echo: my name is Ada', 'still there?']);
});

test('the retried insert is idempotent: a write that committed but reported a failure is written again without an error', async () => {
  const id = crypto.randomUUID();
  const row = { id, keyId: '', createdAt: Date.now(), expiresAt: Date.now() + 60_000, previousId: null, responseJson: '{}', inputJson: '[]' };
  await insertStoredResponse(gw.services.store!.sql, row);
  await insertStoredResponse(gw.services.store!.sql, row);
  assert.equal(await storedRow(id), 1);
});
