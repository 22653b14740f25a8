// The compiled configuration: plain objects and closures built once per load; the request path reads only these.
import type { CatalogModel } from '../catalog/types.ts';
import type { WireFormat } from '../formats/codec.ts';
import type { CompiledMapping, MappingRow } from '../mapping/compile.ts';

export type LogBodies = 'none' | 'metadata' | 'full';

export type ServerSettings = {
  host: string; port: number; legacyPrefix: string; bodyLimitBytes: number; jsonMaxDepth: number;
  headersTimeoutMs: number; requestTimeoutMs: number; keepAliveTimeoutMs: number; maxHeaderBytes: number;
  shutdownGraceMs: number;
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
  modelInBody: boolean;
  /** Lower-cased client header names relayed upstream (never credentials). */
  forwardHeaders: string[];
  mapping: CompiledMapping;
  /** The declared rows `mapping` was compiled from: plain data, so a worker thread can compile them too. */
  mappingRows: readonly MappingRow[];
  file: string;
};

/** One servable model: the catalog record plus the provider that serves it. */
export type ModelEntry = {
  id: string;               // provider/name
  provider: Provider;
  upstream: string;
  model: CatalogModel;
};

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
    writer: { batchSize: number; flushMs: number; maxQueue: number };
  };
  upstream: UpstreamSettings;
  reload: { watch: boolean; debounceMs: number };
  workers: { threads: number; convertThresholdBytes: number; feedbackThresholdBytes: number };
  providers: Map<string, Provider>;
  models: Map<string, ModelEntry>;
  /** Bare model name -> every provider/name serving it (for the prefix-required error and the router). */
  byName: Map<string, string[]>;
  fallbacks: Map<string, string[]>;
  /** Serialised GET /v1/models bodies, built lazily once per config version. */
  listingCache: Map<string, Buffer>;
};
