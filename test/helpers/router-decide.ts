// A compiled config of a few OpenAI-format providers (no upstream is called) and a decision's input
// for a chat body, for tests that run the router's decide() in process.
import { mkdtempSync, mkdirSync, writeFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { stringify } from 'yaml';
import { compileConfig } from '../../src/config/compile.ts';
import { loadConfig } from '../../src/config/load.ts';
import type { Config } from '../../src/config/types.ts';
import type { DecideInput } from '../../src/router/decide.ts';
import { parseRouterParams } from '../../src/router/params.ts';
import { viewRequest } from '../../src/router/request-view.ts';
import { emptyState } from '../../src/router/quality/index.ts';
import { codecFor } from '../../src/formats/registry.ts';

export const caps = (o: Record<string, boolean> = {}) => ({ tools: false, vision: false, reasoning: false, structured_output: false, prompt_caching: true, ...o });
export const model = (name: string, prompt: string, completion: string, c = caps()) => ({ name, pricing: { prompt, completion }, capabilities: c, context_window: 100000, max_completion_tokens: 8000 });

/** Providers pa, pb, pc (same model names at different prices, capabilities that differ) and any `extra` ones. */
export function routerTestConfig(extra: Array<[string, unknown[]]> = []): Config {
  const dir = mkdtempSync(join(tmpdir(), 'gw-router-'));
  mkdirSync(join(dir, 'providers'));
  const providers: Array<[string, unknown[]]> = [
    ['pa', [model('gpt-4o-mini', '0.00000015', '0.0000006'), model('gpt-4o', '0.0000025', '0.00001', caps({ tools: true })), model('o3-mini', '0.0000011', '0.0000044', caps({ reasoning: true }))]],
    ['pb', [model('gpt-4o', '0.000003', '0.000012', caps({ tools: true })), model('claude-sonnet-4-5', '0.000003', '0.000015', caps({ tools: true, vision: true }))]],
    ['pc', [model('gemini-2.5-flash', '0.0000003', '0.0000025', caps({ tools: true, vision: true })), model('llama-3.3-70b', '0.0000006', '0.0000006')]],
    ...extra,
  ];
  for (const [id, models] of providers) {
    writeFileSync(join(dir, 'providers', `${id}.yaml`), stringify({ id, name: id, format: 'openai-chat', base_url: 'http://127.0.0.1:9/v1', api_key: 'sk-test', auth: { type: 'bearer' }, models }));
  }
  writeFileSync(join(dir, 'gateway.yaml'), stringify({ version: 1, providers_dir: './providers' }));
  const cfg = compileConfig(loadConfig(join(dir, 'gateway.yaml'), {}), {});
  rmSync(dir, { recursive: true, force: true });
  return cfg;
}

/** decide()'s input for a chat body routed over `cfg` (no key, no exploration, nothing learned unless `over` says). */
export function decideInput(cfg: Config, body: Record<string, unknown>, over: Partial<DecideInput> = {}): DecideInput {
  const full = { model: 'router', messages: [{ role: 'user', content: 'Explain the difference between TCP and UDP.' }], ...body };
  const params = parseRouterParams(full);
  const view = viewRequest(codecFor('openai-chat').client!.decodeRequest(full), params, null, '/v1/chat/completions', null);
  return {
    cfg, settings: { ...cfg.router, explorationShare: 0 }, params, view, policy: null, quality: emptyState(), output: {},
    health: { isEjected: () => false, latencyMs: () => null, errorRate: () => 0 }, affinity: null, maxAttempts: 3, ...over,
  };
}
