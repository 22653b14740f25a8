// One catalog record from a model's facts and its merged pricing, by documented rules: which models
// count as chat models, the tier, capabilities, the caching minimum, and defaults for unknown facts.
import { makerOf } from './providers-map.ts';
import type { ProviderSource } from './providers-map.ts';
import type { DevModel } from './sources.ts';
import type { CatalogModel, Pricing } from './types.ts';
import { zeroPricing } from './types.ts';

/** Names of models that are not general chat models: speech, OCR, embeddings, safety classifiers, image and video generation, realtime. */
const NOT_CHAT = /whisper|parakeet|orpheus|(^|[-_/.])tts|embed|ocr|guard|rerank|moderation|transcribe|dall-e|flux|(^|[-/.])image|imagine|realtime|(^|[-/])live-|-live($|-)|sonic|voice|safeguard|lyria|(^|[-/])ft:|\.ft-|:extended$/i;
const PREVIEW = /preview|(^|[-_.:])exp($|[-_.:])|experimental|beta|alpha/i;
const MODALITY_ORDER = ['text', 'image', 'audio', 'video', 'pdf'];

/** Why a model was left out, or null when it is a chat model the gateway can list. */
export function exclusionReason(m: DevModel): string | null {
  if (NOT_CHAT.test(m.id)) return 'not a chat model';
  if (m.output.length > 0 && (!m.output.includes('text') || !m.input.includes('text'))) return 'no text in or out';
  return null;
}

const isoDay = (day: string): string => `${day}T00:00:00+00:00`;
const orderModalities = (xs: string[]): string[] =>
  [...new Set(xs.filter((x) => MODALITY_ORDER.includes(x)))].sort((a, b) => MODALITY_ORDER.indexOf(a) - MODALITY_ORDER.indexOf(b));

/** Minimum cacheable prompt: Anthropic's small fast tier (Haiku) needs 2048 tokens, everything else 1024. */
function cacheMinTokens(name: string): number {
  return /claude/i.test(name) && /haiku/i.test(name) ? 2048 : 1024;
}

/**
 * The sampling controls a model takes (CatalogModel.sampling), for the makers that removed them:
 * - OpenAI's reasoning models, from its reasoning and GPT-5.x guides and its API's 400s ("Unsupported
 *   value: 'temperature' does not support 0.2 with this model. Only the default (1) value is
 *   supported."; "Unsupported parameter: 'top_p' is not supported with this model."): the o-series,
 *   GPT-5, 5-mini and 5-nano and the pro models take none; GPT-5.1 and later take temperature, top_p
 *   and logprobs only with reasoning effort `none`. The `-chat` models do not reason and take all.
 * - Anthropic's Claude from Opus 4.7 on (Opus 4.7, 4.8, 5 and later, every family's 5 and later):
 *   "Setting temperature, top_p, or top_k to any non-default value on Claude Opus 4.7 returns a 400
 *   error" (Anthropic's migration guide; the API answers "`temperature` is deprecated for this model",
 *   Bedrock the same as a ValidationException). Opus 4.6, Sonnet 4.6, Haiku 4.5 and older take them.
 * Other makers' reasoning models (DeepSeek's, Google's) take all. Hosts that rename models
 * (OpenRouter's `vendor/...`) document dropping what a model does not take themselves, so only the
 * makers' names (and Bedrock's ids of Claude) match.
 */
export function samplingOf(name: string, reasoning: boolean): CatalogModel['sampling'] {
  if (name.includes('/')) return undefined;
  const maker = makerOf(name);
  if (maker === 'anthropic') {
    const m = /claude-(opus|sonnet|haiku|fable|mythos)-(\d+)(?:[-.](\d{1,2})(?!\d))?/.exec(name);
    if (m === null) return undefined;
    const major = Number(m[2]); const minor = Number(m[3] ?? 0);
    return major >= 5 || (m[1] === 'opus' && major === 4 && minor >= 7) ? 'none' : undefined;
  }
  // `gpt-5-chat` (Azure) is listed as reasoning by a source, but the chat models are GPT-5's non-reasoning ones.
  if (!reasoning || maker !== 'openai' || /-chat(-|$)/.test(name)) return undefined;
  if (/^gpt-5\.\d+(-(mini|nano))?($|-(luna|sol|terra|\d{4}-\d{2}-\d{2})$)/.test(name)) return 'without_reasoning';
  if (/^(o\d|gpt-5)/.test(name)) return 'none';
  return undefined;
}

/**
 * The output limit when the sources do not give a believable one (unknown, or not below the context
 * window, which is a source writing the window into the output field): 8192 tokens, or half the
 * window when that is smaller. Never the window itself.
 */
export function defaultOutputLimit(context: number): number {
  return Math.max(1, Math.min(8192, Math.floor(context / 2)));
}

/** A price of zero for prompt and completion is "free" only for OpenRouter's `:free` routes; anything else is unknown. */
export const looksFree = (name: string): boolean => name.endsWith(':free');

export type BuildExtras = {
  /** The id to list (Bedrock profile ids differ from the models.dev id). */
  name?: string;
  /** Date to use when the facts have none (YYYY-MM-DD). */
  fallbackDate: string;
  /** Context window to use when the facts have none (genai-prices' figure, else 8192). */
  fallbackContext?: number;
};

/**
 * One catalog record. Dates, limits, modalities and capabilities come from the facts; pricing is the
 * merged sheet (null: no source prices it, so the model is unpriced). Tier 1 only when the provider
 * is the model's maker and the model is not a preview.
 */
export function buildModel(src: ProviderSource, dev: DevModel, pricing: Pricing | null, extra: BuildExtras): CatalogModel {
  const name = extra.name ?? dev.id;
  const maker = makerOf(name);
  const preview = PREVIEW.test(name) || dev.status === 'beta' || dev.status === 'alpha';
  const added = dev.releaseDate || extra.fallbackDate;
  const updated = dev.lastUpdated > added ? dev.lastUpdated : added;
  const input = orderModalities(dev.input.length > 0 ? dev.input : ['text']);
  const output = orderModalities(dev.output.length > 0 ? dev.output : ['text']);
  const context = dev.context > 0 ? dev.context : extra.fallbackContext ?? 8192;
  const upstream = src.upstream?.(name);
  // OpenRouter's `:free` routes are free whatever the sources say; any other zero price is unknown.
  const free = looksFree(name) || (pricing !== null && pricing.prompt === '0' && pricing.completion === '0');
  const unpriced = looksFree(name) ? false : pricing === null || free;
  const p = looksFree(name) ? zeroPricing() : pricing ?? zeroPricing();
  const promptCaching = !unpriced && (p.input_cache_read !== '0' || p.input_cache_write !== '0');
  const model: CatalogModel = {
    name,
    ...(upstream ? { upstream } : {}),
    ...(dev.name && dev.name !== name ? { display_name: dev.name } : {}),
    created: Date.parse(`${added}T00:00:00Z`) / 1000,
    added_at: isoDay(added),
    updated_at: isoDay(updated),
    reliability_tier: maker !== undefined && src.makes.includes(maker) && !preview ? 1 : 2,
    context_window: context,
    max_completion_tokens: dev.outputLimit > 0 && dev.outputLimit < context ? dev.outputLimit : defaultOutputLimit(context),
    modalities: { input, output },
    capabilities: {
      tools: dev.toolCall,
      vision: input.includes('image'),
      reasoning: dev.reasoning,
      // The gateway enforces a JSON schema through a forced tool call, so tool support implies it.
      structured_output: dev.toolCall,
      prompt_caching: promptCaching,
    },
    pricing: p,
  };
  if (promptCaching) model.cache_min_tokens = cacheMinTokens(name);
  const sampling = samplingOf(name, dev.reasoning);
  if (sampling) model.sampling = sampling;
  if (unpriced) model.unpriced = true;
  return model;
}
