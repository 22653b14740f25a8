// After a request: the inference record (queued to the batched writer, never awaited), metrics,
// and the limiter's settlement with the real tokens and cost.
import type { Config } from '../config/types.ts';
import type { ClientFormat } from '../formats/codec.ts';
import type { InferenceOutcome } from '../engine/context.ts';
import type { DispatchHooks } from '../engine/dispatch.ts';
import type { Reservation } from '../limits/limiter.ts';
import type { InferenceRecord, KeyRecord } from '../store/types.ts';
import { costOf } from '../catalog/cost.ts';
import { costExtrasOf, normalizeUsage } from '../engine/usage.ts';
import { isoFromMs } from '../util/iso-time.ts';
import { asGatewayError } from './envelope.ts';
import { bounded } from '../gateway-error.ts';
import type { GatewayMetrics } from '../metrics/gateway.ts';

/**
 * Conversation content is replaced by its size, so 'metadata' logging keeps parameters but no user text;
 * a parameter's string (a model name, a user id) is kept bounded, as error messages quote it.
 */
const CONTENT_FIELDS = ['messages', 'system', 'tools', 'input', 'instructions', 'prompt', 'contents'];
export function bodySummary(body: Record<string, unknown>): string | null {
  if (Object.keys(body).length === 0) return null;
  const out: Record<string, unknown> = {};
  for (const [k, v] of Object.entries(body)) {
    if (!CONTENT_FIELDS.includes(k)) out[bounded(k)] = typeof v === 'string' ? bounded(v) : v;
    else if (Array.isArray(v)) out[k] = { items: v.length, chars: JSON.stringify(v).length };
    else if (typeof v === 'string') out[k] = { chars: v.length };
  }
  return JSON.stringify(out);
}

export type RecordSink = { enqueue(rec: InferenceRecord): void };

type Common = {
  id: string; route: string; format: ClientFormat; requested: string; key: KeyRecord | null; ip: string | null;
  startedAt: number; body: Record<string, unknown>; bodyText: string | null;
};

const objOrNull = (v: unknown): Record<string, unknown> | null =>
  v !== null && typeof v === 'object' && !Array.isArray(v) ? v as Record<string, unknown> : null;

/** The series one completed request touches, resolved once per (route, model, provider, status). */
type SeriesSet = {
  requests: { inc(by?: number): void }; duration: { observe(v: number): void }; ttft: { observe(v: number): void };
  input: { inc(by?: number): void }; output: { inc(by?: number): void }; cacheRead: { inc(by?: number): void };
  cacheWrite: { inc(by?: number): void }; reasoning: { inc(by?: number): void }; cost: { add(amount: string): void };
};
const MAX_CACHED_SERIES_SETS = 4096;

export class Bookkeeper {
  readonly #sink: RecordSink | null;
  readonly #metrics: GatewayMetrics | null;
  readonly #seriesSets = new Map<string, SeriesSet>();
  readonly dispatchHooks: DispatchHooks;

  constructor(sink: RecordSink | null, metrics: GatewayMetrics | null) {
    this.#sink = sink;
    this.#metrics = metrics;
    this.dispatchHooks = {
      onUpstreamError: (provider, reason) => metrics?.upstreamErrorsTotal.inc({ provider, reason }),
      onFallback: (provider) => metrics?.fallbacksTotal.inc({ from_provider: provider }),
    };
  }

  /**
   * A request refused by authentication: counted, not recorded (an unauthenticated flood must not
   * fill the database; the record table holds what keys did).
   */
  refusedAtAuth(route: string, error: unknown): void {
    const err = asGatewayError(error);
    this.#metrics?.requestsTotal.inc({ route, model: 'unknown', provider: 'none', status: String(err.status) });
  }

  /** A request refused before any upstream call (bad input, limits). */
  rejected(c: Common & { error: unknown; resolved?: string | null }): void {
    const err = asGatewayError(c.error);
    const latency = performance.now() - c.startedAt;
    // The model label is the catalog id when the model resolved, else "unknown": a client-chosen string
    // (an unknown model name) must not become a label value (unbounded cardinality).
    this.#metrics?.requestsTotal.inc({ route: c.route, model: c.resolved ?? 'unknown', provider: 'none', status: String(err.status) });
    this.#metrics?.requestDuration.observe({ route: c.route, provider: 'none' }, latency / 1000);
    if (err.code === 'rate_limited' || err.code === 'budget_exceeded') {
      this.#metrics?.rateLimitedTotal.inc({ reason: (err as { reason?: string }).reason ?? err.code });
    }
    this.#sink?.enqueue(this.#record(c, {
      status: err.status, errorCode: err.code, latencyMs: latency, servedModel: null, provider: null, attempts: [],
      usage: null, finishReason: null, ttftMs: null, costUsd: '0', stream: c.body.stream === true, logBodies: 'metadata', responseText: null,
    }));
  }

  /** Books a finished request; returns its exact cost in USD (a decimal string, '0' when none). */
  completed(c: Common & { stream: boolean; outcome: InferenceOutcome; reservation: Reservation | null; cfg: Config }): string {
    const o = c.outcome;
    const latency = performance.now() - c.startedAt;
    const served = o.served;
    // Counts from an upstream are normalised here, the one place every answer passes, so the bill,
    // the metrics, the record and the reservation's settlement see the same sane numbers.
    const usage = o.usage ? normalizeUsage(o.usage) : null;
    let cost = '0';
    if (served && usage) {
      try { cost = costOf(served.model.pricing, usage, costExtrasOf(usage, c.body, served.model.pricing, Date.now() - latency, o.inputImages)); } catch (e) {
        console.error(`cost of ${c.id} (${served.id}) not computed: ${(e as Error).message}`);
      }
    }
    const provider = served?.provider.id ?? 'none';
    if (this.#metrics) {
      const m = this.#seriesSet(c.route, served?.id ?? c.requested, provider, o.status);
      m.requests.inc();
      m.duration.observe(latency / 1000);
      if (o.ttftMs !== null) m.ttft.observe(o.ttftMs / 1000);
      if (usage) {
        m.input.inc(usage.input_tokens);
        m.output.inc(usage.output_tokens);
        m.cacheRead.inc(usage.cache_read_input_tokens);
        m.cacheWrite.inc(usage.cache_creation_input_tokens);
        m.reasoning.inc(usage.reasoning_tokens);
        m.cost.add(cost);
      }
    }
    if (c.reservation) {
      // What was consumed settles the reservation (an answer cut short too); only an answer that
      // consumed nothing gives it back.
      if (usage) {
        void c.reservation.settle({ tokens: usage.input_tokens + usage.cache_read_input_tokens + usage.cache_creation_input_tokens + usage.output_tokens, costUsd: cost });
      } else void c.reservation.release();
    }
    const rec = this.#record(c, {
      status: o.status, errorCode: o.error?.code ?? null, latencyMs: latency, servedModel: served?.id ?? null, provider: served ? provider : null,
      attempts: o.attempts, usage, finishReason: o.finishReason, ttftMs: o.ttftMs, costUsd: cost, stream: c.stream,
      logBodies: c.cfg.storage.logBodies, responseText: o.responseText ?? null,
    });
    if (o.partial) rec.partial = true;
    this.#sink?.enqueue(rec);
    return cost;
  }

  #seriesSet(route: string, model: string, provider: string, status: number): SeriesSet {
    const key = `${route}\u0000${model}\u0000${provider}\u0000${status}`;
    let set = this.#seriesSets.get(key);
    if (set) return set;
    const m = this.#metrics!;
    set = {
      requests: m.requestsTotal.bind({ route, model, provider, status: String(status) }),
      duration: m.requestDuration.bind({ route, provider }),
      ttft: m.timeToFirstToken.bind({ route, provider }),
      input: m.tokensTotal.bind({ type: 'input', provider }),
      output: m.tokensTotal.bind({ type: 'output', provider }),
      cacheRead: m.tokensTotal.bind({ type: 'cache_read', provider }),
      cacheWrite: m.tokensTotal.bind({ type: 'cache_write', provider }),
      reasoning: m.tokensTotal.bind({ type: 'reasoning', provider }),
      cost: m.costUsdTotal.bind({ provider }),
    };
    // Label values are bounded (catalog ids, providers, statuses); the cache is bounded all the same.
    if (this.#seriesSets.size >= MAX_CACHED_SERIES_SETS) this.#seriesSets.clear();
    this.#seriesSets.set(key, set);
    return set;
  }

  #record(c: Common, r: {
    status: number; errorCode: string | null; latencyMs: number; servedModel: string | null; provider: string | null;
    attempts: InferenceRecord['attempts']; usage: InferenceOutcome['usage']; finishReason: string | null; ttftMs: number | null;
    costUsd: string; stream: boolean; logBodies: Config['storage']['logBodies']; responseText: string | null;
  }): InferenceRecord {
    const u = r.usage;
    return {
      id: c.id, createdAt: isoFromMs(Date.now() - r.latencyMs), keyId: c.key?.id ?? null, route: bounded(c.route),
      // What the client named is kept bounded: a 100 KB model name or path is not stored whole.
      clientFormat: c.format, requestedModel: bounded(c.requested), servedModel: r.servedModel, provider: r.provider, attempts: r.attempts,
      status: r.status, errorCode: r.errorCode, latencyMs: Math.round(r.latencyMs), ttftMs: r.ttftMs === null ? null : Math.round(r.ttftMs),
      stream: r.stream, inputTokens: u?.input_tokens ?? 0, outputTokens: u?.output_tokens ?? 0, cacheReadTokens: u?.cache_read_input_tokens ?? 0,
      cacheWriteTokens: u?.cache_creation_input_tokens ?? 0, reasoningTokens: u?.reasoning_tokens ?? 0, costUsd: r.costUsd,
      finishReason: r.finishReason, metadata: objOrNull(c.body.metadata), extra: objOrNull(c.body.extra), clientIp: c.ip,
      requestBody: r.logBodies === 'full' ? c.bodyText : r.logBodies === 'metadata' ? bodySummary(c.body) : null,
      responseBody: r.logBodies === 'full' ? r.responseText : null,
    };
  }
}
