// A budgeted key on the pass-through routes (/v1/embeddings here): the body is relayed as it is, so its
// reservation reads the text from the JSON (src/http/passthrough-reserve.ts) and counts it with the
// target's tokenizer. It reserved the body's bytes / 4, which numeric text (a CSV of ids and amounts)
// passes about 2.5 times under OpenAI's tokenizers: a key with $0.01 left was served an embedding of
// 20 KB of CSV billed ~$0.012 by an upstream counting as OpenAI does. The upstream here bills
// cl100k_base's exact count, as the embeddings API does.
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { countTokens } from 'gpt-tokenizer/encoding/cl100k_base';
import { startTestGateway, type TestGateway } from './helpers/gateway.ts';
import { passThroughInput, passThroughText } from '../src/http/passthrough-reserve.ts';
import { warmTokenizers } from '../src/tokens/index.ts';
import type { ModelEntry } from '../src/config/types.ts';

const ADMIN = 'budget-passthrough-admin-key-0123456789';
const CSV = Array.from({ length: 700 }, (_, i) => `${i},${(i * 7919) % 100003},${(i * 0.37).toFixed(4)},0x${((i * 2654435761) >>> 0).toString(16)}`).join('\n');
const PRICE = 0.000001;

let up: Server; let upUrl = ''; let received = 0; let gw: TestGateway;

before(async () => {
  up = createServer((req, res) => {
    let raw = '';
    req.setEncoding('utf8').on('data', (s: string) => { raw += s; }).on('end', () => {
      received++;
      const b = JSON.parse(raw) as { model: string; input: string | string[] };
      const inputs = Array.isArray(b.input) ? b.input : [b.input];
      // Beyond 60,000 characters (the event-loop test's text, whose exact count takes seconds) its UTF-8 bytes, the ceiling.
      const tokens = inputs.reduce((n, s) => n + (s.length > 60_000 ? Buffer.byteLength(s) : countTokens(s)), 0);
      res.writeHead(200, { 'content-type': 'application/json' });
      res.end(JSON.stringify({ object: 'list', model: b.model, data: inputs.map((_, index) => ({ object: 'embedding', index, embedding: [0.1, 0.2] })), usage: { prompt_tokens: tokens, total_tokens: tokens } }));
    });
  });
  await new Promise<void>((ok) => up.listen(0, '127.0.0.1', ok));
  upUrl = `http://127.0.0.1:${(up.address() as AddressInfo).port}/v1`;
  gw = await startTestGateway({
    providers: [{ id: 'oa', format: 'openai-chat', base_url: upUrl, models: [{ name: 'text-embedding-3-small', pricing: { prompt: String(PRICE), completion: '0' }, context_window: 8191, max_completion_tokens: 1 }] }],
    gateway: { auth: { enabled: true, admin_key: ADMIN } },
  });
});
after(async () => { await gw.stop(); await new Promise<void>((ok) => up.close(() => ok())); });

const key = async (budget: string): Promise<{ id: string; key: string }> => {
  const r = await fetch(`${gw.url}/admin/keys`, { method: 'POST', headers: { authorization: `Bearer ${ADMIN}`, 'content-type': 'application/json' },
    body: JSON.stringify({ name: `pt-${budget}`, budget_usd: budget, budget_period: 'day' }) });
  assert.equal(r.status, 201, await r.clone().text());
  return await r.json() as { id: string; key: string };
};
const embed = (k: string, input: unknown) => fetch(`${gw.url}/v1/embeddings`, {
  method: 'POST', headers: { 'content-type': 'application/json', authorization: `Bearer ${k}` }, body: JSON.stringify({ model: 'oa/text-embedding-3-small', input }),
});

test('the reservation counts the body\'s text with the target\'s tokenizer: strings exactly, token ids one each, field names and the model not at all', async () => {
  await warmTokenizers();
  const entry = gw.services.holder.current.models.get('oa/text-embedding-3-small') as ModelEntry;
  const real = countTokens(CSV);
  assert.ok(real > CSV.length / 4 * 1.5, `numeric text counts well above bytes / 4: ${real} against ${CSV.length / 4}`);
  assert.equal(passThroughInput(passThroughText({ model: 'oa/text-embedding-3-small', input: CSV }), entry), real);
  assert.equal(passThroughInput(passThroughText({ model: 'x', input: [CSV, 'hello world'], dimensions: 256 }), entry), real + countTokens('hello world'));
  assert.equal(passThroughInput(passThroughText({ model: 'x', input: [[1, 2, 3], [4, 5]] }), entry), 5);
});

test('a key whose budget the CSV would pass is refused before the call (402); one it fits is served and billed within it', async () => {
  const real = countTokens(CSV) * PRICE;
  const bytesQuarter = Math.ceil(Buffer.byteLength(JSON.stringify({ model: 'oa/text-embedding-3-small', input: CSV })) / 4) * PRICE;
  // A budget between what bytes / 4 reserved and what the upstream bills.
  const budget = ((bytesQuarter + real) / 2).toFixed(6);
  assert.ok(Number(budget) > bytesQuarter && Number(budget) < real, `${bytesQuarter} < ${budget} < ${real}`);
  const k = await key(budget);
  received = 0;
  const r = await embed(k.key, CSV);
  assert.equal(r.status, 402, await r.clone().text());
  assert.equal(received, 0, 'nothing sent upstream');
  // A budget the real count fits (the exact count, not a bound several times it) is served.
  const k2 = await key((real * 1.05).toFixed(6));
  const ok = await embed(k2.key, CSV);
  assert.equal(ok.status, 200, await ok.clone().text());
  assert.equal(received, 1);
  const since = new Date(Date.UTC(new Date().getUTCFullYear(), new Date().getUTCMonth(), new Date().getUTCDate())).toISOString();
  for (let i = 0; i < 100 && Number(await gw.services.store!.keySpend(k2.id, since)) === 0; i++) await new Promise((res) => setTimeout(res, 20));
  const spent = Number(await gw.services.store!.keySpend(k2.id, since));
  assert.ok(spent > 0 && spent <= real * 1.05, `spent $${spent} of $${(real * 1.05).toFixed(6)}`);
});

/** `n` random CJK characters (a deterministic sequence), a space after every `run` of them (0: none). */
function randomCjk(n: number, run: number): string {
  let seed = 12345, s = '';
  for (let i = 0; i < n; i++) {
    seed = (seed * 1103515245 + 12345) & 0x7fffffff;
    s += String.fromCharCode(0x4e00 + (seed % 20000));
    if (run > 0 && i % run === run - 1) s += ' ';
  }
  return s;
}

test('text whose exact count is slow is taken at its bound, without holding the event loop (a run of 65,536 CJK characters held it 6.4 s)', async () => {
  await warmTokenizers();
  const entry = gw.services.holder.current.models.get('oa/text-embedding-3-small') as ModelEntry;
  // One 16,384-character run without whitespace (BPE on one piece is quadratic: 0.4-0.7 s to count)
  // and 16,384 characters in runs of 8 (characters the encoding meets rarely: ~3-15 us each).
  for (const [name, s] of [['one run', randomCjk(16_384, 0)], ['runs of 8', randomCjk(16_384, 8)]] as const) {
    const t0 = performance.now();
    const n = passThroughInput(passThroughText({ model: 'x', input: s }), entry);
    const ms = performance.now() - t0;
    assert.ok(ms < 50, `${name}: ${ms.toFixed(1)} ms`);
    assert.ok(n >= countTokens(s), `${name}: ${n} reserved, never below the count`);
  }
  // Through the gateway: a budgeted key's embedding of 65,536 CJK characters in one run. A timer
  // ticking every 5 ms sees how long the event loop was held (the gateway runs in this process).
  const s = randomCjk(65_536, 0);
  const k = await key('100');
  let last = performance.now(), worst = 0;
  const tick = setInterval(() => { const now = performance.now(); worst = Math.max(worst, now - last); last = now; }, 5);
  received = 0;
  try {
    let reachedAt = 0, worstBefore = 0;
    up.once('request', () => { reachedAt = performance.now(); worstBefore = worst; });
    const r = embed(k.key, s);
    for (let i = 0; i < 400 && reachedAt === 0; i++) await new Promise((res) => setTimeout(res, 25));
    assert.ok(reachedAt > 0, 'the request reached the upstream');
    assert.ok(worstBefore < 500, `the event loop was held ${worstBefore.toFixed(0)} ms before the request reached the upstream`);
    assert.equal((await r).status, 200);
  } finally { clearInterval(tick); }
});
