// What a budget reservation needs of a body parsed in the worker pool (src/http/reservation-estimate.ts),
// read there with the parse, since the main thread never sees such a body's content: each inline image's
// width and height from its header (src/tokens/image-size.ts, as src/tokens/prompt.ts reads them for a
// body parsed on the main thread) and the base64 characters of those images, which the body's bytes / 4
// would otherwise count as text on top of the image; and for a body that is not all ASCII, its text
// priced as the main thread prices it (src/tokens/measure.ts reserve), since bytes / 4 with the margin
// is below what CJK, emoji and other scripts are reserved at there (1.02 tokens a CJK character against 1.42).
import { isAscii } from 'node:buffer';
import type { Block, CanonicalRequest, ToolReferenceBlock } from '../formats/canonical.ts';
import type { ClientFormat } from '../formats/codec.ts';
import { clientCodecFor } from '../formats/registry.ts';
import { imageSizeOf, type ImageSize } from '../tokens/image-size.ts';
import type { ImageRule } from '../tokens/images.ts';
import { PromptTokens } from '../tokens/measure.ts';
import { promptParts } from '../tokens/prompt.ts';

/**
 * `sizes`: one per image in order, null for a URL or an unreadable header; `chars`: base64 characters
 * of the inline images; `text`: the reservation of everything but the images for an OpenAI-family
 * target (estimated: the worker encodes nothing) and for any other (null for an all-ASCII body: its
 * bytes / 4 with the margin stands).
 */
export type PromptRead = { sizes: Array<ImageSize | null>; chars: number; text: { openai: number; other: number } | null };

const NO_IMAGES: ImageRule = { schemes: [], max: 0, typical: null };
const O200K = { kind: 'exact', encoding: 'o200k_base' } as const;
const OTHER = { kind: 'estimate', family: 'generic' } as const;

export function readPrompt(req: CanonicalRequest, text: boolean): PromptRead {
  const out: PromptRead = { sizes: [], chars: 0, text: null };
  const visit = (b: Block | ToolReferenceBlock): void => {
    if (b.type === 'image') {
      if (b.source.type === 'base64') { out.sizes.push(imageSizeOf(b.source.data)); out.chars += b.source.data.length; } else out.sizes.push(null);
    } else if (b.type === 'tool_result') for (const c of b.content) visit(c);
  };
  for (const m of req.messages) for (const b of m.content) visit(b);
  if (text) {
    const p = new PromptTokens(promptParts(req), { exactChars: 0, boundChars: 0 });
    out.text = { openai: p.reserve(O200K, NO_IMAGES, true), other: p.reserve(OTHER, NO_IMAGES, true) };
  }
  return out;
}

/**
 * readPrompt for a validated client body of `bytes` with `images` images, decoded once into `canonical`
 * (the conversion for a translated target reuses it); null for an all-ASCII body without images (nothing
 * to read), or when the codec cannot decode it: the attempt reports that error, and the reservation
 * takes the body's bytes / 4 and every image at the most its model bills for one, as before.
 */
export function readPromptOfBody(format: ClientFormat, body: Record<string, unknown>, bytes: Uint8Array, images: number,
  canonical: { value: CanonicalRequest | null }): PromptRead | null {
  const text = !isAscii(bytes);
  if (images === 0 && !text) return null;
  try {
    canonical.value ??= clientCodecFor(format).decodeRequest(body);
    return readPrompt(canonical.value, text);
  } catch { return null; }
}
