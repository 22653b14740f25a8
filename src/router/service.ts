// The router as the HTTP layer uses it: route() turns a validated `model: "router"` body into a
// decision and an attempt plan (400s for bad router fields or when nothing qualifies), rank() is the
// dry run, completed() records the decision and feeds health, affinity and learning.
import type { Config } from '../config/types.ts';
import type { CanonicalRequest } from '../formats/canonical.ts';
import { clientCodecFor } from '../formats/registry.ts';
import { GatewayError } from '../gateway-error.ts';
import type { InferenceOutcome } from '../engine/context.ts';
import { metrics as processMetrics, type GatewayMetrics } from '../metrics/gateway.ts';
import type { AttemptTarget } from '../engine/plan.ts';
import type { OpenStoreOptions } from '../store/open.ts';
import type { SqlRunner } from '../store/sql-runner.ts';
import type { KeyRecord } from '../store/types.ts';
import { countLater, DEFER_CHARS, estimateLater, warmTokenizers } from '../tokens/index.ts';
import { isoFromMs } from '../util/iso-time.ts';
import { Affinity } from './affinity.ts';
import { AffinityShare } from './affinity-share.ts';
import { InlineBackend, WorkerBackend, type RouterBackend } from './backend.ts';
import { decide, noRouteError, SHOWN, type Decision, type HealthView } from './decide.ts';
import { DecisionWriter } from './decision-writer.ts';
import { decisionHeaders, rankBody, recordedDecision, roundRecorded, type RecordedDecision } from './explain.ts';
import { RouterLearning } from './learning.ts';
import type { StoredState } from './store.ts';
import { describeDefaults, parseRouterParams, withDefaults, type RouterParams } from './params.ts';
import { ProviderStats } from './provider-stats.ts';
import { RouterMetrics } from './router-metrics.ts';
import { viewRequest, type RequestView } from './request-view.ts';
import { ALL, defaultsFor, type RouterSettings } from './settings.ts';
import type { CompiledPolicy } from './policy.ts';

/** A routed request's ranking is built whole when its record lists more candidates than a decision shows by default. */
const ranksAll = (cfg: Config): boolean => cfg.router.recordCandidates > SHOWN;

export type Routed = {
  decision: Decision;
  view: RequestView;
  canonical: CanonicalRequest;
  targets: AttemptTarget[];
  headers: Record<string, string>;
  keyId: string | null;
  /** Router fields taken from gateway.yaml's defaults and where from (describeDefaults), shown as x-router-defaults. */
  defaultsApplied: string | null;
  /** The plan's targets the key's budget could not cover (dropped before dispatch), recorded with the decision. */
  budgetDropped?: string[];
};

type Read = { params: RouterParams; req: CanonicalRequest; view: RequestView };
type Decided = Omit<Routed, 'targets' | 'headers'>;

export type RouterServiceOptions = {
  /** The store's queries, for the inline backend (tests, workers.threads 0). */
  sql: SqlRunner | null;
  /** The store's options: decisions, retention and learning then run in the router's worker with its own connection. */
  storeOptions?: OpenStoreOptions;
  settings: () => RouterSettings;
  isEjected: (provider: string) => boolean;
  useWorker?: boolean;
  /** Share conversation affinity with the other replicas through this Redis (storage.redis_url). */
  redis?: { url: string; prefix: string };
  onError?: (what: string, e: unknown) => void;
  /** A rollback or reset of the learned state adopted (src/router/state-restore.ts). */
  onRestored?: (s: StoredState) => void;
  /** The gateway's metrics the router's decisions and training show in (default: the process-wide set). */
  metrics?: GatewayMetrics;
};

/**
 * A client body as ranking reads it; router mode is served on the chat-completions, messages and
 * responses routes. `nativeOnly`: what only a server of the client's format itself can act on (a
 * Responses conversation's hosted-tool items), which keeps the request to candidates that relay it.
 */
function decodeClient(format: string, body: Record<string, unknown>): { req: CanonicalRequest; nativeOnly: readonly string[]; uncounted: readonly string[] } {
  if (format !== 'openai-chat' && format !== 'anthropic-messages' && format !== 'openai-responses') {
    throw new GatewayError('invalid_parameter', 'model "router" is served on /v1/chat/completions, /v1/messages and /v1/responses', { param: 'model' });
  }
  const codec = clientCodecFor(format);
  const read = codec.readForRanking ? codec.readForRanking(body) : { req: codec.decodeRequest(body), nativeOnly: NONE, uncounted: NONE };
  // An ask only the client's own format answers (log probabilities, an audio answer, ...): a translated
  // target would refuse it (src/workers/convert-core.ts), so it keeps the request to native candidates too.
  const ask = read.req.native_only;
  return ask === undefined ? read : { ...read, nativeOnly: [...read.nativeOnly, `'${ask.param}'`] };
}

const NONE: readonly string[] = Object.freeze([]);

/** The policy a key routes with: the first key_policies glob matching its name, else default_policy. */
export function policyFor(s: RouterSettings, key: KeyRecord | null): CompiledPolicy | null {
  if (key) for (const kp of s.keyPolicies) if (kp.pattern.test(key.name)) return s.policies.get(kp.policy) ?? null;
  return s.defaultPolicy ? s.policies.get(s.defaultPolicy) ?? null : null;
}

export class RouterService {
  readonly learning: RouterLearning;
  readonly stats = new ProviderStats();
  readonly affinity: Affinity;
  readonly #writer: DecisionWriter | null;
  readonly #backend: RouterBackend | null;
  readonly #share: AffinityShare | null;
  readonly #o: RouterServiceOptions;
  readonly #metrics: RouterMetrics;
  readonly health: HealthView;

  constructor(o: RouterServiceOptions) {
    this.#o = o;
    const s = o.settings();
    this.affinity = new Affinity(s.affinity.ttlMs, s.affinity.maxEntries);
    const backend = this.#backend = o.storeOptions && o.useWorker !== false ? new WorkerBackend(o.storeOptions) : o.sql ? new InlineBackend(o.sql) : null;
    const metrics = this.#metrics = new RouterMetrics(o.metrics ?? processMetrics, { version: () => this.learning.state.version, recording: () => this.recording() });
    this.learning = new RouterLearning({ backend, settings: o.settings, ...(o.onError ? { onError: o.onError } : {}), onTrained: (r) => metrics.trained(r), ...(o.onRestored ? { onRestored: o.onRestored } : {}) });
    this.#share = o.redis ? new AffinityShare(o.redis.url, this.affinity, {
      prefix: o.redis.prefix,
      onError: (e) => o.onError?.('affinity sharing (redis)', e),
    }) : null;
    this.#writer = backend ? new DecisionWriter((chunk) => backend.writeDecisions(chunk), { onError: (e) => o.onError?.('decision writer', e) }) : null;
    this.health = {
      isEjected: o.isEjected,
      latencyMs: (p) => this.stats.latencyMs(p),
      errorRate: (p) => this.stats.errorRate(p),
    };
  }

  /** Decisions waiting for the router's worker to record them, and those dropped past the queue's bound; null without a store. */
  recording(): { pending: number; dropped: number } | null {
    return this.#writer ? { pending: this.#writer.pending, dropped: this.#writer.dropped } : null;
  }

  async start(): Promise<void> {
    // The exact encodings load here, before the server listens: loading them blocks the event loop
    // 0.4-0.6 s (the module's rank tables are built synchronously), which on first use would fall on
    // live requests. Cost: ~21 MB of live heap in every gateway.
    await Promise.all([this.learning.start(), this.#share?.start(), warmTokenizers().catch((e: unknown) => this.#o.onError?.('tokenizer load', e))]);
  }

  /** Applies settings that changed on reload (affinity bounds); policies and the rest are read per request. */
  reconfigure(s: RouterSettings): void { this.affinity.configure(s.affinity.ttlMs, s.affinity.maxEntries); }

  /** What a decision reads of the request (the router fields, the canonical request, its features). */
  #read(cfg: Config, body: Record<string, unknown>, format: string, key: KeyRecord | null, route: string): Read {
    const params = withDefaults(parseRouterParams(body), defaultsFor(cfg.router, key));
    const { req, nativeOnly, uncounted } = decodeClient(format, body);
    // max_cost caps the answer by what the prompt leaves of the bound: a prompt whose tokens cannot all
    // be counted could bill past it (the bill is held at the bound, the operator paying the rest).
    if (params.maxCost !== null && uncounted.length > 0) {
      throw new GatewayError('invalid_parameter', `'max_cost' cannot be enforced: the tokens of ${uncounted.slice(0, 3).join(', ')}${uncounted.length > 3 ? ` and ${uncounted.length - 3} more` : ''} cannot be counted before the call (sealed or binary content); leave max_cost out, or the item`, { param: 'max_cost' });
    }
    return { params, req, view: viewRequest(req, params, key, route, (body.metadata ?? null) as Record<string, unknown> | null, nativeOnly, format) };
  }

  #decide(cfg: Config, { params, req, view }: Read, key: KeyRecord | null, fullRanking: boolean, deferChars?: number): Decided {
    const settings = cfg.router;
    const st = this.learning.state;
    let decision;
    try {
      decision = decide({
        cfg, settings, params, view, policy: policyFor(settings, key), quality: st.quality, output: st.output,
        health: this.health, maxAttempts: cfg.upstream.maxAttempts, fullRanking, key,
        affinity: settings.affinity.enabled ? this.affinity.lookup(key?.id ?? null, req) : null,
        deferChars,
      });
    } catch (e) {
      // A name in gateway.yaml's default models list (a catalog refresh retired it, say): say where it came from.
      if (params.fromDefaults?.models !== undefined && e instanceof GatewayError && e.param?.startsWith('models[')) {
        throw new GatewayError(e.code, `${e.message} (the list is gateway.yaml's router defaults for this key: the request set no models)`, { param: e.param });
      }
      throw e;
    }
    decision.stateVersion = st.version;
    return { decision, view, canonical: req, keyId: key?.id ?? null, defaultsApplied: describeDefaults(params.fromDefaults) };
  }

  /** A routed request's plan; throws GatewayError 400 (bad router fields, or no candidate qualifies). */
  route(cfg: Config, body: Record<string, unknown>, format: string, key: KeyRecord | null, route: string, id: string): Routed {
    const t0 = performance.now();
    return this.#plan(id, this.#decide(cfg, this.#read(cfg, body, format, key, route), key, ranksAll(cfg)), t0);
  }

  /**
   * route() for the HTTP routes: the same decision, with long new text measured in slices with the
   * event loop free between them: its estimate (texts of ESTIMATE_LATER_CHARS and more) before the
   * decision, and, when a max_cost bound needs it counted exactly (over DEFER_CHARS), its exact count:
   * the decision stops at the bound, the text is counted, and the request is decided on the counts.
   * Synchronous (no promise) when there is nothing to measure later. `counted` false: a look at the
   * choice that sends nothing (count_tokens, src/http/router-mode.ts routedModel), left out of the metrics.
   */
  routeSliced(cfg: Config, body: Record<string, unknown>, format: string, key: KeyRecord | null, route: string, id: string, counted = true): Routed | Promise<Routed> {
    const t0 = counted ? performance.now() : null;
    const d = this.#decideSliced(cfg, this.#read(cfg, body, format, key, route), key, ranksAll(cfg));
    return d instanceof Promise ? d.then((x) => this.#plan(id, x, t0)) : this.#plan(id, d, t0);
  }

  /** The decision with long new text measured in slices first (see routeSliced); synchronous when there is none. */
  #decideSliced(cfg: Config, read: Read, key: KeyRecord | null, fullRanking: boolean): Decided | Promise<Decided> {
    // Long new text is estimated in slices first (the decision's estimates then come from the cache).
    const later = estimateLater(read.view.parts);
    return later ? later.then(() => this.#decideCounted(cfg, read, key, fullRanking)) : this.#decideCounted(cfg, read, key, fullRanking);
  }

  /** The decision; when a max_cost bound left long new text to count (Decision.deferred), it is counted in slices and the request decided again. */
  #decideCounted(cfg: Config, read: Read, key: KeyRecord | null, fullRanking: boolean): Decided | Promise<Decided> {
    const d = this.#decide(cfg, read, key, fullRanking, DEFER_CHARS);
    const deferred = d.decision.deferred;
    if (!deferred) return d;
    // Decided again on the counts (the request read once). Should the caches have dropped a text meanwhile, it is encoded now.
    return countLater(deferred).then(() => this.#decide(cfg, read, key, fullRanking));
  }

  /** The decision's explanation headers, with x-router-defaults when gateway.yaml's defaults gave fields. */
  #headers(id: string, d: Decided): Record<string, string> {
    const headers = decisionHeaders(id, d.decision);
    if (d.defaultsApplied) headers['x-router-defaults'] = d.defaultsApplied;
    return headers;
  }

  /**
   * The attempt plan of a routed request's decision: the one place its metrics are recorded, when
   * `startedAt` (performance.now() at its body read) is given (the dry run has no plan).
   */
  #plan(id: string, d: Decided, startedAt: number | null): Routed {
    if (startedAt !== null) this.#metrics.decided(d.decision, startedAt);
    const headers = this.#headers(id, d);
    if (d.decision.plan.length === 0) {
      const err = noRouteError(d.decision);
      Object.assign(err.headers, headers);
      // A routed request nothing qualified for is a decision too: recorded with no model chosen (the
      // Router page's no_route, and the constraints that left nothing).
      if (startedAt !== null) this.refused(id, d, err.status);
      throw err;
    }
    const targets: AttemptTarget[] = [];
    for (const t of d.decision.plan) {
      const target: AttemptTarget = { entry: t.candidate.entry };
      if (t.maxOutputTokens !== undefined) target.maxOutputTokens = t.maxOutputTokens;
      if (t.bound) target.bound = t.bound;
      targets.push(target);
    }
    return { ...d, targets, headers };
  }

  /** POST /v1/router/rank: the same decision without calling any model (long new text measured in slices, as routeSliced does). */
  async rank(cfg: Config, body: Record<string, unknown>, format: string, key: KeyRecord | null, route: string, id: string): Promise<{ body: Record<string, unknown>; headers: Record<string, string> }> {
    const d = await this.#decideSliced(cfg, this.#read(cfg, body, format, key, route), key, true);
    return { body: { ...rankBody(id, d.decision, cfg.router.priors), defaults_applied: d.defaultsApplied }, headers: this.#headers(id, d) };
  }

  /**
   * The dashboard's dry run: the same decision as rank(), as the request detail shows a recorded one
   * (every candidate listed, figures rounded as stored), without calling any model or recording it.
   */
  async preview(cfg: Config, body: Record<string, unknown>, format: string, key: KeyRecord | null, route: string): Promise<{ decision: RecordedDecision; defaultsApplied: string | null }> {
    const d = await this.#decideSliced(cfg, this.#read(cfg, body, format, key, route), key, true);
    return { decision: roundRecorded(recordedDecision(d.decision, [], ALL)), defaultsApplied: d.defaultsApplied };
  }

  /** Every request's attempts (routed or not) feed the measured latency and error rate per provider. */
  observe(outcome: InferenceOutcome): void { this.stats.observe(outcome.attempts); }

  /**
   * After a routed answer (or failure): record the decision with the answer's status and exact cost
   * (the bookkeeper's decimal string, for the dashboard's router rollups), remember affinity (observe() measured it).
   */
  completed(id: string, r: Routed, outcome: InferenceOutcome, costUsd: string): void {
    const served = outcome.served;
    const servedCand = served ? r.decision.plan.find((t) => t.candidate.entry === served)?.candidate ?? null : null;
    // With affinity off nothing is looked up, so nothing is remembered (or shared with the other replicas).
    if (servedCand && outcome.status === 200 && r.decision.chosen && servedCand.caps.prompt_caching && this.#o.settings().affinity.enabled) {
      // Only a prompt the provider can cache is worth following: below the model's minimum nothing is cached.
      const tokens = r.decision.ranked.find((x) => x.cand === servedCand)?.inputTokens ?? 0;
      if (tokens >= servedCand.cacheMinTokens) this.affinity.remember(r.keyId, r.canonical, servedCand.id, tokens);
    }
    this.#writer?.enqueue({
      inferenceId: id, createdAt: isoFromMs(Date.now()), keyId: r.keyId, servedModel: served?.id ?? null,
      canonical: servedCand?.canonical ?? null, kind: r.view.features.kind, status: outcome.status, costUsd,
      ...(r.budgetDropped ? { budgetDropped: r.budgetDropped } : {}),
    }, r.view.features, r.decision, outcome.attempts, this.#o.settings().recordCandidates);
  }

  /**
   * A routed request refused before any attempt (nothing qualified, or after its decision the key's
   * budget or rate limit refused it): its decision recorded with that status, no model served, no cost,
   * so its x-router-decision-id names a stored decision and the router's rollups count it.
   */
  refused(id: string, r: Decided, status: number): void {
    this.#writer?.enqueue({
      inferenceId: id, createdAt: isoFromMs(Date.now()), keyId: r.keyId, servedModel: null, canonical: null,
      kind: r.view.features.kind, status, costUsd: '0',
    }, r.view.features, r.decision, [], this.#o.settings().recordCandidates);
  }

  /** Writes queued decisions now (tests, shutdown). */
  async flush(): Promise<void> { await this.#writer?.flush(); }

  async close(): Promise<void> {
    await this.#writer?.close();
    await this.learning.close();
    await this.#backend?.close();
    await this.#share?.close();
  }
}
