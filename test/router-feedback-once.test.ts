// Feedback trains the router once per answer and metric: the first value counts, later ones (the same
// verdict posted again, or a changed mind) are stored but fold nothing, so one client cannot move
// every request's routing by repeating its feedback on a single answer.
import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import { startMockOpenAI, type MockUpstream } from './mocks/index.ts';
import { startTestGateway, type TestGateway } from './helpers/gateway.ts';
import { recordOf } from './helpers/records.ts';

let oa: MockUpstream; let gw: TestGateway;
before(async () => {
  oa = await startMockOpenAI();
  gw = await startTestGateway({
    providers: [{ id: 'mockai', format: 'openai-chat', base_url: oa.url, models: [{ name: 'only', pricing: { prompt: '0.000001', completion: '0.000002' } }] }],
    gateway: { router: { exploration: { share: 0 }, quality_signals: [{ metric: 'good', optimize: 'max' }, { metric: 'stars', optimize: 'max', min: 1, max: 5 }], learning: { train_interval_ms: 200, state_poll_ms: 200, feedback_settle_ms: 0 } } },
  });
});
after(async () => { await gw.stop(); await oa.close(); });

const post = async (path: string, body: unknown) => (await fetch(`${gw.url}${path}`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(body) })).json() as Promise<any>;
const outcomes = async (): Promise<number> => Number((await gw.services.store!.sql.all('SELECT outcomes FROM router_state ORDER BY version DESC LIMIT 1'))[0]?.outcomes ?? 0);
async function settle(want: number): Promise<number> {
  let n = 0;
  for (let i = 0; i < 100 && n < want; i++) { await new Promise((r) => setTimeout(r, 50)); n = await outcomes(); }
  await new Promise((r) => setTimeout(r, 600)); // three more training intervals: nothing else arrives
  return outcomes();
}

test('repeated and changed feedback on one answer trains once per metric; every value is still stored', async () => {
  const a = (await post('/v1/chat/completions', { model: 'router', messages: [{ role: 'user', content: 'first question' }] })).id as string;
  const b = (await post('/v1/chat/completions', { model: 'router', messages: [{ role: 'user', content: 'second question' }] })).id as string;
  await recordOf(gw, a); await recordOf(gw, b);
  // Twenty identical negatives on one answer, in one request and in several.
  await post('/v1/feedback', Array.from({ length: 10 }, () => ({ id: a, feedback: { good: false } })));
  for (let i = 0; i < 10; i++) await post('/v1/feedback', [{ id: a, feedback: { good: false } }]);
  // A changed mind on the other answer, and a second metric on it: one outcome per metric.
  await post('/v1/feedback', [{ id: b, feedback: { good: true } }]);
  await post('/v1/feedback', [{ id: b, feedback: { good: false, stars: 4 } }]);
  await post('/v1/feedback', [{ id: b, feedback: { stars: 1 } }]);
  assert.equal(await settle(3), 3, 'a: good; b: good (the first), stars (the first)');
  const stored = await gw.services.store!.sql.all("SELECT COUNT(*) AS n FROM feedback WHERE metric IN ('good', 'stars')");
  assert.equal(Number(stored[0]!.n), 24, 'every value is stored');
});
