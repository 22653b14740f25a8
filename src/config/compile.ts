// Turns the validated raw documents into the compiled Config: providers with their mapping closures,
// the model index, fallbacks and server settings. Runs once per load; never on the request path.
import type { CatalogModel } from '../catalog/types.ts';
import type { WireFormat } from '../formats/codec.ts';
import { compileMapping } from '../mapping/compile.ts';
import { DEFAULT_FEEDBACK_LIMITS } from '../feedback/limits.ts';
import type { RawConfig, RawProvider } from './load.ts';
import type { Config, ModelEntry, Provider, UpstreamAuth } from './types.ts';
import type { Env } from './env.ts';

type Obj = Record<string, unknown>;
const obj = (v: unknown): Obj => (v && typeof v === 'object' ? v as Obj : {});

const DEFAULT_PATHS: Record<WireFormat, { chat: string | null; embeddings: string | null }> = {
  'openai-chat': { chat: '/chat/completions', embeddings: '/embeddings' },
  'anthropic-messages': { chat: null, embeddings: null },
  'gemini': { chat: null, embeddings: null },
  'bedrock-converse': { chat: null, embeddings: null },
};

export function compileConfig(raw: RawConfig, env: Env = process.env): Config {
  const g = raw.gateway;
  const server = obj(g.server);
  const auth = obj(g.auth);
  const storage = obj(g.storage);
  const writer = obj(storage.writer);
  const up = obj(g.upstream);
  const ej = obj(up.ejection);
  const workers = obj(g.workers);
  const reload = obj(g.reload);

  const providers = new Map<string, Provider>();
  const models = new Map<string, ModelEntry>();
  const byName = new Map<string, string[]>();
  for (const p of raw.providers) {
    if (p.doc.enabled === false) continue;
    const provider = compileProvider(p.doc, p.file);
    providers.set(provider.id, provider);
    const overrides = p.doc.model_overrides ?? {};
    const all = [...(p.catalog?.models ?? []).map((m) => m as unknown as CatalogModel), ...(p.doc.models ?? []).map(withDefaults)];
    for (const m of all) {
      const o = overrides[m.name];
      if (o?.enabled === false) continue;
      const id = `${provider.id}/${m.name}`;
      models.set(id, { id, provider, upstream: o?.upstream ?? m.upstream ?? m.name, model: m });
      const list = byName.get(m.name);
      if (list) list.push(id); else byName.set(m.name, [id]);
    }
  }

  return {
    version: raw.hash,
    loadedAt: new Date().toISOString(),
    files: raw.files,
    dir: raw.dir,
    providersDir: raw.providersDir,
    server: {
      host: env.HOST || (server.host as string | undefined) || '127.0.0.1',
      port: env.PORT !== undefined && env.PORT !== '' ? Number(env.PORT) : (server.port as number | undefined) ?? 8080,
      legacyPrefix: (server.legacy_prefix as string | undefined) ?? '/api/openai',
      bodyLimitBytes: (server.body_limit_bytes as number | undefined) ?? 10 * 1024 * 1024,
      jsonMaxDepth: (server.json_max_depth as number | undefined) ?? 64,
      headersTimeoutMs: (server.headers_timeout_ms as number | undefined) ?? 10_000,
      requestTimeoutMs: (server.request_timeout_ms as number | undefined) ?? 120_000,
      keepAliveTimeoutMs: (server.keep_alive_timeout_ms as number | undefined) ?? 65_000,
      maxHeaderBytes: (server.max_header_bytes as number | undefined) ?? 16_384,
      shutdownGraceMs: (server.shutdown_grace_ms as number | undefined) ?? 15_000,
    },
    auth: {
      enabled: (auth.enabled as boolean | undefined) ?? true,
      adminKey: (auth.admin_key as string | undefined) || env.GATEWAY_ADMIN_KEY || '',
      modelsPublic: (auth.models_public as boolean | undefined) ?? true,
    },
    storage: {
      sqlitePath: (storage.sqlite_path as string | undefined) || env.GATEWAY_DB || './data/gateway.db',
      databaseUrl: (storage.database_url as string | undefined) || env.DATABASE_URL || '',
      redisUrl: (storage.redis_url as string | undefined) || env.REDIS_URL || '',
      logBodies: (storage.log_bodies as 'none' | 'metadata' | 'full' | undefined) ?? 'metadata',
      writer: {
        batchSize: (writer.batch_size as number | undefined) ?? 256,
        flushMs: (writer.flush_ms as number | undefined) ?? 250,
        maxQueue: (writer.max_queue as number | undefined) ?? 50_000,
      },
    },
    upstream: {
      connectTimeoutMs: (up.connect_timeout_ms as number | undefined) ?? 5000,
      firstByteTimeoutMs: (up.first_byte_timeout_ms as number | undefined) ?? 60_000,
      idleTimeoutMs: (up.idle_timeout_ms as number | undefined) ?? 60_000,
      totalTimeoutMs: (up.total_timeout_ms as number | undefined) ?? 600_000,
      maxAttempts: (up.max_attempts as number | undefined) ?? 3,
      retryBudgetRatio: (up.retry_budget_ratio as number | undefined) ?? 0.2,
      retryBudgetFloor: (up.retry_budget_floor as number | undefined) ?? 10,
      retryAfterCapMs: (up.retry_after_cap_ms as number | undefined) ?? 2000,
      connectionsPerOrigin: (up.connections_per_origin as number | undefined) ?? 128,
      ejection: {
        consecutiveFailures: (ej.consecutive_failures as number | undefined) ?? 5,
        baseMs: (ej.base_ms as number | undefined) ?? 5000,
        maxMs: (ej.max_ms as number | undefined) ?? 60_000,
      },
    },
    reload: { watch: (reload.watch as boolean | undefined) ?? true, debounceMs: (reload.debounce_ms as number | undefined) ?? 200 },
    workers: {
      threads: (workers.threads as number | undefined) ?? 1,
      convertThresholdBytes: (workers.convert_threshold_bytes as number | undefined) ?? 262_144,
      feedbackThresholdBytes: (workers.feedback_threshold_bytes as number | undefined) ?? DEFAULT_FEEDBACK_LIMITS.poolMinBytes,
    },
    providers,
    models,
    byName,
    fallbacks: new Map(Object.entries((g.fallbacks ?? {}) as Record<string, string[]>)),
    listingCache: new Map(),
  };
}

function compileProvider(doc: RawProvider, file: string): Provider {
  const url = new URL(doc.base_url);
  const basePath = url.pathname.replace(/\/+$/, '');
  const format = doc.format as WireFormat;
  const paths = obj(doc.paths);
  const a = doc.auth as Obj;
  const auth: UpstreamAuth = a.type === 'header' ? { type: 'header', name: a.name as string, prefix: (a.prefix as string | undefined) ?? '' }
    : a.type === 'query' ? { type: 'query', name: a.name as string }
    : a.type === 'transform' ? { type: 'transform', transform: a.transform as string, options: (a.options ?? {}) as Record<string, string> }
    : a.type === 'none' ? { type: 'none' } : { type: 'bearer' };
  return {
    id: doc.id,
    name: doc.name as string,
    format,
    baseUrl: `${url.origin}${basePath}`,
    origin: url.origin,
    basePath,
    apiKey: doc.api_key ?? '',
    auth,
    headers: (doc.headers ?? {}) as Record<string, string>,
    query: new URLSearchParams((doc.query ?? {}) as Record<string, string>).toString(),
    paths: {
      chat: (paths.chat as string | undefined) ?? DEFAULT_PATHS[format].chat,
      embeddings: (paths.embeddings as string | undefined) ?? DEFAULT_PATHS[format].embeddings,
      passthrough: (paths.passthrough as string | undefined) ?? null,
    },
    modelInBody: (doc.model_in_body as boolean | undefined) ?? true,
    forwardHeaders: ((doc.forward_headers ?? []) as string[]).map((h) => h.toLowerCase()).filter((h) => !NEVER_FORWARD.has(h)),
    mapping: compileMapping(doc.mappings ?? []),
    file,
  };
}

/** Credentials and hop-by-hop headers are never relayed, whatever a provider file says. */
const NEVER_FORWARD = new Set(['authorization', 'x-api-key', 'api-key', 'cookie', 'host', 'content-length', 'connection', 'x-goog-api-key']);

const EPOCH = '1970-01-01T00:00:00+00:00';

/** Hand-written models may leave fields out; unknown dates are the epoch and prices are "0" (free/local). */
function withDefaults(m: Record<string, unknown>): CatalogModel {
  const price = (k: string): string => ((m.pricing as Record<string, string> | undefined)?.[k]) ?? '0';
  const caps = obj(m.capabilities);
  const mods = obj(m.modalities);
  const added = (m.added_at as string | undefined) ?? EPOCH;
  return {
    name: m.name as string,
    ...(m.upstream ? { upstream: m.upstream as string } : {}),
    ...(m.display_name ? { display_name: m.display_name as string } : {}),
    created: Math.floor(Date.parse(added) / 1000),
    added_at: added,
    updated_at: (m.updated_at as string | undefined) ?? added,
    reliability_tier: (m.reliability_tier as 1 | 2 | undefined) ?? 1,
    context_window: (m.context_window as number | undefined) ?? 8192,
    max_completion_tokens: (m.max_completion_tokens as number | undefined) ?? 4096,
    modalities: { input: (mods.input as string[] | undefined) ?? ['text'], output: (mods.output as string[] | undefined) ?? ['text'] },
    capabilities: {
      tools: (caps.tools as boolean | undefined) ?? false, vision: (caps.vision as boolean | undefined) ?? false,
      reasoning: (caps.reasoning as boolean | undefined) ?? false, structured_output: (caps.structured_output as boolean | undefined) ?? false,
      prompt_caching: (caps.prompt_caching as boolean | undefined) ?? false,
    },
    pricing: {
      prompt: price('prompt'), completion: price('completion'), image: price('image'), request: price('request'),
      web_search: price('web_search'), internal_reasoning: price('internal_reasoning'), input_cache_read: price('input_cache_read'),
      input_cache_write: price('input_cache_write'), input_cache_write_1h: price('input_cache_write_1h'),
    },
    ...(m.cache_min_tokens !== undefined ? { cache_min_tokens: m.cache_min_tokens as number } : {}),
  };
}
