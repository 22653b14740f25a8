// Prompt token counting for a canonical request and a target model: exact with the model's own
// BPE encoding where one is public (OpenAI families, via gpt-tokenizer), else a measured estimate.
//
// Contract (used by the router's cost estimates and by the count_tokens routes):
//   countPromptTokens(req, model) -> { tokens, exact, method, ceiling }
// - `model`: a catalog id `provider/name` or a bare/upstream model name; only the name matters.
// - `tokens`: the prompt tokens the provider will bill as input (cached tokens included), with the
//   chat framing (per-message and reply-priming tokens) of the model's family.
// - `exact`: true only when the whole prompt was counted with the model's own encoding and the
//   documented framing: text messages to an OpenAI-family model. Images, binary documents, tool
//   definitions and tool-call framing are estimated (their rendering is not public) and make it false.
// - `method`: 'o200k_base' | 'cl100k_base' | 'estimate:anthropic' | 'estimate:gemini' |
//   'estimate:generic', with '+estimate' appended when an exact count had estimated parts, and
//   'estimate:size' when no text fitted the characters an exact encoding may take (maxExactChars).
// - `ceiling`: a strict upper bound for hard cost limits (max_cost): `tokens` when exact, else exact
//   counts where there are some and otherwise the bounds of src/tokens/ceiling.ts (text: its UTF-8
//   bytes, which no byte-level tokenizer exceeds; images by the model's rule, src/tokens/images.ts).
// Never throws on a valid canonical request; never blocks: an encoding still loading counts by estimate.
// The router measures a prompt once for all its candidates' tokenizers with PromptTokens (measure.ts).
import type { CanonicalRequest } from '../formats/canonical.ts';
import { exactCounter } from './encoders.ts';
import { tokenizerFor, type Encoding, type TokenizerId } from './families.ts';
import { imageRuleFor } from './images.ts';
import { measureLater, PromptTokens, unmeasured, type TokenCount } from './measure.ts';
import { promptParts, type PromptParts } from './prompt.ts';

export { countingName, tokenizerFor, tokenizerKey, type TokenizerId } from './families.ts';
export { warmTokenizers } from './encoders.ts';
export { estimateTextTokens } from './estimate.ts';
export { PromptTokens, type MeasureOptions, type TokenCount } from './measure.ts';
export { imageRuleFor, imageTokens, type ImageRule } from './images.ts';
export { promptParts, type PromptParts } from './prompt.ts';

export type CountOptions = {
  /**
   * Characters not counted before that may be encoded exactly (the rest is estimated): encoding runs
   * at about 17 MB/s on this machine, so 32k characters cost about 2 ms of the event loop.
   */
  maxExactChars?: number;
};

export const DEFAULT_MAX_EXACT_CHARS = 32_768;

export function countPromptTokens(req: CanonicalRequest, model: string, opts: CountOptions = {}): TokenCount {
  const chars = opts.maxExactChars ?? DEFAULT_MAX_EXACT_CHARS;
  const p = new PromptTokens(promptParts(req), { exactChars: chars, boundChars: 0 });
  return withImageRule(p, tokenizerFor(model), model);
}

/** count(t) with the images of the ceiling at the model's own image rule (images.ts), not its family's ceiling. */
function withImageRule(p: PromptTokens, t: TokenizerId, model: string): TokenCount {
  const c = p.count(t);
  return p.parts.imageSizes.length === 0 ? c : { ...c, ceiling: Math.max(c.tokens, c.ceiling + p.imageCeilingDelta(t, imageRuleFor(model))) };
}

/** Characters of one slice when long text is counted between turns of the event loop (~0.1-0.25 ms). */
export const SLICE_CHARS = 4096;
/** A text this long not estimated before is estimated in slices first (estimateLater): ~5-10 ns a character. */
export const ESTIMATE_LATER_CHARS = 8192;
/** New characters counted in one go; past them count-later paths slice (see countLater). */
export const DEFER_CHARS = 2048;

const pause = (): Promise<void> => new Promise((resolve) => setImmediate(resolve));

/**
 * Counts texts exactly, a slice of SLICE_CHARS at a time with the event loop free between slices (other
 * requests run meanwhile); the counts land in the encodings' caches, where the next measurement of the
 * same prompt finds them. For PromptTokens.deferred. An encoding still loading is skipped (estimates stand).
 */
export async function countLater(texts: ReadonlyMap<Encoding, readonly string[]>): Promise<void> {
  for (const [enc, list] of texts) {
    const f = exactCounter(enc);
    if (!f) continue;
    for (const s of list) { await pause(); await f.countSliced(s, SLICE_CHARS, pause); }
  }
}

/**
 * countPromptTokens for request handlers: new text over DEFER_CHARS is counted first with countLater,
 * so a long prompt never holds the event loop for its whole encoding. The same figures.
 */
export async function countPromptTokensSliced(req: CanonicalRequest, model: string, opts: CountOptions = {}): Promise<TokenCount> {
  const t = tokenizerFor(model);
  const parts = promptParts(req);
  const chars = opts.maxExactChars ?? DEFAULT_MAX_EXACT_CHARS;
  if (t.kind === 'exact') {
    const probe = new PromptTokens(parts, { exactChars: 0, boundChars: chars, deferChars: DEFER_CHARS });
    probe.bound(t);
    if (probe.deferred.size > 0) await countLater(probe.deferred);
  }
  return withImageRule(new PromptTokens(parts, { exactChars: chars, boundChars: 0 }), t, model);
}

/**
 * Estimates the prompt's long new texts (ESTIMATE_LATER_CHARS and over) a slice at a time with the
 * event loop free between slices, so that measuring the prompt then finds them remembered; null when
 * there is none (nothing to wait for).
 */
export function estimateLater(parts: PromptParts): Promise<void> | null {
  const texts = unmeasured(parts, ESTIMATE_LATER_CHARS);
  return texts.length === 0 ? null : pause().then(() => measureLater(texts, 4 * SLICE_CHARS, pause));
}
