// A budgeted key's POST /v1/responses/compact with previous_response_id: the stored conversation is
// prepended to the request before the model is called, and it is what the summary bills. The
// reservation priced only the request's own bytes / 4, so a key whose budget could not cover the
// stored history was served the compaction and billed past its budget. Now the reservation prices the
// whole conversation per target, as the other routes do (src/http/reservation-estimate.ts).
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { startMockAnthropic, type MockUpstream } from './mocks/index.ts';
import { startTestGateway, TEST_PRICING, type TestGateway } from './helpers/gateway.ts';
import { decodeForReservation, reservationUsage, reservedPrompt } from '../src/http/reservation-estimate.ts';
import type { KeyRecord } from '../src/store/types.ts';

let ant: MockUpstream; let gw: TestGateway;
const MODEL = 'ant/short-out';

before(async () => {
  ant = await startMockAnthropic();
  gw = await startTestGateway({
    // A small output cap keeps the output's worst case (64 tokens) below what the history costs.
    providers: [{ id: 'ant', format: 'anthropic-messages', base_url: ant.url, models: [{ name: 'short-out', pricing: TEST_PRICING, context_window: 200_000, max_completion_tokens: 64 }] }],
    gateway: { auth: { enabled: true } },
  });
});
after(async () => { await gw.stop(); await ant.close(); });

const post = (key: string, path: string, body: unknown) => fetch(`${gw.url}${path}`, {
  method: 'POST', headers: { 'content-type': 'application/json', authorization: `Bearer ${key}` }, body: JSON.stringify(body),
});

test('compacting a stored conversation the budget left cannot cover is refused before the call (402), not billed past the budget', async () => {
  const long = 'The quarterly report covers revenue, costs and the outlook for each region in turn. '.repeat(500);
  const first = { model: MODEL, input: long, max_output_tokens: 32 };
  // The key's budget is what the first request reserves and $0.002 more: it is served, and what it
  // leaves covers the compaction's output and new input (~$0.0002) but not the stored history it reads
  // again (~10,000 tokens, $0.01).
  const entry = gw.services.holder.current.models.get(MODEL)!;
  const raw = Buffer.from(JSON.stringify(first));
  const reserve = reservationUsage([{ entry }], first, raw, { budgetUsd: '1', tpmLimit: null } as KeyRecord,
    reservedPrompt(decodeForReservation('openai-responses', first), raw.length, null)).costUsd;
  const budget = (Number(reserve) + 0.002).toFixed(6);
  const { key, record } = await gw.services.admin!.createKey({ name: 'compact-budget', budget_usd: budget, budget_period: 'day' });
  const r1 = await post(key, '/v1/responses', first);
  assert.equal(r1.status, 200, await r1.clone().text());
  const id = (await r1.json() as { id: string }).id;

  ant.reset();
  const c = await post(key, '/v1/responses/compact', { model: MODEL, previous_response_id: id, input: 'and now?' });
  const text = await c.text();
  assert.equal(c.status, 402, text);
  assert.equal(ant.requests.length, 0, 'nothing sent upstream');

  const since = new Date(Date.UTC(new Date().getUTCFullYear(), new Date().getUTCMonth(), new Date().getUTCDate())).toISOString();
  await new Promise((res) => setTimeout(res, 100));
  const spent = Number(await gw.services.store!.keySpend(record.id, since));
  assert.ok(spent > 0 && spent <= Number(budget), `spent $${spent} of a $${budget} budget`);
  assert.match(JSON.parse(text).error.message, /may cost up to \$0\.01/, 'the refusal prices the stored history');
});
