// The catalog refresh tests' config: anthropic and openai list their models from the model-list mock,
// openrouter and a keyless local server (allow_unpriced) chat with the OpenAI mock; refresh endpoints
// point at the mock. Shared by the single-gateway and the two-replica (PostgreSQL) refresh tests.
import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { stringify } from 'yaml';
import { KEYS, type MockModelLists } from '../mocks/model-lists.ts';
import type { MockUpstream } from '../mocks/server.ts';

const catalogFile = (id: string): string => new URL(`../../providers/catalog/${id}.yaml`, import.meta.url).pathname;

/** A config dir: anthropic and openai list from the lists mock; openrouter and a keyless local server chat with the OpenAI mock. */
export function writeRefreshConfig(dir: string, lists: MockModelLists, chat: MockUpstream, storage: Record<string, unknown>, extra: { sources?: string[]; overrides?: Record<string, unknown>; refresh?: Record<string, unknown> } = {}): string {
  const providers = join(dir, 'providers');
  mkdirSync(providers, { recursive: true });
  const write = (id: string, doc: Record<string, unknown>): void => writeFileSync(join(providers, `${id}.yaml`), stringify({ id, name: id, ...doc }));
  write('anthropic', { format: 'anthropic-messages', base_url: `${lists.url}/v1`, api_key: KEYS.anthropic, auth: { type: 'header', name: 'x-api-key' }, headers: { 'anthropic-version': '2023-06-01' }, catalog: catalogFile('anthropic') });
  write('openai', { format: 'openai-chat', base_url: `${lists.url}/v1`, api_key: KEYS.openai, auth: { type: 'bearer' }, catalog: catalogFile('openai') });
  write('openrouter', { format: 'openai-chat', base_url: chat.url, api_key: 'sk-or-test', auth: { type: 'bearer' }, catalog: catalogFile('openrouter'), ...(extra.overrides ? { model_overrides: extra.overrides } : {}) });
  write('local', { format: 'openai-chat', base_url: chat.url, auth: { type: 'none' }, allow_unpriced: true, models: [{ name: 'tiny', added_at: '2025-01-01T00:00:00+00:00' }] });
  const file = join(dir, 'gateway.yaml');
  writeFileSync(file, stringify({
    version: 1, providers_dir: './providers',
    server: { host: '127.0.0.1', port: 0 }, auth: { enabled: true, admin_key: 'admin-key-for-catalog-tests-0123456789' },
    storage: { log_bodies: 'metadata', writer: { batch_size: 50, flush_ms: 20 }, ...storage },
    workers: { threads: 0 },
    catalog: { refresh: { poll_seconds: 1, timeout_ms: 1500, openrouter_url: `${lists.url}/api/v1/models`, models_dev_url: `${lists.url}/api.json`, ...(extra.sources ? { sources: extra.sources } : {}), ...extra.refresh } },
  }));
  return file;
}

