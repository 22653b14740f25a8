// A refresh source answering absurd prices (an OpenRouter price of a trillion dollars a token, $5000 a
// search; a models.dev cost of 1e300 a million): the patches carrying them are dropped and noted, the rest published.
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { loadConfig } from '../src/config/load.ts';
import { compileConfig } from '../src/config/compile.ts';
import { computeRefresh } from '../src/catalog/refresh.ts';
import { startMockModelLists, type MockModelLists } from './mocks/model-lists.ts';
import { writeRefreshConfig } from './helpers/catalog-refresh.ts';
import { startMockOpenAI } from './mocks/index.ts';
import type { MockUpstream } from './mocks/server.ts';
import { listData } from './fixtures/catalog/lists.ts';
import { readDevModel } from '../src/catalog/sources.ts';
import { devPricing } from '../src/catalog/prices.ts';
import { modelProblems } from '../src/catalog/invariants.ts';
import { modelFromPartial } from '../src/catalog/overrides.ts';
import { zeroPricing } from '../src/catalog/types.ts';

type Rec = Record<string, any>;
let lists: MockModelLists; let chat: MockUpstream; let dir: string; let file: string;
before(async () => {
  const data = listData();
  const mimo = data.openrouter.find((m) => m.id === 'xiaomi/mimo-v2-pro')!;
  (mimo.pricing as Rec).completion = '1000000000000';
  const sonnet = data.openrouter.find((m) => m.id === 'anthropic/claude-sonnet-4.5')!;
  (sonnet.pricing as Rec).web_search = '5000';
  lists = await startMockModelLists(data);
  chat = await startMockOpenAI({ authOptional: true });
  dir = mkdtempSync(join(tmpdir(), 'gw-refresh-prices-'));
  file = writeRefreshConfig(dir, lists, chat, { sqlite_path: join(dir, 'g.db') });
});
after(async () => { await lists.close(); await chat.close(); rmSync(dir, { recursive: true, force: true }); });

test('absurd prices from a refresh source are not published; sound models still are', async () => {
  const raw = loadConfig(file, {});
  const plan = await computeRefresh(raw, compileConfig(raw, {}), null, {});
  const patched = (provider: string, name: string): Rec | undefined => plan.patches[provider]?.find((p) => p.name === name) as Rec | undefined;
  assert.equal(patched('openrouter', 'xiaomi/mimo-v2-pro'), undefined, JSON.stringify(patched('openrouter', 'xiaomi/mimo-v2-pro')));
  assert.equal(patched('openrouter', 'anthropic/claude-sonnet-4.5')?.pricing?.web_search, undefined);
  const notes = plan.notes.join('\n');
  assert.match(notes, /dropped the refreshed data of openrouter\/xiaomi\/mimo-v2-pro: \[prices\] .*completion 1000000000000/);
  assert.match(notes, /dropped the refreshed data of openrouter\/anthropic\/claude-sonnet-4\.5: \[prices\] .*web_search 5000 is above/);
  // The sound ones are still published.
  assert.ok(patched('anthropic', 'claude-sonnet-5'), Object.keys(plan.patches).join());
  assert.ok(patched('openrouter', 'inclusionai/ring-2.6-1t:free'));
});

test('a models.dev cost of 1e300 a million is a price problem, shortened in the message', () => {
  const m = readDevModel('m', { cost: { input: 1e300, output: 1 } })!;
  const pricing = { ...zeroPricing(), ...devPricing(m.cost) };
  const model = { ...modelFromPartial({ name: 'm', added_at: '2025-01-01T00:00:00+00:00' }), pricing };
  const problems = modelProblems({ provider: 'p', format: 'openai-chat', model, handWritten: true }).filter((p) => p.check === 'prices');
  assert.equal(problems.length, 1, JSON.stringify(problems));
  assert.match(problems[0]!.message, /^pricing: prompt 10{39}\.\.\. \(295 digits\) is above the plausible ceiling 0\.01$/);
});

test('a price above zero below the plausible floor (1e-300 a million, a unit error) is a price problem; zero is not', () => {
  const problemsOf = (cost: { input: number; output: number }): string[] => {
    const m = readDevModel('m', { cost })!;
    const model = { ...modelFromPartial({ name: 'm', added_at: '2025-01-01T00:00:00+00:00' }), pricing: { ...zeroPricing(), ...devPricing(m.cost) } };
    return modelProblems({ provider: 'p', format: 'openai-chat', model, handWritten: true }).filter((p) => p.check === 'prices').map((p) => p.message);
  };
  const tiny = problemsOf({ input: 1e-300, output: 1 });
  assert.equal(tiny.length, 1, JSON.stringify(tiny));
  assert.match(tiny[0]!, /^pricing: prompt 0\.0{38}\.\.\. \(\d+ digits\) is below the plausible floor 0\.00000000001 a token/);
  // $0.15 a million divided by a million once more: 1.5e-13 a token.
  assert.match(problemsOf({ input: 0.15e-6, output: 0.6 }).join(), /prompt 0\.00000000000015 is below the plausible floor/);
  assert.deepEqual(problemsOf({ input: 0, output: 0 }), [], 'a free model');
  assert.deepEqual(problemsOf({ input: 0.0036, output: 0.02 }), [], 'the cheapest prices of the catalog');
});
