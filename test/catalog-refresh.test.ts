// Catalog refresh end to end on one gateway (SQLite): `catalog diff` then `catalog refresh` against mock
// sources; the new models are listed and routable without a restart; unpriced models are refused where
// the operator does not allow them and for keys with a budget; failed and partial refreshes keep the
// last good catalog and show in /health and /metrics; model_overrides win over the refresh.
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { startGateway, type RunningGateway } from '../src/serve.ts';
import { runCatalogCommand } from '../src/catalog/cli.ts';
import { applyProviderList } from '../src/catalog/refresh-merge.ts';
import type { CatalogModel } from '../src/catalog/types.ts';
import { zeroPricing } from '../src/catalog/types.ts';
import { startMockModelLists, type MockModelLists } from './mocks/model-lists.ts';
import { writeRefreshConfig } from './helpers/catalog-refresh.ts';
import { startMockOpenAI } from './mocks/index.ts';
import type { MockUpstream } from './mocks/server.ts';
import { listData } from './fixtures/catalog/lists.ts';

type Rec = Record<string, any>;

let lists: MockModelLists; let chat: MockUpstream; let gw: RunningGateway; let dir: string; let file: string;
let budgetKey: string; let openKey: string;
before(async () => {
  lists = await startMockModelLists(listData());
  chat = await startMockOpenAI({ authOptional: true });
  dir = mkdtempSync(join(tmpdir(), 'gw-refresh-'));
  file = writeRefreshConfig(dir, lists, chat, { sqlite_path: join(dir, 'g.db') }, { overrides: { 'essentialai/rnj-1-instruct': { pricing: { prompt: '0.000001', completion: '0.000002' } } } });
  gw = await startGateway(file, {});
  budgetKey = (await gw.services.admin!.createKey({ name: 'budgeted', budget_usd: '5', budget_period: 'month' })).key;
  openKey = (await gw.services.admin!.createKey({ name: 'open' })).key;
});
after(async () => { await gw.stop(); await lists.close(); await chat.close(); rmSync(dir, { recursive: true, force: true }); });

const get = async (path: string): Promise<{ status: number; body: Rec }> => {
  const r = await fetch(`${gw.url}${path}`, { headers: { authorization: `Bearer ${openKey}` } });
  return { status: r.status, body: await r.json() as Rec };
};
const chatWith = async (key: string, model: string): Promise<{ status: number; body: Rec }> => {
  const r = await fetch(`${gw.url}/v1/chat/completions`, {
    method: 'POST', headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' },
    body: JSON.stringify({ model, max_tokens: 16, messages: [{ role: 'user', content: 'Hi' }] }),
  });
  return { status: r.status, body: await r.json() as Rec };
};
const cli = async (...args: string[]): Promise<{ code: number; out: string }> => {
  const lines: string[] = [];
  const code = await runCatalogCommand(args, file, (l) => lines.push(l), (l) => lines.push(l));
  return { code, out: lines.join('\n') };
};
const until = async (what: () => Promise<boolean>, ms = 8000): Promise<void> => {
  const end = Date.now() + ms;
  while (!(await what())) { if (Date.now() > end) throw new Error('timed out waiting'); await new Promise((r) => setTimeout(r, 100)); }
};
const NEW = 'openrouter/xiaomi/mimo-v2-pro';

test('catalog diff shows what a refresh would change, and stores nothing', async () => {
  const { code, out } = await cli('diff');
  assert.equal(code, 0, out);
  assert.match(out, /\+ openrouter\/xiaomi\/mimo-v2-pro \(\$0\.000001 \/ \$0\.000003 per token\)/);
  assert.match(out, /\+ anthropic\/claude-sandbox-7 \(unpriced\)/);
  assert.match(out, /provider:anthropic: 5 models in 3 pages/);
  assert.match(out, /provider:local: 6 models/);
  assert.doesNotMatch(out, /text-embedding/);
  assert.equal((await get('/v1/models/' + NEW)).status, 404);
  assert.equal(gw.services.catalog!.status().overlay_version, null);
});

test('a refresh adds models that are listed and routable without a restart; unpriced ones are guarded', async () => {
  const { code, out } = await cli('refresh');
  assert.equal(code, 0, out);
  assert.match(out, /catalog refresh ok: overlay v1; \d+ new \(\d+ unpriced\)/);
  await until(async () => (await get('/v1/models/' + NEW)).status === 200);
  const rec = (await get('/v1/models/' + NEW)).body;
  assert.deepEqual([rec.id, rec.object, rec.owned_by, typeof rec.created], [NEW, 'model', 'openrouter', 'number']);
  assert.deepEqual([rec.pricing.prompt, rec.pricing.completion, rec.max_completion_tokens < rec.context_length], ['0.000001', '0.000003', true]);
  assert.ok((await get('/v1/models?provider=openrouter')).body.data.some((m: Rec) => m.id === NEW));
  // Routable: the request reaches the upstream and is billed at the refreshed price.
  const ok = await chatWith(budgetKey, NEW);
  assert.equal(ok.status, 200, JSON.stringify(ok.body));
  assert.equal(chat.requests.at(-1)!.body && (chat.requests.at(-1)!.body as Rec).model, 'xiaomi/mimo-v2-pro');
  const cfg = gw.services.holder.current;
  assert.equal(cfg.models.get(NEW)!.routable, true);
  assert.match(cfg.version, /\.c1$/);
  // model_overrides win over OpenRouter's live price.
  assert.equal(cfg.models.get('openrouter/essentialai/rnj-1-instruct')!.model.pricing.prompt, '0.000001');
  // Unpriced: listed (flagged), never routed; refused where not allowed, and for keys with a budget.
  const sandbox = (await get('/v1/models/anthropic/claude-sandbox-7')).body;
  assert.equal(sandbox.unpriced, true);
  assert.equal(cfg.models.get('anthropic/claude-sandbox-7')!.routable, false);
  const notAllowed = await chatWith(openKey, 'anthropic/claude-sandbox-7');
  assert.deepEqual([notAllowed.status, notAllowed.body.error.code], [400, 'model_unpriced']);
  assert.match(notAllowed.body.error.message, /does not allow unpriced models/);
  const budgeted = await chatWith(budgetKey, 'local/gpt-4o');
  assert.deepEqual([budgeted.status, budgeted.body.error?.code], [400, 'model_unpriced']);
  assert.match(budgeted.body.error.message, /budget/);
  assert.equal((await chatWith(openKey, 'local/gpt-4o')).status, 200);
  // Anthropic's own list revives Opus 4.1 as deprecated (its lifecycle and date win over the offline retirement).
  const opus = cfg.models.get('anthropic/claude-opus-4-1-20250805')!;
  assert.deepEqual([opus.status, opus.model.retires_at], ['deprecated', '2027-08-05T00:00:00+00:00']);
  const health = (await get('/health')).body;
  assert.equal(health.catalog.overlay_version, 1);
  const metrics = await (await fetch(`${gw.url}/metrics`)).text();
  assert.match(metrics, /gateway_catalog_overlay_version 1/);
});

test('a failed refresh keeps the last good catalog and is reported; a partial one keeps the failed source\'s data', async () => {
  for (const r of ['openai', 'anthropic', 'openrouter', 'models.dev'] as const) lists.faults.set(r, { status: 500 });
  chat.fault({ status: 500 });
  try {
    const failed = await gw.services.catalog!.refreshNow();
    // Every source failed, but each keeps its data of the last run: the stored overlay does not change.
    assert.ok(failed && (failed.outcome === 'unchanged' || failed.outcome === 'partial'), JSON.stringify(failed));
    assert.ok(failed!.sources.filter((s) => !s.ok).every((s) => s.kept !== undefined));
    const status = gw.services.catalog!.status();
    assert.ok(status.last_run!.failed_sources.some((s) => s.source === 'openrouter' && /http: .*500/.test(s.error)), JSON.stringify(status));
    assert.equal((await get('/v1/models/' + NEW)).status, 200);
    assert.equal((await get('/health')).body.catalog.last_run.failed_sources.length >= 3, true);
  } finally { lists.faults.clear(); }
  // With nothing to fall back on (a fresh store), every source failing publishes nothing.
  for (const r of ['openai', 'anthropic', 'openrouter', 'models.dev'] as const) lists.faults.set(r, { hang: true });
  try {
    const fresh = mkdtempSync(join(tmpdir(), 'gw-refresh-fresh-'));
    const freshFile = writeRefreshConfig(fresh, lists, chat, { sqlite_path: join(fresh, 'g.db') }, { sources: ['openrouter', 'models.dev'] });
    const lines: string[] = [];
    const code = await runCatalogCommand(['refresh'], freshFile, (l) => lines.push(l), (l) => lines.push(l));
    assert.equal(code, 1);
    assert.match(lines.join('\n'), /openrouter: FAILED timeout: .* did not answer within 1500 ms/);
    assert.match(lines.join('\n'), /every source failed/);
    rmSync(fresh, { recursive: true, force: true });
  } finally { lists.faults.clear(); }
  assert.equal(gw.services.holder.current.models.has(NEW), true);
});

test('a provider list withdraws what it no longer names, only when it is the same namespace', () => {
  const m = (name: string): CatalogModel => ({
    name, created: 1, added_at: '2025-01-01T00:00:00+00:00', updated_at: '2025-01-01T00:00:00+00:00', reliability_tier: 1, context_window: 1000,
    max_completion_tokens: 100, modalities: { input: ['text'], output: ['text'] }, pricing: { ...zeroPricing(), prompt: '0.000001', completion: '0.000001' },
    capabilities: { tools: false, vision: false, reasoning: false, structured_output: false, prompt_caching: false },
  });
  const models = new Map(['a', 'b', 'c'].map((n) => [n, m(n)]));
  assert.deepEqual(applyProviderList(null, models, [{ name: 'a', facts: {} }, { name: 'b', facts: { context_window: 2000 } }], new Map()), ['c']);
  assert.equal(models.get('c')!.status, 'retired');
  assert.equal(models.get('b')!.context_window, 2000);
  // A list that shares little with the catalog (another namespace, such as Azure deployments) withdraws nothing.
  const other = new Map(['a', 'b', 'c'].map((n) => [n, m(n)]));
  assert.deepEqual(applyProviderList(null, other, [{ name: 'x', facts: {} }, { name: 'a', facts: {} }], new Map()), []);
  assert.equal(other.get('x')!.unpriced, true);
});

test('with catalog.refresh.enabled the server refreshes by itself, once per interval across replicas', async () => {
  const own = mkdtempSync(join(tmpdir(), 'gw-refresh-auto-'));
  const ownFile = writeRefreshConfig(own, lists, chat, { sqlite_path: join(own, 'g.db') }, { sources: ['openrouter'], refresh: { enabled: true, interval_minutes: 60 } });
  const auto = await startGateway(ownFile, {});
  try {
    await until(async () => auto.services.holder.current.models.has(NEW), 20_000);
    const status = auto.services.catalog!.status();
    assert.deepEqual([status.refresh_enabled, status.overlay_version, status.last_run?.outcome], [true, 1, 'ok']);
    // The next poll finds the run recent and does not refresh again.
    await new Promise((r) => setTimeout(r, 1500));
    assert.equal(auto.services.catalog!.status().overlay_version, 1);
    assert.equal(lists.requests.filter((r) => r.route === 'openrouter').length >= 1, true);
  } finally {
    await auto.stop();
    rmSync(own, { recursive: true, force: true });
  }
});
