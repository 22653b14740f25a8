// What a request with a limited key reserves before the call (src/limits/affordable.ts): per target,
// the prompt priced by src/tokens for that target's tokenizer family (exact counts where the family
// has a public tokenizer, else the fitted estimate with its measured margin; images by the target
// model's rule, src/tokens/images.ts: an inline image at the size its header gives, else the most the
// model bills for one), capped at the target's context window, and output up to max_tokens or its cap.
// A target is counted by its upstream model's name (src/tokens/families.ts countingName), as the router counts it.
import type { AttemptTarget } from '../engine/plan.ts';
import type { CanonicalRequest } from '../formats/canonical.ts';
import type { ClientFormat } from '../formats/codec.ts';
import { clientCodecFor } from '../formats/registry.ts';
import { countInputImages } from '../engine/usage.ts';
import { acquireAffordable, type Affordable } from '../limits/affordable.ts';
import { LimitError, worstUsage, type Limiter, type Usage } from '../limits/limiter.ts';
import type { KeyRecord } from '../store/types.ts';
import { ESTIMATE_MARGIN } from '../tokens/estimate.ts';
import { imageRuleFor, imageTokens, type ImageRule } from '../tokens/images.ts';
import { countingName, PromptTokens, promptParts, tokenizerFor } from '../tokens/index.ts';
import type { PromptRead } from '../workers/prompt-read.ts';

/**
 * New characters a reservation the budget refused encodes exactly before it tries again (encoding runs
 * at about 17 MB/s: at most ~0.25 ms); texts seen before are free (cached). The first try encodes
 * nothing new: each call of the encoder costs 5-15 us even for a short text, which every request
 * would pay, while the estimate with its margin is never below the exact count (bench figures in
 * docs/storage.md) and only matters near the end of a budget.
 */
export const RESERVE_EXACT_CHARS = 4096;

/**
 * The prompt as a reservation reads it: measured from the decoded request, or (a body the pool parsed)
 * its bytes, its images and what the pool read of its content (src/workers/prompt-read.ts).
 */
export type ReservedPrompt = { tokens: PromptTokens; images: number; bytes: number } | { bytes: number; images: number; read: PromptRead | null };

/** What the pool read of a body it parsed (src/engine/convert-pool.ts PreparedRequest). */
export type PooledPrompt = { images: number; read: PromptRead | null };

/**
 * The decoded request of a body parsed on this thread (null for one the pool parsed, or one the codec
 * cannot decode: its error comes from the attempt, as before), for the reservation and then the
 * attempts, which reuse it instead of decoding again.
 */
export function decodeForReservation(format: ClientFormat, body: Record<string, unknown>): CanonicalRequest | null {
  try { return clientCodecFor(format).decodeRequest(body); } catch { return null; }
}

/**
 * What a body parsed on this thread that the codec cannot decode is reserved from (one the relay serves
 * as it is, holding a part only its own format knows: an Anthropic `search_result` or `file` source, an
 * OpenAI `file` or `input_audio` part): its bytes / 4 and its images counted in the body, each at the
 * most its model bills for one. Before 2026-11-30 such a body's images were left out of the reservation.
 */
export const undecodedPrompt = (body: Record<string, unknown>): PooledPrompt => ({ images: countInputImages(body), read: null });

export function reservedPrompt(canonical: CanonicalRequest | null, bytes: number, pooled: PooledPrompt | null): ReservedPrompt {
  if (canonical === null) return { bytes, images: pooled?.images ?? 0, read: pooled?.read ?? null };
  const parts = promptParts(canonical);
  return { tokens: new PromptTokens(parts, { exactChars: 0, boundChars: RESERVE_EXACT_CHARS }), images: parts.imageSizes.length, bytes };
}

/** The name `target` is counted by: its upstream model's (src/tokens/families.ts countingName). */
const countedName = (t: AttemptTarget): string => countingName(t.entry.upstream, t.entry.id);

/**
 * Input tokens reserved for `target`. A body the pool parsed, from what the pool read of it
 * (src/workers/prompt-read.ts): its text as on this thread, its inline images at the size their headers
 * give; an image by URL or with a header that cannot be read at the most the model bills for one. A
 * pooled body the pool did not read (no budget) or could not decode: its bytes / 4 with the estimate's
 * margin and every image at the most. Never above the target's context window (a longer prompt is refused, not billed).
 */
export function reservedInput(p: ReservedPrompt, target: AttemptTarget): number {
  const name = countedName(target);
  const images = imageRuleFor(name);
  const tokenizer = tokenizerFor(name);
  const n = 'tokens' in p ? p.tokens.reserve(tokenizer, images) : pooledInput(p, tokenizer.kind === 'exact', images);
  const window = target.entry.model.context_window;
  const capped = window > 0 ? Math.min(n, window) : n;
  // A binary document to a model without a known window: nothing bounds it, the body's bytes stand in.
  return Number.isFinite(capped) ? capped : Math.ceil(p.bytes * ESTIMATE_MARGIN);
}

function pooledInput(p: { bytes: number; images: number; read: PromptRead | null }, openai: boolean, rule: ImageRule): number {
  const r = p.read;
  const sizes = r?.sizes ?? [];
  let n = r ? (openai ? r.text.openai : r.text.other) : Math.ceil((p.bytes / 4) * ESTIMATE_MARGIN);
  for (const s of sizes) n += imageTokens(rule, s);
  return n + Math.max(0, p.images - sizes.length) * rule.max;
}

/**
 * Upper bounds for the limiter over the attempts the request may make (router mode's targets, or a
 * named model and its fallbacks): input per target (reservedInput), output at max_tokens (or a
 * target's own cap); cache writes assumed only when the body asks for caching; per-image prices for
 * the images sent.
 */
export function reservationUsage(targets: readonly AttemptTarget[], body: Record<string, unknown>, raw: Buffer, key: KeyRecord, prompt: ReservedPrompt): Usage {
  const asked = (body.max_completion_tokens ?? body.max_tokens ?? body.max_output_tokens) as number | undefined;
  const outOf = (t: AttemptTarget): number => Math.min(asked ?? t.entry.model.max_completion_tokens, t.maxOutputTokens ?? Infinity);
  const attempts = targets.map((t) => ({ pricing: t.entry.model.pricing, maxOutputTokens: outOf(t), inputTokens: reservedInput(prompt, t) }));
  const { costUsd } = worstUsage(key, attempts, 0, { cacheWrite: raw.includes('"cache_control"') ? 'any' : 'none', images: prompt.images });
  // A budget is a promise about money: the cost above is a bound. A tokens-per-minute limit is flow
  // control, settled with the real count after: its tokens stay the body's bytes / 4 plus the output
  // bound, as before 2026-11-29, since an image at its model's most (48,169 tokens for gpt-4o-mini)
  // would never fit a tpm limit below it, however small the image.
  let out = 0;
  for (const a of attempts) out = Math.max(out, a.maxOutputTokens);
  return { tokens: Math.ceil(raw.length / 4) + out, costUsd };
}

/**
 * acquireAffordable for the request's plan; refused for budget, once more after the texts the
 * reservation took at their estimate are counted exactly for the plan's exact encodings (when any
 * was), so a key near the end of its budget is refused on the exact count, not the estimate's margin.
 */
export function acquireReserved<T extends AttemptTarget>(limiter: Limiter, key: KeyRecord, plan: readonly T[], prompt: ReservedPrompt,
  estimateOf: (plan: readonly T[]) => Usage, keepFirst: boolean): Affordable<T> | Promise<Affordable<T>> {
  const again = (e: unknown): Affordable<T> | Promise<Affordable<T>> => {
    if (!(e instanceof LimitError && e.reason === 'budget') || !countMore(prompt, plan)) throw e;
    return acquireAffordable(limiter, key, plan, estimateOf, keepFirst);
  };
  let got: Affordable<T> | Promise<Affordable<T>>;
  try { got = acquireAffordable(limiter, key, plan, estimateOf, keepFirst); } catch (e) { return again(e); }
  return got instanceof Promise ? got.catch(again) : got;
}

function countMore(p: ReservedPrompt, plan: readonly AttemptTarget[]): boolean {
  if (!('tokens' in p)) return false;
  let more = false;
  for (const t of plan) if (p.tokens.countMore(tokenizerFor(countedName(t)))) more = true;
  return more;
}
