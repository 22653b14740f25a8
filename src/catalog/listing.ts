// GET /v1/models records: one record carries both spec shapes (compact and detailed), so a client
// written for either works without the gateway guessing which one it wants; plus the listing filters.
import type { Offer } from './model-index.ts';
import type { CatalogModel, Pricing } from './types.ts';

export type ListingEntry = { provider: string; model: CatalogModel; offer?: Offer; aliasFor?: string; id?: string };
export type ModelListing = { object: 'list'; data: Record<string, unknown>[] };

/** `?capability=` values and the catalog capability each one reads. */
export const LISTING_CAPABILITIES = { tools: 'tools', vision: 'vision', reasoning: 'reasoning', json_schema: 'structured_output' } as const;
export type ListingCapability = keyof typeof LISTING_CAPABILITIES;

/** A parsed listing query: provider (`?provider=` or `?owned_by=`), capabilities all required, deprecated included or not. */
export type ListingQuery = { provider?: string; capabilities: ListingCapability[]; includeDeprecated: boolean };

const flatPricing = (p: Pricing): Record<string, string> => {
  const out: Record<string, string> = {
    prompt: p.prompt, completion: p.completion, image: p.image, request: p.request, web_search: p.web_search,
    internal_reasoning: p.internal_reasoning, input_cache_read: p.input_cache_read, input_cache_write: p.input_cache_write,
    input_cache_write_1h: p.input_cache_write_1h,
  };
  if (p.input_audio !== undefined) out.input_audio = p.input_audio;
  if (p.output_audio !== undefined) out.output_audio = p.output_audio;
  return out;
};

/**
 * One listing record. Compact fields: id, object, created, owned_by. Detailed fields: pricing (the
 * spec's six, the three cache prices, audio prices when set; decimal strings only), added_at,
 * updated_at, reliability_tier, max_completion_tokens. Also context_length, architecture
 * (OpenRouter-style modalities), capabilities, and when they apply: pricing_tiers, pricing_schedule,
 * status / retires_at / successor (deprecated models), aliases, alias_for (alias records),
 * canonical_model, unpriced. Everything is copied: callers may not mutate the catalog through it.
 */
export function modelRecord(provider: string, m: CatalogModel, extra: { offer?: Offer; aliasFor?: string; id?: string } = {}): Record<string, unknown> {
  const input = [...m.modalities.input];
  const output = [...m.modalities.output];
  const r: Record<string, unknown> = {
    id: extra.id ?? `${provider}/${m.name}`,
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
    pricing: flatPricing(m.pricing),
    capabilities: { ...m.capabilities },
    top_provider: { context_length: m.context_window, max_completion_tokens: m.max_completion_tokens },
    added_at: m.added_at,
    updated_at: m.updated_at,
    reliability_tier: m.reliability_tier,
  };
  if (m.pricing.tiers) r.pricing_tiers = structuredClone(m.pricing.tiers);
  if (m.pricing.schedule) r.pricing_schedule = m.pricing.schedule.map((s) => ({ from: s.from, pricing: flatPricing(s.pricing as Pricing), ...(s.pricing.tiers ? { pricing_tiers: structuredClone(s.pricing.tiers) } : {}) }));
  const status = extra.offer?.status ?? m.status;
  if (status && status !== 'active') r.status = status;
  if (m.retires_at) r.retires_at = m.retires_at;
  const successor = extra.offer?.successor ?? (m.successor ? `${provider}/${m.successor}` : null);
  if (successor) r.successor = successor;
  if (m.aliases && !extra.aliasFor) r.aliases = m.aliases.map((a) => `${provider}/${a}`);
  if (extra.aliasFor) r.alias_for = extra.aliasFor;
  if (extra.offer) r.canonical_model = extra.offer.canonical;
  if (m.unpriced) r.unpriced = true;
  return r;
}

const byId = (a: Record<string, unknown>, b: Record<string, unknown>): number => (String(a.id) < String(b.id) ? -1 : String(a.id) > String(b.id) ? 1 : 0);

/** Whether an entry passes the query (alias records follow their target). */
export function matchesQuery(e: ListingEntry, q: ListingQuery): boolean {
  if (q.provider !== undefined && e.provider !== q.provider) return false;
  const status = e.offer?.status ?? e.model.status ?? 'active';
  if (status === 'retired' || (status === 'deprecated' && !q.includeDeprecated)) return false;
  return q.capabilities.every((c) => e.model.capabilities[LISTING_CAPABILITIES[c]]);
}

/**
 * The listing body, sorted by id. An unknown provider gives an empty list, not an error, like any
 * filter with no match. `ownedBy` (a string) is the older call form: that provider, no other filter.
 */
export function buildListing(entries: ReadonlyArray<ListingEntry>, query?: ListingQuery | string): ModelListing {
  const q: ListingQuery = typeof query === 'string' ? { provider: query, capabilities: [], includeDeprecated: true } : query ?? { capabilities: [], includeDeprecated: true };
  const data = entries
    .filter((e) => matchesQuery(e, q))
    .map((e) => modelRecord(e.provider, e.model, e))
    .sort(byId);
  return { object: 'list', data };
}
