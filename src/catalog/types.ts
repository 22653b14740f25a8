// The catalog's data model: one CatalogModel per model a provider serves, as stored in
// providers/catalog/<provider>.yaml and validated by schema/catalog.schema.json.

/** USD per single token (or per image/request/search), decimal strings; "0" = free or not offered. */
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
};

export const PRICE_FIELDS = [
  'prompt', 'completion', 'image', 'request', 'web_search', 'internal_reasoning',
  'input_cache_read', 'input_cache_write', 'input_cache_write_1h',
] as const satisfies ReadonlyArray<keyof Pricing>;

export type CatalogModel = {
  /** Model name after the provider prefix. */
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
  capabilities: { tools: boolean; vision: boolean; reasoning: boolean; structured_output: boolean; prompt_caching: boolean };
  pricing: Pricing;
  /** Minimum cacheable prompt (1024; 2048 for the small fast tier, e.g. Claude Haiku). */
  cache_min_tokens?: number;
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
