// The catalog's data model: one CatalogModel per model a provider serves, as stored in
// providers/catalog/<provider>.yaml (validated by schema/catalog.schema.json), in a refresh overlay
// and in model_overrides. The compiled index over them is in model-index.ts.

/** Price fields billed per token (or per image/request/search): decimal strings, "0" = free or not offered. */
export type PriceField =
  | 'prompt' | 'completion' | 'image' | 'request' | 'web_search' | 'internal_reasoning'
  | 'input_cache_read' | 'input_cache_write' | 'input_cache_write_1h' | 'input_audio' | 'output_audio';

/**
 * USD per single token (per image, request or web search for those fields), exact decimal strings.
 * The spec's six (`prompt` .. `internal_reasoning`) and the three cache prices are always present;
 * `input_audio` / `output_audio` only when audio is priced apart from text. `tiers` and `schedule`
 * are the extra fields for long-context tiers and dated changes; costOf applies both.
 */
export type Pricing = {
  prompt: string;
  completion: string;
  image: string;
  request: string;
  web_search: string;
  internal_reasoning: string;
  input_cache_read: string;
  input_cache_write: string;
  input_cache_write_1h: string;
  /** Audio input tokens (a part of input_tokens); absent or "0": billed at `prompt`. */
  input_audio?: string;
  /** Audio output tokens (a part of output_tokens); absent or "0": billed at `completion`. */
  output_audio?: string;
  /**
   * Long-context tiers, ascending. When a call's whole input (uncached + cache reads + cache writes)
   * is above `above_input_tokens`, the prices the last such tier names replace the base ones for
   * every token of the call (how Anthropic and Google bill prompts above 200k tokens).
   */
  tiers?: PriceTier[];
  /**
   * Dated price changes, ascending by `from`: a call that starts at or after `from` is billed
   * with that entry's pricing (and its tiers) instead of this one.
   */
  schedule?: PriceChange[];
};

export type PriceTier = { above_input_tokens: number } & Partial<Record<Exclude<PriceField, 'request'>, string>>;
export type PriceChange = { from: string; pricing: Omit<Pricing, 'schedule'> };

/** The nine always-present fields, in file order. */
export const PRICE_FIELDS = [
  'prompt', 'completion', 'image', 'request', 'web_search', 'internal_reasoning',
  'input_cache_read', 'input_cache_write', 'input_cache_write_1h',
] as const satisfies ReadonlyArray<PriceField>;

/** Present only when a source prices them. */
export const OPTIONAL_PRICE_FIELDS = ['input_audio', 'output_audio'] as const satisfies ReadonlyArray<PriceField>;

/** active: served and listed; deprecated: served, listed with ?include=deprecated; retired: refused naming its successor. */
export type ModelStatus = 'active' | 'deprecated' | 'retired';

/** See CatalogModel.sampling. */
export type Sampling = 'none' | 'without_reasoning';
export const SAMPLING_VALUES = ['none', 'without_reasoning'] as const satisfies ReadonlyArray<Sampling>;

export type Capabilities = { tools: boolean; vision: boolean; reasoning: boolean; structured_output: boolean; prompt_caching: boolean };

export type CatalogModel = {
  /** Model name after the provider prefix: the id is `<provider>/<name>`. */
  name: string;
  /** Upstream model id when it differs from name. */
  upstream?: string;
  display_name?: string;
  /** Unix seconds (= added_at). */
  created: number;
  /** ISO 8601 with UTC offset, e.g. 2024-05-13T00:00:00+00:00. */
  added_at: string;
  updated_at: string;
  /** 1 = served by the model's maker, 2 = third-party host or preview. */
  reliability_tier: 1 | 2;
  context_window: number;
  max_completion_tokens: number;
  modalities: { input: string[]; output: string[] };
  capabilities: Capabilities;
  pricing: Pricing;
  /** Minimum cacheable prompt (1024; 2048 for the small fast tier, e.g. Claude Haiku). */
  cache_min_tokens?: number;
  /**
   * Which sampling controls (temperature other than 1, top_p, penalties, logprobs, logit_bias) the
   * maker's API takes for this model. Absent: all of them. `none`: none at all (OpenAI's o-series and
   * GPT-5, 5-mini, 5-nano refuse each with a 400). `without_reasoning`: only with reasoning effort
   * `none` (GPT-5.1 and later). Provider mapping rows read it as `catalog.sampling`.
   */
  sampling?: Sampling;
  /** Absent = active. */
  status?: ModelStatus;
  /** When the maker announced the deprecation (ISO, UTC offset). */
  deprecated_at?: string;
  /** When it stops (or stopped) answering (ISO, UTC offset). */
  retires_at?: string;
  /** Recommended replacement: a model name at the same provider. */
  successor?: string;
  /** Other names this provider accepts for this model (undated and -latest names); they resolve to it. */
  aliases?: string[];
  /** No source prices it: pricing reads "0" but is unknown, not free (see docs/catalog.md, "Unpriced"). */
  unpriced?: true;
  /** Listed nowhere and never routed, but callable by id (model_overrides `hidden: true`). */
  hidden?: true;
  /** Written by the operator (a provider file's `models:` or an added override), never by a source: set at compile time, not in files. */
  hand_written?: true;
};

/** One generated catalog file: providers/catalog/<provider>.yaml. */
export type CatalogFile = {
  provider: string;
  generated_by: string;
  sources: Array<{ package: string; version: string; licence: string }>;
  models: CatalogModel[];
};

export const zeroPricing = (): Pricing => ({
  prompt: '0', completion: '0', image: '0', request: '0', web_search: '0', internal_reasoning: '0',
  input_cache_read: '0', input_cache_write: '0', input_cache_write_1h: '0',
});
