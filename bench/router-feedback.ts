// How fast feedback changes routing decisions: two models, prompts of one kind (multiple-choice
// questions from the shared router-bench dev data, else generated), N negative feedbacks on the model
// the router prefers, folded in by the same train call the background trainer makes, then the share
// of routed prompts each model gets. Run: npx node bench/router-feedback.ts
import { mkdtempSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { stringify } from 'yaml';
import { compileConfig } from '../src/config/compile.ts';
import { loadConfig } from '../src/config/load.ts';
import { decide } from '../src/router/decide.ts';
import { parseRouterParams } from '../src/router/params.ts';
import { viewRequest } from '../src/router/request-view.ts';
import { emptyState, train, type Outcome } from '../src/router/quality/index.ts';
import { scoreOf } from '../src/router/learning.ts';
import { codecFor } from '../src/formats/registry.ts';

const dir = mkdtempSync(join(tmpdir(), 'gw-rfb-'));
mkdirSync(join(dir, 'providers'));
const caps = { tools: false, vision: false, reasoning: false, structured_output: false, prompt_caching: false };
writeFileSync(join(dir, 'providers', 'p.yaml'), stringify({ id: 'p', name: 'P', format: 'openai-chat', base_url: 'http://127.0.0.1:9/v1', api_key: 'sk-bench', auth: { type: 'bearer' }, models: [
  { name: 'model-x', pricing: { prompt: '0.000003', completion: '0.000015' }, capabilities: caps, context_window: 128000, max_completion_tokens: 4096 },
  { name: 'model-y', pricing: { prompt: '0.000003', completion: '0.000015' }, capabilities: caps, context_window: 128000, max_completion_tokens: 4096 },
] }));
writeFileSync(join(dir, 'gateway.yaml'), stringify({ version: 1, providers_dir: './providers', router: { exploration: { share: 0 }, quality_signals: [{ metric: 'correct', optimize: 'max' }], learning: { feedback_settle_ms: 0 } } }));
const cfg = compileConfig(loadConfig(join(dir, 'gateway.yaml'), {}), {});

let prompts: string[] = [];
try {
  prompts = readFileSync(new URL('../../shared/router-bench/routerbench-dev.jsonl', import.meta.url), 'utf8').split('\n').filter(Boolean)
    .map((l) => JSON.parse(l) as { task: string; prompt: string }).filter((r) => r.task === 'arc-challenge').map((r) => r.prompt.slice(-600));
} catch { /* generated below */ }
if (prompts.length < 200) prompts = Array.from({ length: 300 }, (_, i) => `Question ${i}: which is heavier?\nA) a feather\nB) a brick\nC) a leaf\nD) a coin\nAnswer:`);
const health = { isEjected: () => false, latencyMs: () => null, errorRate: () => 0 };
const views = prompts.slice(0, 300).map((text) => {
  const body = { model: 'router', messages: [{ role: 'user', content: text }] };
  return viewRequest(codecFor('openai-chat').client!.decodeRequest(body), parseRouterParams(body), null, '/v1/chat/completions', null);
});
const route = (state: ReturnType<typeof emptyState>) => {
  let x = 0; let qx = 0;
  for (const view of views) {
    const d = decide({ cfg, settings: cfg.router, params: parseRouterParams({}), view, policy: null, quality: state, output: {}, health, maxAttempts: 2, affinity: null, fullRanking: true });
    if (d.chosen!.id === 'p/model-x') x++;
    qx += d.ranked.find((r) => r.id === 'p/model-x')!.q;
  }
  return { share: x / views.length, q: qx / views.length };
};
// A tie is broken by cost then catalog order: give model-x a head start so it is the one preferred.
const signal = cfg.router.qualitySignals[0]!;
const warm: Outcome[] = views.slice(0, 4).map((v, i) => ({ features: v.features, model: 'model-x', score: scoreOf('true', signal)!, time: Date.now() - 1000 + i }));
const base = train(warm, emptyState());
console.log(`prompts: ${views.length} (kind ${views[0]!.features.kind}); two models at equal price; model-x starts with 4 positive feedbacks`);
console.log('negative feedbacks on model-x | model-x q (mean) | model-x share of routed prompts');
for (const n of [0, 1, 2, 3, 5, 8, 12, 20, 40]) {
  const neg: Outcome[] = views.slice(10, 10 + n).map((v, i) => ({ features: v.features, model: 'model-x', score: scoreOf('false', signal)!, time: Date.now() + i }));
  const s = n === 0 ? base : train(neg, base);
  const r = route(s);
  console.log(`${String(n).padStart(28)} | ${r.q.toFixed(3).padStart(16)} | ${(100 * r.share).toFixed(0).padStart(5)}%`);
}
