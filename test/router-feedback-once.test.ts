// Feedback trains the router once per answer and metric: the value it settles on within
// router.learning.feedback_settle_ms counts once; a mind changed after that corrects it (the
// outcome's score moves, its weight does not), and the same verdict posted again moves nothing, so
// one client cannot move every request's routing by repeating its feedback on a single answer.
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
    gateway: { router: { exploration: { share: 0 }, quality_signals: [{ metric: 'good', optimize: 'max' }, { metric: 'stars', optimize: 'max', min: 1, max: 5 }], learning: { train_interval_ms: 200, state_poll_ms: 200, feedback_settle_ms: 300 } } },
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
  // A changed mind on the other answer within the window, and a second metric on it: one outcome per metric.
  await post('/v1/feedback', [{ id: b, feedback: { good: true } }]);
  await post('/v1/feedback', [{ id: b, feedback: { good: false, stars: 4 } }]);
  await post('/v1/feedback', [{ id: b, feedback: { stars: 1 } }]);
  assert.equal(await settle(3), 3, 'a: good; b: good, stars (each with the value it settled on)');
  const stored = await gw.services.store!.sql.all("SELECT COUNT(*) AS n FROM feedback WHERE metric IN ('good', 'stars')");
  assert.equal(Number(stored[0]!.n), 24, 'every value is stored');
});

test('a verdict changed after the window corrects what was learned; the same verdict repeated after it changes nothing', async () => {
  const messages = [{ role: 'user', content: 'a question whose verdict changes' }];
  const q = async (): Promise<number> => {
    const r = await post('/v1/router/rank', { models: ['only'], messages });
    return (r.candidates as Array<{ id: string; quality: number }>).find((c) => c.id === 'mockai/only')!.quality;
  };
  const version = () => gw.services.router!.learning.state.version;
  /** Waits for the main thread to load a state newer than `v` and `cond` to hold. */
  const until = async (v: number, cond: () => Promise<boolean>): Promise<void> => {
    for (let i = 0; i < 100; i++) { if (version() > v && await cond()) return; await new Promise((r) => setTimeout(r, 50)); }
    assert.fail(`no state after version ${v} met the condition (now ${version()})`);
  };
  const id = (await post('/v1/chat/completions', { model: 'router', messages })).id as string;
  await recordOf(gw, id);
  const n0 = await outcomes();
  const q0 = await q();
  let v = version();
  await post('/v1/feedback', [{ id, feedback: { good: false } }]);
  await until(v, async () => (await outcomes()) === n0 + 1 && (await q()) < q0);
  const qDown = await q();
  // Turned positive well after the window (it was learned, so the window has passed): q goes back up.
  v = version();
  await post('/v1/feedback', [{ id, feedback: { good: true } }]);
  await until(v, async () => (await q()) > qDown);
  const qUp = await q();
  assert.ok(qUp > q0, `learned as positive now: q ${q0} -> ${qDown} -> ${qUp}`);
  assert.equal(await outcomes(), n0 + 1, 'a correction adds no outcome');
  // Twenty more positives after the window: corrections of nothing.
  v = version();
  for (let i = 0; i < 20; i++) await post('/v1/feedback', [{ id, feedback: { good: true } }]);
  await new Promise((r) => setTimeout(r, 1500)); // settled and past several training and poll intervals
  assert.ok(version() > v, 'the repeats were read (the cursor moved on)');
  assert.equal(await q(), qUp);
  assert.equal(await outcomes(), n0 + 1);
});
