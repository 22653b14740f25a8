// What a budget reservation needs of a body parsed in the worker pool (src/http/reservation-estimate.ts),
// read there with the parse, since the main thread never sees such a body's content: each inline image's
// width and height from its header (src/tokens/image-size.ts, as src/tokens/prompt.ts reads them for a
// body parsed on the main thread), and the base64 characters of those images, which the body's
// bytes / 4 would otherwise count as text on top of the image.
import type { Block, CanonicalRequest, ToolReferenceBlock } from '../formats/canonical.ts';
import type { ClientFormat } from '../formats/codec.ts';
import { clientCodecFor } from '../formats/registry.ts';
import { imageSizeOf, type ImageSize } from '../tokens/image-size.ts';

/** `sizes`: one per image in order, null for a URL or an unreadable header; `chars`: base64 characters of the inline images. */
export type InlineImages = { sizes: Array<ImageSize | null>; chars: number };

export function inlineImagesOf(req: CanonicalRequest): InlineImages {
  const out: InlineImages = { sizes: [], chars: 0 };
  const visit = (b: Block | ToolReferenceBlock): void => {
    if (b.type === 'image') {
      if (b.source.type === 'base64') { out.sizes.push(imageSizeOf(b.source.data)); out.chars += b.source.data.length; } else out.sizes.push(null);
    } else if (b.type === 'tool_result') for (const c of b.content) visit(c);
  };
  for (const m of req.messages) for (const b of m.content) visit(b);
  return out;
}

/**
 * inlineImagesOf a validated client body, decoded once into `canonical` (the conversion for a translated
 * target reuses it). Null when the codec cannot decode it: the attempt reports that error, and the
 * reservation takes every image at the most its model bills for one, as before.
 */
export function inlineImagesOfBody(format: ClientFormat, body: Record<string, unknown>, canonical: { value: CanonicalRequest | null }): InlineImages | null {
  try {
    canonical.value ??= clientCodecFor(format).decodeRequest(body);
    return inlineImagesOf(canonical.value);
  } catch { return null; }
}
