// Test harness: writes a temporary gateway.yaml + providers/ pointing at mock upstreams and starts an
// in-process gateway on port 0. Every test gets its own directory and SQLite file, removed in t.after.
import { mkdtempSync, mkdirSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { stringify } from 'yaml';
import { startGateway, type RunningGateway } from '../../src/serve.ts';

export type TestProvider = {
  id: string; format: 'openai-chat' | 'anthropic-messages' | 'gemini' | 'bedrock-converse'; base_url: string;
  auth?: Record<string, unknown>; api_key?: string; headers?: Record<string, string>; mappings?: unknown[];
  models?: Array<Record<string, unknown>>; paths?: Record<string, string>; model_in_body?: boolean; query?: Record<string, string>;
  forward_headers?: string[]; forward_query?: unknown[]; tool_call_ids?: Record<string, unknown>; router_requires_env?: string[];
};

export type TestGatewayOptions = {
  providers: TestProvider[];
  gateway?: Record<string, unknown>;
  env?: Record<string, string>;
};

export type TestGateway = RunningGateway & {
  dir: string; providersDir: string; writeProvider(p: TestProvider): void; configFile: string;
  /** Stops the gateway but keeps its directory (and SQLite file) for inspection; `stop()` removes both. */
  stopKeepingFiles(): Promise<void>;
};

/** Default pricing for test models: simple round prices so costs are easy to assert. */
export const TEST_PRICING = { prompt: '0.000001', completion: '0.000002', input_cache_read: '0.0000001', input_cache_write: '0.00000125', input_cache_write_1h: '0.000002' };

export function providerDoc(p: TestProvider): Record<string, unknown> {
  const auth = p.auth ?? (p.format === 'anthropic-messages' ? { type: 'header', name: 'x-api-key' }
    : p.format === 'gemini' ? { type: 'header', name: 'x-goog-api-key' }
    : p.format === 'bedrock-converse' ? { type: 'transform', transform: 'aws-sigv4', options: { region: 'us-east-1', service: 'bedrock', access_key_id: 'AKIDTEST', secret_access_key: 'secret' } }
    : { type: 'bearer' });
  return {
    id: p.id, name: p.id.toUpperCase(), format: p.format, base_url: p.base_url, api_key: p.api_key ?? 'sk-upstream-test', auth,
    ...(p.headers ? { headers: p.headers } : p.format === 'anthropic-messages' ? { headers: { 'anthropic-version': '2023-06-01' } } : {}),
    ...(p.mappings ? { mappings: p.mappings } : {}),
    ...(p.paths ? { paths: p.paths } : {}),
    ...(p.query ? { query: p.query } : {}),
    ...(p.forward_headers ? { forward_headers: p.forward_headers } : {}),
    ...(p.forward_query ? { forward_query: p.forward_query } : {}),
    ...(p.model_in_body !== undefined ? { model_in_body: p.model_in_body } : {}),
    ...(p.tool_call_ids ? { tool_call_ids: p.tool_call_ids } : {}),
    ...(p.router_requires_env ? { router_requires_env: p.router_requires_env } : {}),
    models: p.models ?? [{ name: 'test-model', pricing: TEST_PRICING, capabilities: { tools: true, reasoning: true, prompt_caching: true } }],
  };
}

export async function startTestGateway(opts: TestGatewayOptions): Promise<TestGateway> {
  const dir = mkdtempSync(join(tmpdir(), 'gw-test-'));
  const providersDir = join(dir, 'providers');
  mkdirSync(providersDir);
  const writeProvider = (p: TestProvider): void => writeFileSync(join(providersDir, `${p.id}.yaml`), stringify(providerDoc(p)));
  for (const p of opts.providers) writeProvider(p);
  const g = opts.gateway ?? {};
  const doc = {
    version: 1,
    providers_dir: './providers',
    ...g,
    server: { host: '127.0.0.1', port: 0, ...(g.server as object | undefined) },
    auth: { enabled: false, ...(g.auth as object | undefined) },
    storage: { sqlite_path: join(dir, 'gateway.db'), log_bodies: 'metadata', writer: { batch_size: 50, flush_ms: 20, max_queue: 10000 }, ...(g.storage as object | undefined) },
    upstream: { first_byte_timeout_ms: 2000, idle_timeout_ms: 2000, connect_timeout_ms: 1000, retry_after_cap_ms: 500, ...(g.upstream as object | undefined) },
    workers: { threads: 0, ...(g.workers as object | undefined) },
  };
  const configFile = join(dir, 'gateway.yaml');
  writeFileSync(configFile, stringify(doc));
  const env = { ...opts.env };
  const gw = await startGateway(configFile, env);
  const stop = gw.stop;
  return {
    ...gw, dir, providersDir, writeProvider, configFile,
    stop: async () => { const r = await stop(); rmSync(dir, { recursive: true, force: true }); return r; },
    stopKeepingFiles: async () => { await stop(); },
  };
}
