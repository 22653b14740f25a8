// Budgets end to end with the official clients (openai, @anthropic-ai/sdk) through a real gateway, the
// in-process and the Redis limiter: one key with a small budget sends, all at once, inline images and
// long Chinese text, in bodies the worker pool parses (above workers.convert_threshold_bytes) and bodies
// parsed on the main thread. The upstream bills each request 99% of the input its reservation priced
// (worked out here with the gateway's own functions), the most a correct reservation allows. What must
// hold: the stored spend never passes the budget, and once everything settled, a request the
// remaining budget covers is served and one it does not is refused (402), for every kind of request.
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import OpenAI from 'openai';
import Anthropic from '@anthropic-ai/sdk';
import { startTestGateway, type TestGateway } from './helpers/gateway.ts';
import { decodeForReservation, reservedInput, reservedPrompt } from '../src/http/reservation-estimate.ts';
import type { AttemptTarget } from '../src/engine/plan.ts';
import type { ClientFormat } from '../src/formats/codec.ts';
import { png } from './helpers/image-headers.ts';

type Rec = Record<string, any>;
const ADMIN = 'budget-probe-sdk-admin-key-0123456789';
const REDIS_URL = process.env.REDIS_URL || 'redis://127.0.0.1:6379';
const PROMPT = 0.000001; const COMPLETION = 0.000002; const MAX_TOKENS = 16;
const ZH = '我们今天讨论人工智能的发展历史和未来的方向。机器学习是一种让计算机从数据中学习的技术。';
const zh = (chars: number, salt: string): string => `${salt} ${ZH.repeat(Math.ceil(chars / ZH.length)).slice(0, chars)}`;

/** The upstream: bills each request the input given for its marker (`#probe-N#` in the body), after a short wait so requests overlap. */
async function startBillingUpstream(): Promise<{ url: string; bills: Map<string, number>; calls: string[]; close(): Promise<void> }> {
  const bills = new Map<string, number>(); const calls: string[] = [];
  const server: Server = createServer((req, res) => {
    const parts: Buffer[] = [];
    req.on('data', (c: Buffer) => parts.push(c));
    req.on('end', () => {
      const body = Buffer.concat(parts).toString();
      const m = /#probe-[a-z0-9-]+#/.exec(body);
      const input = m ? bills.get(m[0]) : undefined;
      if (!m || input === undefined) { res.writeHead(500, { 'content-type': 'application/json' }).end('{"error":{"message":"unknown probe"}}'); return; }
      calls.push(m[0]);
      setTimeout(() => res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify({
        id: 'chatcmpl-probe', object: 'chat.completion', created: 1, model: 'm',
        choices: [{ index: 0, message: { role: 'assistant', content: 'ok' }, finish_reason: 'stop' }],
        usage: { prompt_tokens: input, completion_tokens: 1, total_tokens: input + 1 } })), 30);
    });
  });
  server.listen(0, '127.0.0.1');
  await new Promise((r) => server.once('listening', r));
  return { url: `http://127.0.0.1:${(server.address() as AddressInfo).port}/v1`, bills, calls, close: () => new Promise((r) => { server.closeAllConnections(); server.close(() => r()); }) };
}

for (const backend of ['memory', 'redis'] as const) describe(`a small budget holds under concurrent requests with images and Chinese text (${backend} limiter, official clients)`, () => {
  let up: Awaited<ReturnType<typeof startBillingUpstream>>; let gw: TestGateway;
  const since = new Date(Date.UTC(new Date().getUTCFullYear(), new Date().getUTCMonth(), new Date().getUTCDate())).toISOString();
  before(async () => {
    up = await startBillingUpstream();
    const pricing = { prompt: String(PROMPT), completion: String(COMPLETION) };
    gw = await startTestGateway({
      providers: [{ id: 'vis', format: 'openai-chat', base_url: up.url, models: [
        { name: 'gpt-4o-mini', pricing, context_window: 128_000, max_completion_tokens: 16_384, capabilities: { vision: true } },
        { name: 'claude-sonnet-4-5', pricing, context_window: 200_000, max_completion_tokens: 16_384, capabilities: { vision: true } }] }],
      gateway: { auth: { enabled: true, admin_key: ADMIN }, workers: { threads: 1 }, ...(backend === 'redis' ? { storage: { redis_url: REDIS_URL } } : {}) },
    });
    assert.equal(gw.services.limiter!.status().backend, backend);
  });
  after(async () => { await gw.stop(); await up.close(); });

  type Kind = { name: string; format: ClientFormat; model: string; body(marker: string): Rec };
  const KINDS: Kind[] = [
    // Pooled: a 512x512 PNG padded to 200,000 base64 characters.
    { name: 'pooled inline PNG (openai)', format: 'openai-chat', model: 'vis/gpt-4o-mini', body: (m) => ({ model: 'vis/gpt-4o-mini', max_tokens: MAX_TOKENS, messages: [{ role: 'user', content: [
      { type: 'text', text: `Describe ${m}` }, { type: 'image_url', image_url: { url: `data:image/png;base64,${png(512, 512).padEnd(200_000, 'A')}` } }] }] }) },
    { name: 'inline PNG (openai)', format: 'openai-chat', model: 'vis/gpt-4o-mini', body: (m) => ({ model: 'vis/gpt-4o-mini', max_tokens: MAX_TOKENS, messages: [{ role: 'user', content: [
      { type: 'text', text: `Describe ${m}` }, { type: 'image_url', image_url: { url: `data:image/png;base64,${png(1024, 1024)}` } }] }] }) },
    // Pooled: 60,000 Chinese characters (180 KB).
    { name: 'pooled Chinese (anthropic)', format: 'anthropic-messages', model: 'vis/claude-sonnet-4-5', body: (m) => ({ model: 'vis/claude-sonnet-4-5', max_tokens: MAX_TOKENS,
      messages: [{ role: 'user', content: zh(60_000, m) }] }) },
    { name: 'Chinese and an image by URL (anthropic)', format: 'anthropic-messages', model: 'vis/claude-sonnet-4-5', body: (m) => ({ model: 'vis/claude-sonnet-4-5', max_tokens: MAX_TOKENS,
      messages: [{ role: 'user', content: [{ type: 'text', text: zh(2_000, m) }, { type: 'image', source: { type: 'url', url: 'https://images.example.com/a.png' } }] }] }) },
  ];

  let seq = 0;
  /** A request of `kind` with its marker, the cost its reservation holds, and the input the upstream bills for it (99% of the reserved input). */
  const prepare = async (kind: Kind): Promise<{ body: Rec; cost: number }> => {
    const marker = `#probe-${backend}-${++seq}-${Date.now().toString(36)}#`;
    const body = kind.body(marker);
    const raw = Buffer.from(JSON.stringify(body));
    const cfg = gw.services.holder.current;
    const entry = cfg.models.get(kind.model)!;
    const prompt = raw.length >= cfg.workers.convertThresholdBytes
      ? reservedPrompt(null, raw.length, await gw.services.convert!.prepare(raw, kind.format, cfg, true))
      : reservedPrompt(decodeForReservation(kind.format, body), raw.length, null);
    const input = reservedInput(prompt, { entry } as AttemptTarget);
    up.bills.set(marker, Math.floor(input * 0.99));
    return { body, cost: input * PROMPT + MAX_TOKENS * COMPLETION };
  };
  const send = async (apiKey: string, kind: Kind, body: Rec): Promise<number> => {
    try {
      if (kind.format === 'openai-chat') await new OpenAI({ baseURL: `${gw.url}/v1`, apiKey, maxRetries: 0 }).chat.completions.create(body as any);
      else await new Anthropic({ baseURL: gw.url, apiKey, maxRetries: 0 }).messages.create(body as any);
      return 200;
    } catch (e) {
      const status = (e as { status?: number }).status;
      if (typeof status !== 'number') throw e;
      return status;
    }
  };
  const spent = async (id: string, served: number): Promise<number> => {
    for (let i = 0; i < 200; i++) {
      const rows = await gw.services.store!.sql.all('SELECT cost_usd FROM inferences WHERE key_id = ? AND status = 200', [id]) as Rec[];
      if (rows.length >= served) return Number(await gw.services.store!.keySpend(id, since));
      await new Promise((r) => setTimeout(r, 25));
    }
    throw new Error('records not written');
  };

  test('16 requests at once on a budget for about half of them: spend within the budget, then each kind served or refused by what is left', async () => {
    const burst = await Promise.all(KINDS.flatMap((k) => [0, 1, 2, 3].map(async () => ({ kind: k, ...(await prepare(k)) }))));
    const total = burst.reduce((s, r) => s + r.cost, 0);
    const budget = (total / 2).toFixed(6);
    const kr = await fetch(`${gw.url}/admin/keys`, { method: 'POST', headers: { authorization: `Bearer ${ADMIN}`, 'content-type': 'application/json' },
      body: JSON.stringify({ name: `probe-${backend}`, budget_usd: budget, budget_period: 'day' }) });
    assert.equal(kr.status, 201, await kr.clone().text());
    const key = await kr.json() as { id: string; key: string };
    const statuses = await Promise.all(burst.map((r) => send(key.key, r.kind, r.body)));
    for (const s of statuses) assert.ok(s === 200 || s === 402, `status ${s}`);
    const served = statuses.filter((s) => s === 200).length;
    assert.ok(served > 0 && served < burst.length, `served ${served} of ${burst.length}`);
    assert.equal(up.calls.length >= served, true);
    let count = served;
    let left = Number(budget) - await spent(key.id, count);
    assert.ok(left >= -1e-9, `spent past the budget by $${-left}`);
    // Settled: each kind again, one at a time; served exactly when the budget left covers its reservation.
    for (const kind of KINDS) {
      const { body, cost } = await prepare(kind);
      const s = await send(key.key, kind, body);
      if (cost <= left - 1e-6) assert.equal(s, 200, `${kind.name}: $${cost} with $${left} left was refused`);
      else if (cost > left + 1e-6) assert.equal(s, 402, `${kind.name}: $${cost} with $${left} left was served`);
      if (s === 200) left = Number(budget) - await spent(key.id, ++count);
      assert.ok(left >= -1e-9, `spent past the budget by $${-left}`);
    }
  });
});
