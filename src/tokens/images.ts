// What one image is billed as input, per model: the providers' documented image schemes as data
// (a table keyed by model name pattern, as families.ts picks a tokenizer), sized from the image's
// width and height when its header was read (image-size.ts), else the most the model bills for one.
// Every figure is an upper bound of the documented rule: where a provider rounds down after resizing
// this does not, and where documents disagree the larger scheme is taken.
//
// Sources (read 2026-11-29):
// - OpenAI, "Images and vision", Calculating costs (platform.openai.com/docs/guides/images-vision):
//   tile models fit the image in 2048x2048, then its short side to 768, and bill base + tile x
//   512 px tiles (gpt-4o, gpt-4.1, gpt-4.5: 85 + 170; gpt-4o-mini: 2833 + 5667; o1, o1-pro, o3:
//   75 + 150; computer-use-preview: 65 + 129; gpt-5, gpt-5-chat-latest: 70 + 140); patch models bill
//   32 px patches, capped at 1536, times a multiplier (gpt-4.1-mini 1.62, gpt-4.1-nano 2.46, o4-mini
//   1.72, gpt-5-mini 1.62, gpt-5-nano 2.46). community.openai.com measured gpt-5 and gpt-5.x at
//   patches x 1.2: gpt-5 takes the larger of both; gpt-5.1 and later, whose budgets ("original"
//   detail) are not settled, keep the family ceiling. `detail: "low"` bills a tile model its base
//   only, whatever the image's size (the model sees a 512x512 version); patch models ignore `detail`
//   (their figure is the same at every level). "auto", "high", "original" and no detail are priced as
//   high: "auto" may pick high, so anything less could under-reserve. The canonical image block
//   carries the client's `detail` to OpenAI-format targets (src/formats/canonical.ts ImageDetail).
// - Anthropic, "Images and vision" (platform.claude.com/docs/en/build-with-claude/vision): about
//   width x height / 750 tokens, now ceil(w/28) x ceil(h/28) visual tokens (the larger is taken), an
//   image larger than the native resolution scaled down first: long edge 1568 px and about 1,600
//   tokens (the documented size table reaches 784x1568, 1,639) up to Claude 4.6; 2576 px and about
//   4,784 tokens from Claude Opus 4.7.
// - Google, Gemini "Image understanding": an image with both sides at most 384 px is 258 tokens,
//   larger ones are cut into tiles whose size depends on the image (not bounded here: the family ceiling).
import { IMAGE_CEILING, type Family } from './ceiling.ts';
import { bareModelName, tokenizerFor } from './families.ts';
import type { ImageDetail } from '../formats/canonical.ts';
import type { ImageSize } from './image-size.ts';

export type ImageScheme =
  | { kind: 'tiles'; base: number; tile: number }
  | { kind: 'patches'; cap: number; multiplier: number }
  | { kind: 'area'; maxEdge: number; cap: number }
  | { kind: 'small'; edge: number; tokens: number; otherwise: number }
  | { kind: 'fixed'; tokens: number };

/**
 * A model's image rule: its schemes (the larger figure of them is billed), the most one image costs,
 * and what an image of unknown size is expected to cost (the rule at 1024x1024, the size the family
 * figures of measure.ts assume; null for a family's fallback rule, which knows only a ceiling).
 */
export type ImageRule = { readonly schemes: readonly ImageScheme[]; readonly max: number; readonly typical: number | null };

const tiles = (base: number, tile: number): ImageScheme => ({ kind: 'tiles', base, tile });
const patches = (multiplier: number): ImageScheme => ({ kind: 'patches', cap: 1536, multiplier });

/** Tested in order on the bare model name (families.ts bareModelName). A model no pattern matches takes its family's ceiling. */
const RULES: ReadonlyArray<readonly [RegExp, readonly ImageScheme[]]> = [
  [/^gpt-4o-mini/, [tiles(2833, 5667)]],
  [/^gpt-4\.1-mini/, [patches(1.62)]],
  [/^gpt-4\.1-nano/, [patches(2.46)]],
  [/^(o4-mini|codex-mini)/, [patches(1.72)]],
  [/^gpt-5-mini/, [patches(1.62)]],
  [/^gpt-5-nano/, [patches(2.46)]],
  // gpt-4.1: tiles in OpenAI's table, patches x 1 in its worked example: the larger of both.
  [/^gpt-4\.1/, [tiles(85, 170), patches(1)]],
  [/^(gpt-4o|chatgpt-4o|gpt-4\.5|gpt-4-turbo|gpt-4-vision)/, [tiles(85, 170)]],
  [/^(o1|o3)(?!-mini)/, [tiles(75, 150)]],
  [/^computer-use/, [tiles(65, 129)]],
  [/^gpt-5(-chat)?(-latest|-\d{4}-\d{2}-\d{2})?$/, [tiles(70, 140), patches(1.2)]],
  [/^(anthropic\.)?claude-opus-4[-.][7-9](?![0-9])/, [{ kind: 'area', maxEdge: 2576, cap: 4_800 }]],
  [/^(anthropic\.)?claude-(3|instant|(opus|sonnet|haiku)-4([-.][0-6])?(?![0-9.]))/, [{ kind: 'area', maxEdge: 1568, cap: 1_700 }]],
  [/^gemini-(1\.5|2)/, [{ kind: 'small', edge: 384, tokens: 258, otherwise: IMAGE_CEILING.gemini }]],
];

function schemeMax(s: ImageScheme): number {
  switch (s.kind) {
    case 'tiles': return s.base + 8 * s.tile; // 2048x768 after the fitting: 4 x 2 tiles
    case 'patches': return Math.ceil(s.cap * s.multiplier);
    case 'area': return s.cap;
    case 'small': return Math.max(s.tokens, s.otherwise);
    case 'fixed': return s.tokens;
  }
}

/** The size an image of unknown size is expected at (OpenAI's high-detail example, and measure.ts's family figures). */
const TYPICAL = { width: 1024, height: 1024 } as const;

const rule = (schemes: readonly ImageScheme[]): ImageRule => {
  const r = { schemes, max: Math.max(...schemes.map(schemeMax)), typical: null };
  return { ...r, typical: knownFigure(r, TYPICAL) };
};
const fallback = (tokens: number): ImageRule => ({ schemes: [{ kind: 'fixed', tokens }], max: tokens, typical: null });

const FAMILY_RULES: Readonly<Record<Family, ImageRule>> = {
  openai: fallback(IMAGE_CEILING.openai),
  anthropic: fallback(IMAGE_CEILING.anthropic),
  gemini: fallback(IMAGE_CEILING.gemini),
  generic: fallback(IMAGE_CEILING.generic),
};
const COMPILED: ReadonlyArray<readonly [RegExp, ImageRule]> = RULES.map(([re, s]) => [re, rule(s)] as const);

/** The most any model of `family` bills for one image (ceiling.ts IMAGE_CEILING). */
export const familyImageRule = (family: Family): ImageRule => FAMILY_RULES[family];

const cache = new Map<string, ImageRule>();
const MAX_CACHE = 10_000;

/** The image rule of a model id (`provider/name`, or a bare or upstream name); decided once per name. */
export function imageRuleFor(model: string): ImageRule {
  let r = cache.get(model);
  if (r) return r;
  const bare = bareModelName(model);
  for (const [re, x] of COMPILED) if (re.test(bare)) { r = x; break; }
  if (!r) { const t = tokenizerFor(model); r = FAMILY_RULES[t.kind === 'exact' ? 'openai' : t.family]; }
  if (cache.size >= MAX_CACHE) cache.clear();
  cache.set(model, r);
  return r;
}

/** Only "low" lowers a figure; every other level (or none) is billed as high. */
const isLow = (detail: ImageDetail | null | undefined): boolean => detail === 'low';

/** Tokens one image of `size` (null: not known) at `detail` (absent: none given) is billed at most under `r`. */
export function imageTokens(r: ImageRule, size: ImageSize | null, detail?: ImageDetail | null): number {
  if (isLow(detail)) return lowFigure(r, size) ?? imageTokens(r, size);
  return size === null ? r.max : largestAt(r, size);
}

/** The largest figure `r`'s schemes give an image of `size` (the larger scheme is billed). */
function largestAt(r: Pick<ImageRule, 'schemes'>, size: ImageSize): number {
  let n = 0;
  for (const s of r.schemes) { const x = schemeTokens(s, size.width, size.height); if (x > n) n = x; }
  return n;
}

/**
 * What `detail: "low"` bills under `r`: the larger of its schemes, a tile scheme at its base, a patch
 * scheme as at any level (at its maximum when the size is not known); null where a scheme is not
 * OpenAI's (low means nothing to it: the figure without detail stands).
 */
function lowFigure(r: Pick<ImageRule, 'schemes'>, size: ImageSize | null): number | null {
  let n = 0;
  for (const s of r.schemes) {
    if (s.kind !== 'tiles' && s.kind !== 'patches') return null;
    const x = s.kind === 'tiles' ? s.base : size === null ? schemeMax(s) : schemeTokens(s, size.width, size.height);
    if (x > n) n = x;
  }
  return n;
}

/**
 * What one image of `size` (null: not known) at `detail` is expected to cost under `r`, for ranking (not
 * a bound): its size by the rule, an image of unknown size at the rule's typical figure, at "low" the
 * rule's low figure (lowFigure); null where the rule is a family's fallback (the family's expected
 * figure stands).
 */
export function expectedImageTokens(r: ImageRule, size: ImageSize | null, detail?: ImageDetail | null): number | null {
  if (r.typical === null) return null;
  if (isLow(detail)) {
    const low = lowFigure(r, size ?? TYPICAL);
    if (low !== null) return low;
  }
  return size === null ? r.typical : knownFigure(r, size);
}

/** imageTokens where every scheme gives a figure of its own at this size; null where one falls back to a ceiling ('fixed', 'small' past its edge). */
function knownFigure(r: Pick<ImageRule, 'schemes'>, size: ImageSize): number | null {
  for (const x of r.schemes) if (x.kind === 'fixed' || (x.kind === 'small' && (size.width > x.edge || size.height > x.edge))) return null;
  return largestAt(r, size);
}

function schemeTokens(s: ImageScheme, w: number, h: number): number {
  switch (s.kind) {
    case 'tiles': {
      // Fit in 2048x2048, then the short side down to 768 (never up); no rounding down of the scaled sides.
      const a = Math.min(1, 2048 / Math.max(w, h));
      const b = Math.min(1, 768 / (Math.min(w, h) * a));
      return s.base + s.tile * Math.ceil((w * a * b) / 512) * Math.ceil((h * a * b) / 512);
    }
    case 'patches': return Math.ceil(Math.min(Math.ceil(w / 32) * Math.ceil(h / 32), s.cap) * s.multiplier);
    case 'area': {
      const k = Math.min(1, s.maxEdge / Math.max(w, h));
      const x = w * k, y = h * k;
      return Math.min(s.cap, Math.max(Math.ceil((x * y) / 750), Math.ceil(x / 28) * Math.ceil(y / 28)));
    }
    case 'small': return w <= s.edge && h <= s.edge ? s.tokens : s.otherwise;
    case 'fixed': return s.tokens;
  }
}
