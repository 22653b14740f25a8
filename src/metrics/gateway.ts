// The gateway's metric set, served at /metrics. Names carry the `gateway_` prefix; label values are
// bounded (served model ids, provider names, routes), and cost is an exact decimal counter.
import type { WriterStats } from '../records/writer.ts';
import type { WriteRetryStats } from '../responses/write-retries.ts';
import { Registry } from './registry.ts';

const DURATION_BUCKETS = [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60, 120, 300];
const TTFT_BUCKETS = [0.05, 0.1, 0.25, 0.5, 1, 2, 3, 5, 10, 30, 60];
/** A routing decision takes tens of microseconds; long texts counted in slices take milliseconds. */
const DECISION_BUCKETS = [0.00005, 0.0001, 0.00025, 0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05];

/** What the router's gauges read: its state version, and its decision queue (null without a store). */
export type RouterGauges = { version: () => number; recording: () => { pending: number; dropped: number } | null };

/** Builds a fresh set (tests use their own); the process-wide one is exported below. */
export function createGatewayMetrics(opts: { maxSeries?: number } = {}) {
  const registry = new Registry(opts);
  let writer: (() => WriterStats) | null = null;
  let router: RouterGauges | null = null;
  let storedResponses: (() => WriteRetryStats) | null = null;
  let storeRetries: (() => number | undefined) | null = null;
  let storeDiscarded: (() => number | undefined) | null = null;
  const m = {
    registry,
    requestsTotal: registry.counter('gateway_requests_total', 'Requests answered, by route, served model, provider and final HTTP status.',
      ['route', 'model', 'provider', 'status']),
    requestDuration: registry.histogram('gateway_request_duration_seconds', 'Time from request received to the last byte sent.',
      ['route', 'provider'], DURATION_BUCKETS),
    timeToFirstToken: registry.histogram('gateway_time_to_first_token_seconds', 'Time from request received to the first content byte sent (streams).',
      ['route', 'provider'], TTFT_BUCKETS),
    tokensTotal: registry.counter('gateway_tokens_total', 'Tokens by type (input, output, cache_read, cache_write, reasoning) and provider.',
      ['type', 'provider']),
    costUsdTotal: registry.decimalCounter('gateway_cost_usd_total', 'Cost in USD charged by providers, summed exactly.', ['provider']),
    upstreamErrorsTotal: registry.counter('gateway_upstream_errors_total', 'Failed upstream attempts by provider and reason (timeout, status_5xx, connect ...).',
      ['provider', 'reason']),
    fallbacksTotal: registry.counter('gateway_fallbacks_total', 'Times a request moved on from a failed provider to the next target.', ['from_provider']),
    configReloadsTotal: registry.counter('gateway_config_reloads_total', 'Configuration reloads by result (ok, invalid, unchanged).', ['result']),
    limiterErrorsTotal: registry.counter('gateway_limiter_errors_total', 'Errors talking to the shared limiter (Redis); requests then follow storage.redis_fail_open.', []),
    limiterBreakerState: registry.gauge('gateway_limiter_breaker_state', 'The Redis limiter\'s circuit breaker: 1 for its current state (closed, open, half-open), 0 for the others.', ['state']),
    limiterBreakerOpenedTotal: registry.counter('gateway_limiter_breaker_opened_total', 'Times the Redis limiter\'s circuit breaker opened (Redis failed, hung or dropped the connection).', []),
    rateLimitedTotal: registry.counter('gateway_rate_limited_total', 'Requests refused by a key limit, by reason (rpm, tpm, budget).', ['reason']),
    budgetTrimmedTotal: registry.counter('gateway_budget_trimmed_total', 'Requests served without some targets of their plan because the key\'s remaining budget could not cover them (router: router mode; named: a named model\'s fallbacks).', ['mode']),
    /** Every HTTP request by route pattern (never the raw path: bounded) and status: feedback, model listing, admin and ops routes included. */
    httpRequestsTotal: registry.counter('gateway_http_requests_total', 'HTTP requests answered, by route pattern (_unmatched for no route) and status.', ['route', 'status']),
    dependencyUp: registry.gauge('gateway_dependency_up', 'Last readiness probe per dependency (database, redis, writer, auth, draining): 1 ok, 0 failing.', ['dependency']),
    ready: registry.gauge('gateway_ready', '1 when /health/ready answers 200 (every required dependency ok), else 0.'),
    routerDecisionsTotal: registry.counter('gateway_router_decisions_total', 'Routed requests (model "router") by the model chosen first and why it was first: utility (the ranking), explored (the exploration share), affinity (conversation affinity held it).',
      ['model', 'reason']),
    routerNoRouteTotal: registry.counter('gateway_router_no_route_total', 'Routed requests refused because no candidate qualified, once per constraint that excluded candidates (policy rules as policy, none when there were no candidates).',
      ['constraint']),
    routerDecisionSeconds: registry.histogram('gateway_router_decision_seconds', 'Time to decide a routed request that got a plan, from its body read to the plan (long new text measured in slices included).',
      [], DECISION_BUCKETS),
    routerTrainingRunsTotal: registry.counter('gateway_router_training_runs_total', 'Router training passes on this replica by result (stored, nothing_new, raced: another replica stored that version first, failed).',
      ['result']),
    /** Points the router's gauges (state version, decisions waiting to be recorded and dropped) at a live router; until then they render no sample. */
    attachRouter(g: RouterGauges): void { router = g; },
    /** Points the writer gauges at a live writer; until then they render no sample. */
    attachWriter(stats: () => WriterStats): void { writer = stats; },
    /** Points the stored-response write gauges at a live response store; until then they render no sample. */
    attachStoredResponses(stats: () => WriteRetryStats): void { storedResponses = stats; },
    /** Points the store's read retries at a live store; no sample until then, nor on SQLite (it has none). */
    attachStore(store: { readonly readRetries?: number; readonly discardedConnections?: number }): void {
      storeRetries = () => store.readRetries;
      storeDiscarded = () => store.discardedConnections;
    },
  };
  registry.collected('gateway_writer_queue_depth', 'Inference records and feedback rows waiting to be written.', 'gauge',
    () => (writer ? writer().queued : null));
  registry.collected('gateway_writer_dropped_total', 'Records dropped because the queue was full or the store refused them.', 'counter',
    () => (writer ? writer().dropped : null));
  registry.collected('gateway_writer_flushed_total', 'Records and feedback rows written to the store.', 'counter',
    () => (writer ? writer().flushed : null));
  registry.collected('gateway_writer_failures_total', 'Failed batch writes (each is retried with back-off).', 'counter',
    () => (writer ? writer().failures : null));
  registry.collected('gateway_stored_response_writes_waiting', 'Stored responses (POST /v1/responses, store: true) whose write failed, waiting for a retry; served from memory meanwhile.', 'gauge',
    () => (storedResponses ? storedResponses().waiting : null));
  registry.collected('gateway_stored_response_write_failures_total', 'Failed writes of stored responses, first attempts and retries.', 'counter',
    () => (storedResponses ? storedResponses().failures : null));
  registry.collected('gateway_stored_response_writes_dropped_total', 'Stored responses given up unwritten: past the retry queue\'s bound, or refused by the database.', 'counter',
    () => (storedResponses ? storedResponses().dropped : null));
  registry.collected('gateway_store_read_retries_total', 'PostgreSQL reads run once more because their connection was lost under them (a terminated backend, a failover, a cut idle connection).', 'counter',
    () => storeRetries?.() ?? null);
  registry.collected('gateway_store_connections_discarded_total', 'Idle PostgreSQL connections discarded because another connection of the pool was lost (the same drop likely took them).', 'counter',
    () => storeDiscarded?.() ?? null);
  registry.collected('gateway_router_state_version', 'Version of the learned router state this replica routes with (every replica should show the same).', 'gauge',
    () => (router ? router.version() : null));
  registry.collected('gateway_router_decisions_pending', 'Routed requests\' decisions waiting for the router\'s worker to record them.', 'gauge',
    () => router?.recording()?.pending ?? null);
  registry.collected('gateway_router_decisions_dropped_total', 'Routed requests\' decisions dropped unrecorded (the queue\'s bound, 20,000, passed while the worker or the store fell behind).', 'counter',
    () => router?.recording()?.dropped ?? null);
  return m;
}

export type GatewayMetrics = ReturnType<typeof createGatewayMetrics>;

export const metrics: GatewayMetrics = createGatewayMetrics();
export const {
  registry, requestsTotal, requestDuration, timeToFirstToken, tokensTotal, costUsdTotal, upstreamErrorsTotal, fallbacksTotal,
  configReloadsTotal, rateLimitedTotal,
} = metrics;
export const attachWriter = (stats: () => WriterStats): void => metrics.attachWriter(stats);
