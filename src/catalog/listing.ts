// GET /v1/models records: one record carries both spec shapes (compact and detailed), so a client
// written for either works without the gateway guessing which one it wants.
import type { CatalogModel } from './types.ts';

export type ListingEntry = { provider: string; model: CatalogModel };
export type ModelListing = { object: 'list'; data: Record<string, unknown>[] };

/**
 * One listing record. Compact fields: id, object, created, owned_by. Detailed fields: pricing (the
 * spec's six plus the three cache prices), added_at, updated_at, reliability_tier,
 * max_completion_tokens. Also context_length, architecture (OpenRouter-style modalities) and
 * capabilities. Pricing is copied, so callers may not mutate the catalog through a record.
 */
export function modelRecord(provider: string, m: CatalogModel): Record<string, unknown> {
  const input = [...m.modalities.input];
  const output = [...m.modalities.output];
  return {
    id: `${provider}/${m.name}`,
    object: 'model',
    created: m.created,
    owned_by: provider,
    name: m.display_name ?? m.name,
    context_length: m.context_window,
    max_completion_tokens: m.max_completion_tokens,
    architecture: {
      modality: `${input.join('+')}->${output.join('+')}`,
      input_modalities: input,
      output_modalities: output,
    },
    pricing: {
      prompt: m.pricing.prompt,
      completion: m.pricing.completion,
      image: m.pricing.image,
      request: m.pricing.request,
      web_search: m.pricing.web_search,
      internal_reasoning: m.pricing.internal_reasoning,
      input_cache_read: m.pricing.input_cache_read,
      input_cache_write: m.pricing.input_cache_write,
      input_cache_write_1h: m.pricing.input_cache_write_1h,
    },
    capabilities: { ...m.capabilities },
    top_provider: { context_length: m.context_window, max_completion_tokens: m.max_completion_tokens },
    added_at: m.added_at,
    updated_at: m.updated_at,
    reliability_tier: m.reliability_tier,
  };
}

/**
 * The listing body, sorted by id. `ownedBy` keeps only that provider's models (the `?owned_by=`
 * filter); an unknown provider gives an empty list, not an error, like any filter with no match.
 */
export function buildListing(entries: ReadonlyArray<ListingEntry>, ownedBy?: string): ModelListing {
  const data = entries
    .filter((e) => ownedBy === undefined || e.provider === ownedBy)
    .map((e) => modelRecord(e.provider, e.model))
    .sort((a, b) => (String(a.id) < String(b.id) ? -1 : String(a.id) > String(b.id) ? 1 : 0));
  return { object: 'list', data };
}
