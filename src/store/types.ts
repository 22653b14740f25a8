// The storage contract: query families for keys, inference records, usage aggregates and feedback.
// Implemented by sqlite.ts (node:sqlite, default) and postgres.ts (pg, when DATABASE_URL is set);
// one test suite runs against both.
import type { SqlRunner } from './sql-runner.ts';

export type KeyRecord = {
  id: string;               // public id, also the key's prefix part: sk-gw-<id>-<secret>
  name: string;
  hash: string;             // hex SHA-256 of the whole key
  createdAt: string;        // ISO 8601
  lastUsedAt: string | null;
  expiresAt: string | null;
  revokedAt: string | null;
  allowedModels: string[];  // glob patterns over provider/model ids; empty = all
  budgetUsd: string | null; // exact decimal string; null = unlimited
  budgetPeriod: 'day' | 'week' | 'month' | 'total' | null;
  rpmLimit: number | null;
  tpmLimit: number | null;
};

export type AttemptRecord = {
  provider: string; model: string; status: number | null; error: string | null; latencyMs: number;
};

export type InferenceRecord = {
  id: string;                 // UUIDv7, also the response id
  createdAt: string;          // ISO 8601
  keyId: string | null;
  route: string;              // e.g. /v1/chat/completions
  clientFormat: string;       // openai-chat | anthropic-messages | passthrough
  requestedModel: string;
  servedModel: string | null; // provider/model that answered
  provider: string | null;
  attempts: AttemptRecord[];
  status: number;             // final HTTP status sent to the client
  errorCode: string | null;
  latencyMs: number;
  ttftMs: number | null;
  stream: boolean;
  inputTokens: number;
  outputTokens: number;
  cacheReadTokens: number;
  cacheWriteTokens: number;
  reasoningTokens: number;
  costUsd: string;            // exact decimal string
  finishReason: string | null;
  metadata: Record<string, unknown> | null;
  extra: Record<string, unknown> | null;
  clientIp: string | null;
  requestBody: string | null;  // per config body logging (none | metadata | full); secrets never
  responseBody: string | null;
  /** The answer did not finish normally (client hang-up, upstream cut or error, timeout); tokens are what it consumed. Absent = false. */
  partial?: boolean;
};

/** The slice of an inference that feedback needs; also served from memory before the record is flushed. */
export type InferenceRef = { id: string; keyId: string | null; servedModel: string | null; createdAt: string };

export type MetricType = 'boolean' | 'float' | 'comment';

export type FeedbackRow = {
  id: string;                 // feedback UUID (returned in feedback_ids)
  inferenceId: string;
  keyId: string | null;
  metric: string;             // flattened key, e.g. "quality.accuracy"
  type: MetricType;
  value: string;              // 'true'/'false', a float as text, or the comment
  reason: string | null;
  tags: Record<string, string>;
  optimize: 'max' | 'min';
  createdAt: string;
};

export type UsageQuery = { since: string; until: string; keyId?: string; groupBy: 'model' | 'key' | 'day' };
export type UsageRow = {
  group: string; requests: number; errors: number; inputTokens: number; outputTokens: number;
  cacheReadTokens: number; cacheWriteTokens: number; costUsd: string;
};

export type FeedbackStatsQuery = { since: string; until: string; model?: string; metric?: string };
export type FeedbackStatsRow = {
  model: string; metric: string; type: MetricType; count: number;
  mean: number | null;        // floats and booleans (true = 1)
  rate: number | null;        // booleans: share of true
};

export interface Store {
  readonly kind: 'sqlite' | 'postgres';
  /** PostgreSQL: reads run again after their connection was lost (src/store/pg-read-retry.ts); absent on SQLite. */
  readonly readRetries?: number;
  /** PostgreSQL: idle connections discarded because another of the pool's was lost (src/store/pg-pool-health.ts); absent on SQLite. */
  readonly discardedConnections?: number;
  /**
   * Plain queries in either dialect (`?` placeholders), for features that keep their own tables
   * (src/store/sql-runner.ts): they write their queries once instead of in both store classes.
   */
  readonly sql: SqlRunner;
  /** Applies versioned migrations; safe when several replicas start at once. */
  migrate(): Promise<void>;
  close(): Promise<void>;
  /** Resolves when the database answers a trivial query (readiness, and telling an outage from a refused row). */
  ping(): Promise<void>;

  insertKey(k: KeyRecord): Promise<void>;
  getKey(id: string): Promise<KeyRecord | null>;
  listKeys(): Promise<KeyRecord[]>;
  revokeKey(id: string, at: string): Promise<boolean>;
  touchKeys(lastUsed: Array<{ id: string; at: string }>): Promise<void>;
  /** Spend of a key since `since` (exact decimal string), for budget enforcement at start-up. */
  keySpend(id: string, since: string): Promise<string>;

  insertInferences(recs: InferenceRecord[]): Promise<void>;
  getInference(id: string): Promise<InferenceRef | null>;
  listInferences(q: { limit: number; before?: string; keyId?: string }): Promise<InferenceRecord[]>;
  usage(q: UsageQuery): Promise<UsageRow[]>;

  insertFeedback(rows: FeedbackRow[]): Promise<void>;
  feedbackStats(q: FeedbackStatsQuery): Promise<FeedbackStatsRow[]>;
}
