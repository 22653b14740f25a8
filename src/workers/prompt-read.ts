// What a budget reservation needs of a body parsed in the worker pool (src/http/reservation-estimate.ts),
// read there with the parse, since the main thread never sees such a body's content: each inline image's
// width and height from its header (src/tokens/image-size.ts, as src/tokens/prompt.ts reads them for a
// body parsed on the main thread), and everything but the images priced as the main thread prices it
// (src/tokens/measure.ts reserve). The body's bytes / 4 with the margin, which stood in before, counted
// inline images' base64 as text on top of the image, and was below what CJK, emoji and other scripts are
// reserved at on the main thread (1.02 tokens a CJK character against 1.42) and below the real o200k
// count of digits, hex and base64-like text (a 200 KB CSV of numbers: 71,713 against 126,741).
// Read only for a key with a budget: about 5 ns a character not measured before (bench/pool-inline-images.ts).
import type { CanonicalRequest } from '../formats/canonical.ts';
import type { ClientFormat } from '../formats/codec.ts';
import { clientCodecFor } from '../formats/registry.ts';
import type { ImageSize } from '../tokens/image-size.ts';
import type { ImageRule } from '../tokens/images.ts';
import { PromptTokens } from '../tokens/measure.ts';
import { promptParts } from '../tokens/prompt.ts';

/**
 * `sizes`: one per image in order, null for a URL or an unreadable header; `text`: the reservation of
 * everything but the images for an OpenAI-family target (at the estimate: the worker loads no encoding)
 * and for any other.
 */
export type PromptRead = { sizes: Array<ImageSize | null>; text: { openai: number; other: number } };

const NO_IMAGES: ImageRule = { schemes: [], max: 0, typical: null };
const O200K = { kind: 'exact', encoding: 'o200k_base' } as const;
const OTHER = { kind: 'estimate', family: 'generic' } as const;

export function readPrompt(req: CanonicalRequest): PromptRead {
  // promptParts reads each inline image's size from its header, in order (src/tokens/prompt.ts).
  const parts = promptParts(req);
  const p = new PromptTokens(parts, { exactChars: 0, boundChars: 0 });
  return { sizes: parts.imageSizes, text: { openai: p.reserve(O200K, NO_IMAGES, true), other: p.reserve(OTHER, NO_IMAGES, true) } };
}

/**
 * readPrompt for a validated client body, decoded once into `canonical` (the conversion for a
 * translated target reuses it); null when the codec cannot decode it: the attempt reports that error,
 * and the reservation takes the body's bytes / 4 and every image at the most its model bills for one.
 */
export function readPromptOfBody(format: ClientFormat, body: Record<string, unknown>, canonical: { value: CanonicalRequest | null }): PromptRead | null {
  try {
    canonical.value ??= clientCodecFor(format).decodeRequest(body);
    return readPrompt(canonical.value);
  } catch { return null; }
}
