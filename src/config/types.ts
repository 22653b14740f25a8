// The compiled configuration: plain objects and closures built once per load; the request path reads only these.
import type { ToolIdRule } from '../formats/tool-ids.ts';
import type { ModelIndex, Offer } from '../catalog/model-index.ts';
import type { CatalogSettings } from '../catalog/settings.ts';
import type { ClientFormat, WireFormat } from '../formats/codec.ts';
import type { RouterSettings } from '../router/settings.ts';
import type { CompiledMapping, MappingRow } from '../mapping/compile.ts';

export type LogBodies = 'none' | 'metadata' | 'full';

/** dashboard.* (docs/dashboard.md): sessions, proxy trust, rotation grace, live tail and retention. */
export type DashboardSettings = {
  enabled: boolean; sessionIdleMs: number; sessionAbsoluteMs: number; /** Proxies in front whose X-Forwarded-* headers are trusted (dashboard.trust_proxy: true is 1); 0: none. */
  trustProxy: number; rotationGraceMs: number; tailPollMs: number;
  /** An admin API call not answering after this long is a 503 (a database that stopped answering). */
  answerTimeoutMs: number;
  retention: { recordsDays: number | null; bodiesDays: number | null; hourRollupsDays: number | null; dayRollupsDays: number | null };
};

export type ServerSettings = {
  host: string; port: number; legacyPrefix: string; bodyLimitBytes: number; jsonMaxDepth: number;
  headersTimeoutMs: number; requestTimeoutMs: number; keepAliveTimeoutMs: number; maxHeaderBytes: number;
  shutdownGraceMs: number;
  /** A committed stream silent towards its client this long gets a keep-alive (0: never). */
  streamKeepaliveMs: number;
};

export type UpstreamSettings = {
  connectTimeoutMs: number; firstByteTimeoutMs: number; idleTimeoutMs: number; totalTimeoutMs: number;
  maxAttempts: number; retryBudgetRatio: number; retryBudgetFloor: number; retryAfterCapMs: number; connectionsPerOrigin: number;
  ejection: { consecutiveFailures: number; baseMs: number; maxMs: number };
};

export type UpstreamAuth =
  | { type: 'bearer' } | { type: 'none' }
  | { type: 'header'; name: string; prefix: string }
  | { type: 'query'; name: string }
  | { type: 'transform'; transform: string; options: Record<string, string> };

export type Provider = {
  id: string;
  name: string;
  format: WireFormat;
  /** Base URL without a trailing slash. */
  baseUrl: string;
  origin: string;
  basePath: string;
  apiKey: string;
  auth: UpstreamAuth;
  headers: Record<string, string>;
  query: string;
  paths: { chat: string | null; embeddings: string | null; passthrough: string | null };
  /** Client formats the provider also serves itself, with their paths: such requests are relayed, not translated. */
  native: Partial<Record<ClientFormat, string>>;
  modelInBody: boolean;
  /** Lower-cased client header names relayed upstream (never credentials). */
  forwardHeaders: string[];
  /**
   * Client query parameters relayed upstream (forward_query): relayed on pass-through, and on
   * translation from the client formats in `from`. Never the provider's own query or auth parameter.
   */
  forwardQuery: ReadonlyArray<{ name: string; from: readonly ClientFormat[] }>;
  mapping: CompiledMapping;
  /** The declared rows `mapping` was compiled from: plain data, so a worker thread can compile them too. */
  mappingRows: readonly MappingRow[];
  /** The tool call ids its API accepts (provider file's `tool_call_ids`, else its format's own limits: src/formats/tool-ids.ts). */
  toolCallIds: ToolIdRule | null;
  file: string;
  /**
   * Whether its requests can authenticate, as far as config tells (src/config/credentials.ts): no auth,
   * a key set, or a signing transform with credentials named. The router routes only to such providers.
   */
  credentialed: boolean;
  /**
   * The provider file's `router_requires_env` names that are unset or empty: until they are set the
   * router leaves the provider out (a local server nobody said runs). Empty when none are missing.
   */
  routerEnvMissing: readonly string[];
};

/** One servable model: the catalog's offer (src/catalog/model-index.ts documents each field) plus the provider that serves it. */
export type ModelEntry = Offer & { provider: Provider };

export type Config = {
  version: string;          // content hash of every file read
  loadedAt: string;
  files: string[];
  dir: string;
  providersDir: string;
  server: ServerSettings;
  auth: { enabled: boolean; adminKey: string; modelsPublic: boolean; keyRefreshMs: number };
  storage: {
    sqlitePath: string; databaseUrl: string; redisUrl: string; redisFailOpen: boolean; logBodies: LogBodies;
    writer: { batchSize: number; flushMs: number; maxQueue: number; maxQueueBytes: number };
  };
  upstream: UpstreamSettings;
  reload: { watch: boolean; debounceMs: number };
  dashboard: DashboardSettings;
  /** Router mode (`model: "router"`): gateway.yaml `router:`, see docs/router.md. Applies on reload. */
  router: RouterSettings;
  /** Stored responses (POST /v1/responses): how long they are kept; 0 stores none. Read per request. */
  responses: { retentionMs: number };
  workers: { threads: number; convertThresholdBytes: number; feedbackThresholdBytes: number };
  providers: Map<string, Provider>;
  models: Map<string, ModelEntry>;
  /** Bare model name (any provider's name, alias or canonical id) -> every provider/name serving that model (the prefix-required error, the router). */
  byName: Map<string, string[]>;
  /** Canonical models with their offers, aliases and retired ids (src/catalog/model-index.ts). */
  catalog: ModelIndex;
  /** gateway.yaml `catalog:` (live refresh schedule, sources, endpoints). Applies on reload. */
  catalogSettings: CatalogSettings;
  fallbacks: Map<string, string[]>;
  /** Serialised GET /v1/models bodies, built lazily once per config version. */
  listingCache: Map<string, Buffer>;
};
