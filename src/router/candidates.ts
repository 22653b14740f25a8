// The router's candidates: every routable catalog offer with what ranking needs precomputed as
// numbers (prices per token, capabilities as bits, limits, tokenizer) in typed arrays, built once per
// config version, so a new model in the catalog (reload or catalog refresh) is a candidate from the
// next request on, and a decision reads arrays instead of objects.
import type { Config, ModelEntry, Provider } from '../config/types.ts';
import { providerEnvName } from '../config/env.ts';
import type { Pricing } from '../catalog/types.ts';
import { findOffer } from '../catalog/resolve.ts';
import { takesManyTools } from '../formats/tool-count.ts';
import { readsToolChanges } from '../formats/tool-changes.ts';
import { relayCodecFor } from '../formats/registry.ts';
import { GatewayError } from '../gateway-error.ts';
import { countingName, imageRuleFor, tokenizerFor, tokenizerKey, type ImageRule, type TokenizerId } from '../tokens/index.ts';
import type { CompiledPriors, ModelRef } from './quality/index.ts';

/** Per-token USD prices as numbers, for ranking (the bill and the hard max_cost cap use exact decimals). */
export type Prices = { input: number; output: number; cacheRead: number; cacheWrite: number; request: number };
export type PriceTierNum = { above: number; prices: Prices };

export type Candidate = {
  /** Position in CandidateSet.all (and in its table). */
  index: number;
  entry: ModelEntry;
  id: string;
  provider: string;
  /** Canonical model id: offers of one model share what is learned about it. */
  canonical: string;
  tokenizer: TokenizerId;
  tokenizerKey: string;
  /** What an image costs on this model (src/tokens/images.ts): its prompt ceiling under max_cost. */
  imageRule: ImageRule;
  /** Index of the tokenizer in CandidateSet.tokenizers (prompt tokens are counted once per tokenizer). */
  tokIndex: number;
  /** Index of the provider in CandidateSet.providers (health is read once per provider and decision). */
  provIndex: number;
  prices: Prices;
  /** Long-context tiers, ascending by threshold (the whole input above `above` bills at `prices`). */
  tiers: PriceTierNum[];
  contextWindow: number;
  maxOutput: number;
  caps: ModelEntry['model']['capabilities'];
  cacheMinTokens: number;
  /** The canonical model as the quality model sees it (shared by every offer of the model). */
  ref: ModelRef;
  /** Index of `ref` in CandidateSet.refs. */
  refIndex: number;
  /** The candidate's attributes as policies see them (`candidate.*`); dynamic fields are set per request. */
  policyView: Record<string, unknown>;
  /** `added_at` in ms since the epoch: `candidate.age_days` is worked out from it when a request is decided. */
  addedMs: number;
};

/** Capability bits of CandidateTable.caps (and of a request's needs). */
/**
 * `manyTools`: takes more than MANY_TOOLS tools (src/formats/tool-count.ts); `mcpToolChanges`: reads
 * tool changes naming Anthropic MCP tools (src/formats/tool-changes.ts); `responsesApi`: its provider
 * serves the Responses API itself (relayed as is, src/formats/registry.ts relayCodecFor), the only kind
 * of target for a Responses request holding hosted-tool items (src/formats/openai-responses/native-only.ts).
 */
export const CAP = { tools: 1, vision: 2, jsonSchema: 4, reasoning: 8, caching: 16, manyTools: 32, mcpToolChanges: 64, responsesApi: 128, chatApi: 256, messagesApi: 512 } as const;

/** Per-candidate numbers, indexed like CandidateSet.all. Prices per token as floats: ranking only. */
export type CandidateTable = {
  input: Float64Array; output: Float64Array; cacheRead: Float64Array; cacheWrite: Float64Array; request: Float64Array;
  tiered: Uint8Array; contextWindow: Float64Array; maxOutput: Float64Array; cacheMin: Float64Array;
  /** The dearest price an output token can bill at (output or reasoning, any tier): max_cost's float pre-checks. */
  outWorst: Float64Array;
  caps: Uint16Array; tok: Int32Array; ref: Int32Array; prov: Int32Array;
};

export type CandidateSet = {
  all: Candidate[];
  table: CandidateTable;
  /** 0..all.length-1: the whole catalog as an index list. */
  allIdx: Int32Array;
  /** `models` lists resolved to index lists (clients resend the same lists), bounded by LIST_BYTES. */
  lists: Map<string, Int32Array>;
  /** What `lists` holds, in bytes of keys and indices. */
  listBytes: number;
  /** Per-key (allowed_models) and per-policy results that depend only on candidate attributes, per version. */
  memo: WeakMap<object, unknown>;
  /** One ModelRef per canonical model: quality is predicted once per model, not per offer. */
  refs: ModelRef[];
  tokenizers: TokenizerId[];
  providers: string[];
  byId: Map<string, Candidate>;
  /** Bare model name (and canonical id) -> every offer of it. */
  byName: Map<string, Candidate[]>;
  /** The config's cold-start priors (router.priors_file over the shipped table). */
  priors: CompiledPriors;
};

const num = (s: string | undefined): number => (s === undefined ? 0 : Number(s));

function prices(p: Partial<Pricing>, base?: Prices): Prices {
  const input = p.prompt !== undefined ? num(p.prompt) : base?.input ?? 0;
  const read = num(p.input_cache_read);
  const write = num(p.input_cache_write);
  return {
    input,
    output: p.completion !== undefined ? num(p.completion) : base?.output ?? 0,
    // The missing-price rules of src/catalog/cost.ts: no cache price means the prompt price.
    cacheRead: read > 0 ? read : base?.cacheRead ?? input,
    cacheWrite: write > 0 ? write : base?.cacheWrite ?? input,
    request: p.request !== undefined ? num(p.request) : base?.request ?? 0,
  };
}


/** Family and maker hints for the cold-start prior: the name before its version digits, and the provider of tier-1 offers. */
function modelRef(canonical: string, e: ModelEntry, p: Prices): ModelRef {
  const family = canonical.replace(/^.*\//, '').replace(/[-_.]?\d.*$/, '') || undefined;
  return {
    id: canonical, ...(family ? { family } : {}),
    ...(e.model.reliability_tier === 1 ? { maker: e.provider.id } : {}),
    pricePerMillion: (3 * p.input + p.output) / 4 * 1e6,
  };
}

/**
 * Router-eligible: the catalog's own verdict (active, priced, callable, not hidden: Offer.routable),
 * a model that writes text, and a provider set up to serve it (setUp).
 */
export function routable(e: ModelEntry): boolean {
  return e.routable && e.model.modalities.output.includes('text') && setUp(e.provider);
}

/**
 * A provider the router may send traffic: it can authenticate (Provider.credentialed) and the
 * environment its file requires is set (Provider.routerEnvMissing: a local server nobody said runs).
 */
const setUp = (p: Provider): boolean => p.credentialed && p.routerEnvMissing.length === 0;

/** Days since `addedMs` now (`candidate.age_days`). */
export const ageDays = (addedMs: number): number => Math.max(0, (Date.now() - addedMs) / 86_400_000);

function build(cfg: Config): CandidateSet {
  const all: Candidate[] = [];
  const refs: ModelRef[] = [];
  const refAt = new Map<string, number>();
  const tokenizers: TokenizerId[] = [];
  const tokAt = new Map<string, number>();
  const providers: string[] = [];
  const provAt = new Map<string, number>();
  const byId = new Map<string, Candidate>();
  const byName = new Map<string, Candidate[]>();
  for (const e of cfg.models.values()) {
    if (!routable(e)) continue;
    const p = prices(e.model.pricing);
    const tiers = (e.model.pricing.tiers ?? [])
      .map((t) => ({ above: t.above_input_tokens, prices: prices(t as Partial<Pricing>, p) }))
      .sort((a, b) => a.above - b.above);
    const canonical = e.canonical;
    const counted = countingName(e.upstream, e.id);
    const tk = tokenizerFor(counted);
    const caps = e.model.capabilities;
    const addedMs = Date.parse(e.model.added_at);
    const c: Candidate = {
      index: all.length, entry: e, id: e.id, provider: e.provider.id, canonical, tokenizer: tk, tokenizerKey: tokenizerKey(tk), imageRule: imageRuleFor(counted), tokIndex: 0, provIndex: 0, prices: p, tiers,
      contextWindow: e.model.context_window, maxOutput: e.model.max_completion_tokens, caps,
      cacheMinTokens: e.model.cache_min_tokens ?? 1024,
      ref: modelRef(canonical, e, p), refIndex: 0,
      policyView: {
        id: e.id, provider: e.provider.id, model: e.model.name, canonical, reliability_tier: e.model.reliability_tier,
        context_window: e.model.context_window, max_output_tokens: e.model.max_completion_tokens, capabilities: caps,
        price: { input_per_million: p.input * 1e6, output_per_million: p.output * 1e6 },
        added_at: e.model.added_at, age_days: ageDays(addedMs),
        expected_cost_usd: 0, quality: 0, latency_ms: null, error_rate: 0,
      },
      addedMs,
    };
    // The first offer of a model (first-party offers come first in the catalog's order) gives its ref.
    let ri = refAt.get(canonical);
    if (ri === undefined) { ri = refs.length; refs.push(c.ref); refAt.set(canonical, ri); }
    c.refIndex = ri;
    let ti = tokAt.get(c.tokenizerKey);
    if (ti === undefined) { ti = tokenizers.length; tokenizers.push(tk); tokAt.set(c.tokenizerKey, ti); }
    c.tokIndex = ti;
    let pi = provAt.get(c.provider);
    if (pi === undefined) { pi = providers.length; providers.push(c.provider); provAt.set(c.provider, pi); }
    c.provIndex = pi;
    c.ref = refs[ri]!;
    all.push(c);
    byId.set(c.id, c);
    for (const k of new Set([e.model.name, canonical])) {
      const list = byName.get(k);
      if (list) list.push(c); else byName.set(k, [c]);
    }
  }
  return { all, table: tableOf(all), allIdx: Int32Array.from(all, (_, i) => i), lists: new Map(), listBytes: 0, memo: new WeakMap(), refs, tokenizers, providers, byId, byName, priors: cfg.router.priors };
}

function tableOf(all: readonly Candidate[]): CandidateTable {
  const n = all.length;
  const f = () => new Float64Array(n);
  const t: CandidateTable = {
    input: f(), output: f(), cacheRead: f(), cacheWrite: f(), request: f(), tiered: new Uint8Array(n), contextWindow: f(), maxOutput: f(), cacheMin: f(), outWorst: f(),
    caps: new Uint16Array(n), tok: new Int32Array(n), ref: new Int32Array(n), prov: new Int32Array(n),
  };
  all.forEach((c, i) => {
    t.input[i] = c.prices.input; t.output[i] = c.prices.output; t.cacheRead[i] = c.prices.cacheRead; t.cacheWrite[i] = c.prices.cacheWrite; t.request[i] = c.prices.request;
    t.tiered[i] = c.tiers.length > 0 ? 1 : 0; t.contextWindow[i] = c.contextWindow; t.maxOutput[i] = c.maxOutput; t.cacheMin[i] = c.cacheMinTokens;
    const reasoning = Number(c.entry.model.pricing.internal_reasoning ?? 0);
    t.outWorst[i] = Math.max(c.prices.output, Number.isFinite(reasoning) ? reasoning : Infinity, ...c.tiers.map((x) => x.prices.output));
    t.caps[i] = (c.caps.tools ? CAP.tools : 0) | (c.caps.vision ? CAP.vision : 0) | (c.caps.structured_output ? CAP.jsonSchema : 0)
      | (c.caps.reasoning ? CAP.reasoning : 0) | (c.caps.prompt_caching ? CAP.caching : 0) | (takesManyTools(c.entry.provider.format) ? CAP.manyTools : 0)
      | (readsToolChanges(c.entry.provider.format) ? CAP.mcpToolChanges : 0)
      | (relayCodecFor(c.entry.provider, 'openai-responses') !== undefined ? CAP.responsesApi : 0)
      | (relayCodecFor(c.entry.provider, 'openai-chat') !== undefined ? CAP.chatApi : 0)
      | (relayCodecFor(c.entry.provider, 'anthropic-messages') !== undefined ? CAP.messagesApi : 0);
    t.tok[i] = c.tokIndex; t.ref[i] = c.refIndex; t.prov[i] = c.provIndex;
  });
  return t;
}

const sets = new WeakMap<Config, CandidateSet>();

/** The candidates of a config version (built on first use, then shared by every request on it). */
export function candidateSet(cfg: Config): CandidateSet {
  let s = sets.get(cfg);
  if (!s) { s = build(cfg); sets.set(cfg, s); }
  return s;
}

/**
 * The remembered lists' bound, in bytes: a count alone let 1,000 lists of 1,000 valid names each hold
 * ~60 MB per config version. Past it the map starts again (clients resend a few lists, not thousands).
 */
const LIST_BYTES = 4 * 1024 * 1024;

/** resolveModels as indices into CandidateSet.all, remembered per list for this config version. */
export function resolveIndices(cfg: Config, set: CandidateSet, models: readonly string[]): Int32Array {
  const k = JSON.stringify(models);
  let idx = set.lists.get(k);
  if (!idx) {
    idx = Int32Array.from(resolveModels(cfg, set, models), (c) => c.index);
    const bytes = k.length + idx.byteLength;
    if (set.listBytes + bytes > LIST_BYTES) { set.lists.clear(); set.listBytes = 0; }
    set.lists.set(k, idx);
    set.listBytes += bytes;
  }
  return idx;
}

/**
 * The candidates a `models` list names: `provider/model` is that offer, a bare name every offer of
 * it. An entry that names nothing routable is a 400 naming `models[i]`.
 */
export function resolveModels(cfg: Config, set: CandidateSet, models: readonly string[]): Candidate[] {
  const out: Candidate[] = [];
  const seen = new Set<Candidate>();
  models.forEach((name, i) => {
    // A bare name: every offer of it, also through aliases and canonical ids (cfg.byName).
    const viaCatalog = (cfg.byName.get(name) ?? []).map((id) => set.byId.get(id)).filter((c): c is Candidate => c !== undefined);
    // `provider/alias` ("anthropic/claude-haiku-4-5", a dated model's undated name) as a named model resolves it.
    const offer = name.includes('/') && !set.byId.has(name) ? findOffer(cfg, name) : undefined;
    const hit = set.byId.get(name) ?? set.byName.get(name) ?? (viaCatalog.length > 0 ? viaCatalog : undefined) ?? (offer ? set.byId.get(offer.id) : undefined);
    if (!hit) {
      const known = [cfg.models.get(name), offer, ...(cfg.byName.get(name) ?? []).map((id) => cfg.models.get(id))].filter((e): e is ModelEntry => e !== undefined);
      const notSetUp = [...new Set(known.filter((e) => !setUp(e.provider)).map((e) => e.provider))];
      throw new GatewayError('invalid_parameter', notSetUp.length > 0 && notSetUp.length === new Set(known.map((e) => e.provider)).size
        ? `models[${i}]: "${name}" cannot be routed: ${notSetUp.map(setUpHint).join('; ')}`
        : known.length > 0
          ? `models[${i}]: "${name}" is in the catalog but cannot be routed (deprecated, hidden, unpriced or not a text model)`
          : `models[${i}]: unknown model "${name}"; name a provider/model id or a bare model name from GET /v1/models`, { param: `models[${i}]` });
    }
    for (const c of Array.isArray(hit) ? hit : [hit]) if (!seen.has(c)) { seen.add(c); out.push(c); }
  });
  return out;
}

/** What a provider lacks and how to give it, for the 400 that names a model only such providers serve. */
const setUpHint = (p: Provider): string => (!p.credentialed
  ? `no credentials are configured for ${p.auth.type === 'transform'
    ? `${p.id} (its ${p.auth.transform} signing: credentials in its options, or in the environment)`
    : `${p.id} (set ${providerEnvName(p.id, 'API_KEY')} or its api_key)`}`
  : `${p.id} is routed to once ${p.routerEnvMissing.join(' and ')} ${p.routerEnvMissing.length > 1 ? 'are' : 'is'} set (its router_requires_env; a request that names the model goes to it as configured)`);

/** The prices that apply to a prompt of `inputTokens` (the highest tier it exceeds). */
export function pricesFor(c: Candidate, inputTokens: number): Prices {
  let p = c.prices;
  for (const t of c.tiers) if (inputTokens > t.above) p = t.prices;
  return p;
}
