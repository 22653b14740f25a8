// Turns the validated raw documents into the compiled Config: providers with their mapping closures,
// the model index, fallbacks and server settings. Runs once per load; never on the request path.
import { FORMAT_TOOL_IDS, type ToolIdRule } from '../formats/tool-ids.ts';
import type { CatalogModel } from '../catalog/types.ts';
import { compileCatalog, type ProviderModels } from '../catalog/compile-catalog.ts';
import { configVersion, type CatalogOverlay } from '../catalog/overlay.ts';
import type { ModelOverride } from '../catalog/overrides.ts';
import { compileCatalogSettings } from '../catalog/settings.ts';
import type { ClientFormat, WireFormat } from '../formats/codec.ts';
import { compileMapping } from '../mapping/compile.ts';
import { DEFAULT_FEEDBACK_LIMITS } from '../feedback/limits.ts';
import { SERVER_TIMEOUT_DEFAULTS, type RawConfig, type RawProvider } from './load.ts';
import type { Config, Provider, UpstreamAuth } from './types.ts';
import type { Env } from './env.ts';
import { canAuthenticate } from './credentials.ts';
import { compileRouterSettings } from '../router/settings.ts';
import { rollupRetentionOf } from '../store/rollup-retention.ts';

type Obj = Record<string, unknown>;
const obj = (v: unknown): Obj => (v && typeof v === 'object' ? v as Obj : {});
/** A validated config value, or its default when the file leaves it out. */
const pick = <T>(o: Obj, key: string, fallback: T): T => (o[key] as T | undefined) ?? fallback;

const DEFAULT_PATHS: Record<WireFormat, { chat: string | null; embeddings: string | null }> = {
  'openai-chat': { chat: '/chat/completions', embeddings: '/embeddings' },
  'anthropic-messages': { chat: null, embeddings: null },
  'gemini': { chat: null, embeddings: null },
  'bedrock-converse': { chat: null, embeddings: null },
};

/** `overlay`: the catalog refresh overlay in force (src/catalog/overlay.ts); its version is part of the config version. */
export function compileConfig(raw: RawConfig, env: Env = process.env, overlay: CatalogOverlay | null = null): Config {
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
  const catalogInputs: Array<ProviderModels<Provider>> = [];
  for (const p of raw.providers) {
    if (p.doc.enabled === false) continue;
    const provider = compileProvider(p.doc, p.file, env);
    providers.set(provider.id, provider);
    catalogInputs.push({
      provider, id: provider.id, catalog: (p.catalog?.models ?? []) as unknown as CatalogModel[], handWritten: p.doc.models ?? [],
      overrides: (p.doc.model_overrides ?? {}) as Record<string, ModelOverride>, allowUnpriced: p.doc.allow_unpriced === true,
    });
  }
  // The model index (offers, canonical models, aliases, retirements): src/catalog/compile-catalog.ts.
  const { models, byName, index: catalog } = compileCatalog(catalogInputs, overlay);

  return {
    version: configVersion(raw.hash, overlay),
    loadedAt: new Date().toISOString(),
    files: raw.files,
    dir: raw.dir,
    providersDir: raw.providersDir,
    server: {
      host: env.HOST || (server.host as string | undefined) || '127.0.0.1',
      port: env.PORT !== undefined && env.PORT !== '' ? Number(env.PORT) : pick(server, 'port', 8080),
      legacyPrefix: pick(server, 'legacy_prefix', '/api/openai'),
      bodyLimitBytes: pick(server, 'body_limit_bytes', 10 * 1024 * 1024),
      jsonMaxDepth: pick(server, 'json_max_depth', 64),
      headersTimeoutMs: pick(server, 'headers_timeout_ms', SERVER_TIMEOUT_DEFAULTS.headersMs),
      requestTimeoutMs: pick(server, 'request_timeout_ms', SERVER_TIMEOUT_DEFAULTS.requestMs),
      keepAliveTimeoutMs: pick(server, 'keep_alive_timeout_ms', 65_000),
      maxHeaderBytes: pick(server, 'max_header_bytes', 16_384),
      shutdownGraceMs: pick(server, 'shutdown_grace_ms', 15_000),
      streamKeepaliveMs: pick(server, 'stream_keepalive_ms', 15_000),
    },
    auth: {
      enabled: pick(auth, 'enabled', true),
      adminKey: (auth.admin_key as string | undefined) || env.GATEWAY_ADMIN_KEY || '',
      modelsPublic: pick(auth, 'models_public', true),
      keyRefreshMs: pick(auth, 'key_refresh_ms', 5000),
    },
    storage: {
      sqlitePath: (storage.sqlite_path as string | undefined) || env.GATEWAY_DB || './data/gateway.db',
      databaseUrl: (storage.database_url as string | undefined) || env.DATABASE_URL || '',
      redisUrl: (storage.redis_url as string | undefined) || env.REDIS_URL || '',
      redisFailOpen: pick(storage, 'redis_fail_open', true),
      logBodies: pick(storage, 'log_bodies', 'metadata'),
      writer: {
        batchSize: pick(writer, 'batch_size', 1000),
        flushMs: pick(writer, 'flush_ms', 250),
        maxQueue: pick(writer, 'max_queue', 50_000),
        maxQueueBytes: pick(writer, 'max_queue_bytes', 256 * 1024 * 1024),
      },
    },
    upstream: {
      connectTimeoutMs: pick(up, 'connect_timeout_ms', 5000),
      firstByteTimeoutMs: pick(up, 'first_byte_timeout_ms', 60_000),
      idleTimeoutMs: pick(up, 'idle_timeout_ms', 60_000),
      totalTimeoutMs: pick(up, 'total_timeout_ms', 600_000),
      maxAttempts: pick(up, 'max_attempts', 3),
      retryBudgetRatio: pick(up, 'retry_budget_ratio', 0.2),
      retryBudgetFloor: pick(up, 'retry_budget_floor', 10),
      retryAfterCapMs: pick(up, 'retry_after_cap_ms', 2000),
      connectionsPerOrigin: pick(up, 'connections_per_origin', 128),
      ejection: {
        consecutiveFailures: pick(ej, 'consecutive_failures', 5),
        baseMs: pick(ej, 'base_ms', 5000),
        maxMs: pick(ej, 'max_ms', 60_000),
      },
    },
    reload: { watch: pick(reload, 'watch', true), debounceMs: pick(reload, 'debounce_ms', 200) },
    dashboard: compileDashboard(obj(g.dashboard)),
    router: compileRouterSettings(g.router, raw.priors),
    responses: { retentionMs: Math.round(pick(obj(g.responses), 'retention_days', 30) * 86_400_000) },
    workers: {
      threads: pick(workers, 'threads', 1),
      convertThresholdBytes: pick(workers, 'convert_threshold_bytes', 147_456), // bench/convert-threshold.ts
      feedbackThresholdBytes: pick(workers, 'feedback_threshold_bytes', DEFAULT_FEEDBACK_LIMITS.poolMinBytes),
    },
    providers,
    models,
    byName,
    catalog,
    catalogSettings: compileCatalogSettings(g.catalog),
    fallbacks: new Map(Object.entries((g.fallbacks ?? {}) as Record<string, string[]>)),
    listingCache: new Map(),
  };
}

function compileDashboard(d: Obj): Config['dashboard'] {
  const r = obj(d.retention);
  return {
    enabled: pick(d, 'enabled', true),
    sessionIdleMs: pick(d, 'session_idle_minutes', 60) * 60_000,
    sessionAbsoluteMs: pick(d, 'session_absolute_hours', 12) * 3_600_000,
    trustProxy: proxyHops(d.trust_proxy),
    rotationGraceMs: pick(d, 'rotation_grace_hours', 24) * 3_600_000,
    tailPollMs: pick(d, 'tail_poll_ms', 2000),
    answerTimeoutMs: pick(d, 'answer_timeout_ms', 30_000),
    retention: {
      recordsDays: pick<number | null>(r, 'records_days', null), bodiesDays: pick<number | null>(r, 'bodies_days', null),
      ...rollupRetentionOf(r),
    },
  };
}

function compileProvider(doc: RawProvider, file: string, env: Env): Provider {
  const url = new URL(doc.base_url);
  const basePath = url.pathname.replace(/\/+$/, '');
  const format = doc.format as WireFormat;
  const paths = obj(doc.paths);
  const a = doc.auth as Obj;
  const auth: UpstreamAuth = a.type === 'header' ? { type: 'header', name: a.name as string, prefix: pick(a, 'prefix', '') }
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
      chat: pick(paths, 'chat', DEFAULT_PATHS[format].chat),
      embeddings: pick(paths, 'embeddings', DEFAULT_PATHS[format].embeddings),
      passthrough: pick(paths, 'passthrough', null),
    },
    // paths.responses: this provider also serves the Responses API, relayed as is rather than translated.
    native: typeof paths.responses === 'string' ? { 'openai-responses': paths.responses } : {},
    modelInBody: pick(doc, 'model_in_body', true),
    forwardHeaders: ((doc.forward_headers ?? []) as string[]).map((h) => h.toLowerCase()).filter((h) => !NEVER_FORWARD.has(h)),
    forwardQuery: compileForwardQuery(doc.forward_query, doc.query, auth),
    mapping: compileMapping(doc.mappings ?? []),
    mappingRows: doc.mappings ?? [],
    toolCallIds: (doc.tool_call_ids as ToolIdRule | undefined) ?? FORMAT_TOOL_IDS[format],
    file,
    credentialed: canAuthenticate(auth, doc.api_key ?? '', env),
    routerEnvMissing: ((doc.router_requires_env ?? []) as string[]).filter((name) => !env[name]),
  };
}

/** forward_query entries (a name, or {name, from}); the provider's own query and auth parameters are never taken from a client. */
function compileForwardQuery(raw: unknown, own: unknown, auth: UpstreamAuth): Provider['forwardQuery'] {
  const fixed = new Set([...Object.keys((own ?? {}) as object), ...(auth.type === 'query' ? [auth.name] : [])]);
  return ((raw ?? []) as Array<string | { name: string; from?: ClientFormat[] }>)
    .map((f) => (typeof f === 'string' ? { name: f, from: [] } : { name: f.name, from: f.from ?? [] }))
    .filter((f) => !fixed.has(f.name));
}

/** Credentials and hop-by-hop headers are never relayed, whatever a provider file says. */
const NEVER_FORWARD = new Set(['authorization', 'x-api-key', 'api-key', 'cookie', 'host', 'content-length', 'connection', 'x-goog-api-key']);

/** dashboard.trust_proxy as the number of proxies in front whose headers are trusted (true: one; false or absent: none). */
function proxyHops(v: unknown): number {
  return v === true ? 1 : typeof v === 'number' ? v : 0;
}
