// Merges a models.dev entry and a genai-prices sheet into one CatalogModel, by documented rules:
// which models count as chat models, where each field comes from, and how tiers are assigned.
import { decimalFromNumber, formatDecimal, shiftDecimal } from './decimal.ts';
import { makerOf, REJECTED_PRICE_MATCHES } from './providers-map.ts';
import type { ProviderSource } from './providers-map.ts';
import type { DevModel, PriceSheet } from './sources.ts';
import type { CatalogModel, Pricing } from './types.ts';
import { zeroPricing } from './types.ts';

/** Names of models that are not general chat models: speech, OCR, embeddings, safety classifiers. */
const NOT_CHAT = /whisper|parakeet|(^|[-_/.])tts|embed|ocr|guard|rerank|moderation|transcribe|dall-e|flux/i;
const PREVIEW = /preview|(^|[-_.:])exp($|[-_.:])|experimental|beta|alpha/i;
const MODALITY_ORDER = ['text', 'image', 'audio', 'video', 'pdf'];

/** Why a model was left out, or null when it is a chat model the gateway can list. */
export function exclusionReason(m: DevModel): string | null {
  if (NOT_CHAT.test(m.id)) return 'not a chat model';
  if (!m.output.includes('text') || !m.input.includes('text')) return 'no text in or out';
  if (m.context <= 0) return 'no context window';
  return null;
}

const perToken = (perMillion: number | undefined): string | undefined =>
  perMillion === undefined ? undefined : formatDecimal(shiftDecimal(decimalFromNumber(perMillion), -6));
const perUnitOfThousand = (perThousand: number | undefined): string | undefined =>
  perThousand === undefined ? undefined : formatDecimal(shiftDecimal(decimalFromNumber(perThousand), -3));

/**
 * Field by field: a genai-prices value when that sheet has the field, else the models.dev value,
 * else "0". Returns null when neither source prices the model at all (it cannot be billed).
 */
export function mergePricing(dev: DevModel['cost'], sheet: PriceSheet | null): Pricing | null {
  if (!sheet && !dev) return null;
  const s = sheet ?? {};
  const d = dev ?? {};
  const p = zeroPricing();
  p.prompt = perToken(s.input_mtok) ?? perToken(d.input) ?? '0';
  p.completion = perToken(s.output_mtok) ?? perToken(d.output) ?? '0';
  p.internal_reasoning = perToken(s.output_reasoning_mtok) ?? perToken(d.reasoning) ?? '0';
  p.input_cache_read = perToken(s.cache_read_mtok) ?? perToken(d.cache_read) ?? '0';
  p.input_cache_write = perToken(s.cache_write_mtok) ?? perToken(d.cache_write) ?? '0';
  p.input_cache_write_1h = perToken(s.cache_write_1h_mtok) ?? '0';
  p.web_search = perUnitOfThousand(s.web_searches_kcount) ?? '0';
  p.request = perUnitOfThousand(s.requests_kcount) ?? '0';
  return p;
}

const isoDay = (day: string): string => `${day}T00:00:00+00:00`;
const orderModalities = (xs: string[]): string[] =>
  [...new Set(xs)].sort((a, b) => rank(a) - rank(b) || (a < b ? -1 : a > b ? 1 : 0));
const rank = (x: string): number => (MODALITY_ORDER.includes(x) ? MODALITY_ORDER.indexOf(x) : MODALITY_ORDER.length);

/** Minimum cacheable prompt: Anthropic's small fast tier (Haiku) needs 2048 tokens, everything else 1024. */
function cacheMinTokens(name: string): number {
  return /claude/i.test(name) && /haiku/i.test(name) ? 2048 : 1024;
}

/**
 * One catalog record. Dates, limits, modalities and capabilities come from models.dev; prices from
 * mergePricing. Tier 1 only when the provider is the model's maker and the model is not a preview.
 */
export function buildModel(src: ProviderSource, dev: DevModel, sheet: PriceSheet | null): CatalogModel | null {
  const usable = REJECTED_PRICE_MATCHES[`${src.id}/${dev.id}`] ? null : sheet;
  // A ":free" route is free by definition; genai-prices sometimes maps it onto the paid sibling.
  const pricing = mergePricing(dev.cost, dev.id.endsWith(':free') ? null : usable);
  if (!pricing) return null;
  const maker = makerOf(dev.id);
  const preview = PREVIEW.test(dev.id);
  const added = dev.releaseDate;
  const updated = dev.lastUpdated > added ? dev.lastUpdated : added;
  const input = orderModalities(dev.input);
  const upstream = src.upstream?.(dev.id);
  const promptCaching = pricing.input_cache_read !== '0' || pricing.input_cache_write !== '0';
  const model: CatalogModel = {
    name: dev.id,
    ...(upstream ? { upstream } : {}),
    ...(dev.name && dev.name !== dev.id ? { display_name: dev.name } : {}),
    created: Date.parse(`${added}T00:00:00Z`) / 1000,
    added_at: isoDay(added),
    updated_at: isoDay(updated),
    reliability_tier: maker !== undefined && src.makes.includes(maker) && !preview ? 1 : 2,
    context_window: dev.context,
    // models.dev gives 0 when it does not know the output cap; the context window bounds it.
    max_completion_tokens: dev.outputLimit > 0 ? Math.min(dev.outputLimit, dev.context) : dev.context,
    modalities: { input, output: orderModalities(dev.output) },
    capabilities: {
      tools: dev.toolCall,
      vision: input.includes('image'),
      reasoning: dev.reasoning,
      // The gateway enforces a JSON schema through a forced tool call, so tool support implies it.
      structured_output: dev.toolCall,
      prompt_caching: promptCaching,
    },
    pricing,
  };
  if (promptCaching) model.cache_min_tokens = cacheMinTokens(dev.id);
  return model;
}
