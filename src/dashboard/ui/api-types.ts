// The admin API's wire types (/admin/api/v1/...): the one contract between the server (src/http/admin-api)
// and the dashboard's typed client (api.ts). Money is an exact decimal string; times are ISO 8601 UTC.

export type Role = 'admin' | 'member';

export type UserView = {
  id: string; email: string; name: string; role: Role; created_at: string; password_changed_at: string; disabled_at: string | null;
};

export type SessionView = {
  signed_in: true; user: UserView; csrf_token: string;
  /** Who authenticated this call: a dashboard session or the admin key (scripts). */
  via: 'session' | 'admin_key';
  settings: { log_bodies: 'none' | 'metadata' | 'full'; retention_days: number | null; body_retention_days: number | null; storage: string };
};

/** GET /session without a session (none sent, expired or revoked): a normal state, answered 200. */
export type SignedOut = { signed_in: false; user: null };

export type BudgetPeriod = 'day' | 'week' | 'month' | 'total';

export type KeyStats = {
  /** Spend in the key's current budget period (this month without a budget); the period's start and end (UTC; null for a total budget). */
  period_spend_usd: string; period_start: string | null; period_end: string | null;
  requests_24h: number; errors_24h: number; spend_24h_usd: string; spend_7d_usd: string;
  /** When the budget runs out at the last 7 days' mean daily rate; null without budget or spend. */
  runs_out_at: string | null; budget_used_ratio: number | null;
};

export type KeyView = {
  id: string; name: string; prefix: string; status: 'active' | 'expired' | 'revoked';
  created_at: string; last_used_at: string | null; expires_at: string | null; revoked_at: string | null;
  allowed_models: string[]; budget_usd: string | null; budget_period: BudgetPeriod | null;
  rpm_limit: number | null; tpm_limit: number | null;
  owner: { id: string; email: string } | null;
  /** Set while a rotated key's previous secret still works. */
  previous_secret_valid_until: string | null;
  stats: KeyStats;
};

export type KeyInput = {
  name?: string; allowed_models?: string[]; budget_usd?: string | null; budget_period?: BudgetPeriod | null;
  rpm_limit?: number | null; tpm_limit?: number | null; expires_at?: string | null; owner_id?: string | null;
};

export type CreatedKey = { key: string; record: KeyView };

export const USAGE_GROUPS = ['none', 'key', 'model', 'provider', 'route', 'user'] as const;
export type UsageGroup = (typeof USAGE_GROUPS)[number];
export const BUCKETS = ['hour', 'day', 'week', 'month'] as const;
export type Bucket = (typeof BUCKETS)[number];

export type UsageMetrics = {
  requests: number; errors: number; input_tokens: number; output_tokens: number; cache_read_tokens: number;
  cache_write_tokens: number; reasoning_tokens: number; cost_usd: string;
  error_rate: number | null; latency_ms: Percentiles; ttft_ms: Percentiles;
};
export type Percentiles = { p50: number | null; p95: number | null; p99: number | null; mean: number | null };

export type UsageSeries = { group: string; label: string; totals: UsageMetrics; points: UsageMetrics[] };

export type UsageReport = {
  from: string; to: string; bucket: Bucket; tz: string; group: UsageGroup;
  /** Start of each bucket (ISO, UTC instant of the local bucket start). */
  buckets: string[];
  totals: UsageMetrics; total_series: UsageMetrics[];
  /** The top groups by cost (then requests); the remainder is summed in `other` when there is one. */
  groups: UsageSeries[]; other: UsageSeries | null;
};

export type AttemptView = { provider: string; model: string; status: number | null; error: string | null; latency_ms: number };

export type RequestSummary = {
  id: string; created_at: string; key_id: string | null; key_name: string | null; route: string; requested_model: string;
  served_model: string | null; provider: string | null; status: number; error_code: string | null; stream: boolean;
  latency_ms: number; ttft_ms: number | null; input_tokens: number; output_tokens: number; cost_usd: string; attempts: number;
  /** The answer did not finish normally (client hang-up, upstream cut or error, timeout); tokens are what it consumed. */
  partial: boolean;
  /** The router chose the model (a decision is recorded; in the live tail: the request asked for "router"). */
  routed: boolean;
};

export type RequestPage = {
  data: RequestSummary[];
  /** Pass as `cursor` for the next (older) page; null when the range is exhausted. */
  next_cursor: string | null;
  /** A page stops after scanning a bounded number of rows even with fewer matches: the time it got to. */
  scanned_to: string | null;
};

export type CostLine = { kind: string; tokens: number; price_per_million_usd: string; cost_usd: string };

export type FeedbackView = { id: string; metric: string; type: string; value: string; reason: string | null; created_at: string };

export type RequestDetail = RequestSummary & {
  client_format: string; attempts_detail: AttemptView[]; cache_read_tokens: number; cache_write_tokens: number;
  reasoning_tokens: number; finish_reason: string | null; metadata: Record<string, unknown> | null;
  extra: Record<string, unknown> | null; client_ip: string | null; request_body: string | null; response_body: string | null;
  /** The cost by token kind at the model's current catalog prices (null when the model is not in the catalog). */
  cost_breakdown: CostLine[] | null; cost_breakdown_matches: boolean | null;
  feedback: FeedbackView[];
  /** The router's decision for `router` requests (candidates, estimates, reason), when recorded. */
  routing: RouterDecisionView | null;
  key_owner: string | null;
};

/** What the router recorded for one request (src/router/explain.ts recordedDecision), typed for the detail view. */
export type RouterDecisionView = {
  chosen: string | null;
  /** Willingness to pay W: the router picked the candidate maximising 10 * W * quality - expected cost (null: best quality). */
  willingness_to_pay: number | null; policy: string | null; prompt_kind: string | null; state_version: number | null;
  /** Chosen by exploration (a share of traffic tries others), not by the highest utility. */
  explored: boolean;
  /** The model a cached prompt prefix favoured, if any. */
  affinity: string | null;
  chosen_quality: number | null; chosen_cost_usd: number | null; input_tokens: number | null; token_method: string | null; expected_output_tokens: number | null;
  /** Candidates considered, and how many each constraint excluded (every count, though only the first few are listed). */
  candidates: number | null; excluded_by: Record<string, number>;
  /** The plan's targets the key's budget could not cover, left out of the attempts. */
  budget_dropped: string[];
  /** Targets tried in order, each with the output cap that keeps the request within max_cost. */
  plan: Array<{ model: string; max_output_tokens: number | null }>;
  included: Array<{ model: string; quality: number | null; expected_cost_usd: number | null; utility: number | null }>;
  excluded: Array<{ constraint: string; model: string; expected_cost_usd: number | null; min_cost_usd: number | null }>;
  /** The stored JSON as it is (fields newer than this view included). */
  raw: unknown;
};

/** POST /router/preview: what the router would choose for a prompt, as a key would get it (nothing is called or recorded). */
export type RouterPreview = { decision: RouterDecisionView; defaults_applied: string | null; key_id: string | null };

export type TailEvent = RequestSummary;

export type ModelInfo = {
  id: string; provider: string; name: string; display_name: string | null; context_window: number; max_completion_tokens: number;
  input_modalities: string[]; output_modalities: string[]; capabilities: Record<string, boolean>;
  /** USD per million tokens by price kind (prompt, completion, input_cache_read, ...). */
  prices_per_million: Record<string, string>; added_at: string; updated_at: string; reliability_tier: number;
  status: string; unpriced: boolean;
};

export type MetricStat = {
  metric: string; type: 'boolean' | 'float' | 'comment'; count: number; mean: number | null; ci_low: number | null; ci_high: number | null;
};

export type ModelPerformance = {
  model: string; requests: number; errors: number; error_rate: number | null; cost_usd: string; cost_per_request_usd: string | null;
  latency_ms: Percentiles; ttft_ms: Percentiles; output_tokens_per_request: number | null; metrics: MetricStat[];
};

export type ModelComparison = { from: string; to: string; metrics: string[]; models: ModelPerformance[] };

/** Feedback on one of the router's quality signals (router.quality_signals) for a chosen model's routed requests. */
export type RouterFeedbackStat = { metric: string; type: 'boolean' | 'float' | 'comment'; count: number; mean: number | null; rate: number | null };

/** One model the router chose: its share of the routed requests and how those requests went. */
export type RouterModelShare = {
  model: string; requests: number; share: number | null;
  /** What its requests cost (stored records), in total and per request. */
  cost_usd: string; cost_per_request_usd: string | null;
  /** The router's estimates when it chose the model, averaged: expected cost (USD) and quality. */
  predicted_cost_usd: number | null; predicted_quality: number | null;
  errors: number; fallbacks: number; explored: number;
  feedback: RouterFeedbackStat[];
};

/** How often a constraint excluded candidates: decisions where it excluded at least one, and candidates excluded in all. */
export type RouterConstraintCount = { constraint: string; decisions: number; share: number | null; candidates: number };

/** A learned state version (router_state) and the decisions made with it. */
export type RouterStateVersion = { version: number; decisions: number; first_at: string; last_at: string };

/** Routed requests in one time bucket: decisions, those whose answer was an error (status >= 400), their exact cost. */
export type RouterPoint = { requests: number; errors: number; cost_usd: string };

/** A model the router chose for a prompt kind, and its share of that kind's routed requests. */
export type RouterKindModel = { model: string; requests: number; share: number | null };

/** Routed requests of one detected prompt kind (code, math, chat...): how many, how they went, which models the router chose. */
export type RouterKind = {
  kind: string; requests: number;
  /** Of all routed requests in the range. */
  share: number | null;
  errors: number; error_rate: number | null; cost_usd: string; cost_per_request_usd: string | null;
  /** Requests of the kind no candidate could serve. */
  no_route: number;
  /** The most chosen models for the kind (top 3); the rest summed in `other`. */
  models: RouterKindModel[]; other: { models: number; requests: number; share: number | null } | null;
};

/** How a learned state came to be: null when trained; else an admin's rollback to `from_version` or reset to the priors. */
export type RouterStateOrigin = { kind: 'rollback' | 'reset'; from_version: number | null; by: string; reason: string | null };

/** A stored learned-state version (GET /router/states, admins). */
export type RouterStoredState = {
  version: number; created_at: string; outcomes: number;
  /** Size of its quality model (characters of the stored text). */
  bytes: number;
  /** The latest rollback or reset it descends from. */
  restored_at: string | null;
  origin: RouterStateOrigin | null;
};

/** GET /router/states: the stored versions, newest first, and the one this replica routes with. */
export type RouterStates = { data: RouterStoredState[]; serving_version: number | null };

/** GET /router/providers: the providers as the answering replica's router sees them now. */
export type RouterProviderNow = {
  provider: string; ejected: boolean; ejected_until: string | null; consecutive_failures: number;
  /** Measured over about the last 20 attempts (what policies read as candidate.latency_ms / error_rate). */
  latency_ms: number | null; error_rate: number;
};
export type RouterProviders = { data: RouterProviderNow[]; as_of: string };

/** GET /router: the router as a whole over a time window (the caller's keys only, for members). */
export type RouterOverview = {
  /** The window asked for, rounded out to whole UTC hours (the rollups' rows). */
  from: string; to: string;
  /** Every request started in the window, routed or not, and the routed ones (a decision is recorded). */
  requests: number; routed: number; routed_share: number | null;
  /** Routed requests no candidate could serve (every one excluded). */
  no_route: number;
  /** Routed requests that ended in an error (status >= 400), and what the routed requests cost (exact, in all and per routed request). */
  errors: number; cost_usd: string; cost_per_request_usd: string | null;
  /** Decisions with more than one attempt (the first target failed and the plan moved on). */
  fallbacks: number;
  /** Chosen by exploration; with a cached-prefix model known (affinity), and where that model was chosen. */
  explored: number; affinity_known: number; affinity_chosen: number;
  /** The most chosen models (top N); the rest summed in `other`. */
  models: RouterModelShare[]; other: { models: number; requests: number; cost_usd: string } | null;
  constraints: RouterConstraintCount[];
  /** The newest state versions used (top N) and how many were used in all. */
  state_versions: RouterStateVersion[]; state_version_count: number;
  /** The feedback metrics the router learns from (router.quality_signals). */
  quality_signals: string[];
  /** The time series: bucket starts (in `tz`, as GET /usage) and per bucket the routed requests, errors and cost. */
  bucket: Bucket; tz: string; buckets: string[]; series: RouterPoint[];
  /** Every prompt kind with routed requests in the range, most requests first. */
  kinds: RouterKind[];
};

export type ApiErrorBody = { error: { message: string; type: string; param: string | null; code: string } };
