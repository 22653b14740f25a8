// Images priced per model (src/tokens/images.ts) at the size read from an inline image's header
// (src/tokens/image-size.ts): the documented schemes as upper bounds, the family ceiling where a
// model's scheme is not known, and the most the model bills where the size is not known.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { imageSizeOf } from '../src/tokens/image-size.ts';
import { expectedImageTokens, imageRuleFor, imageTokens } from '../src/tokens/images.ts';
import { IMAGE_CEILING } from '../src/tokens/ceiling.ts';
import { gif, jpeg, png, webpExtended, webpLossless, webpLossy } from './helpers/image-headers.ts';

test('width and height from the header of PNG, GIF, JPEG (baseline, progressive, after a 60 KB EXIF block), WebP (lossy, lossless, extended)', () => {
  assert.deepEqual(imageSizeOf(png(1920, 1080)), { width: 1920, height: 1080 });
  assert.deepEqual(imageSizeOf(gif(300, 200)), { width: 300, height: 200 });
  assert.deepEqual(imageSizeOf(jpeg(4032, 3024)), { width: 4032, height: 3024 });
  assert.deepEqual(imageSizeOf(jpeg(800, 600, { progressive: true })), { width: 800, height: 600 });
  assert.deepEqual(imageSizeOf(jpeg(1000, 700, { exifBytes: 60_000 })), { width: 1000, height: 700 });
  assert.deepEqual(imageSizeOf(webpLossy(640, 480)), { width: 640, height: 480 });
  assert.deepEqual(imageSizeOf(webpLossless(1023, 77)), { width: 1023, height: 77 });
  assert.deepEqual(imageSizeOf(webpExtended(5000, 3000)), { width: 5000, height: 3000 });
});

/** A GIF whose logical screen is `sw` x `sh`, holding one frame of `fw` x `fh` at (`left`, `top`), after a color table and `comment` bytes of comment extension. */
function gifFrame(sw: number, sh: number, frame: { left: number; top: number; fw: number; fh: number }, comment = 0): string {
  const u16 = (n: number): number[] => [n & 0xff, n >> 8];
  const bytes = [...Buffer.from('GIF89a'), ...u16(sw), ...u16(sh), 0x80, 0, 0, 0, 0, 0, 255, 255, 255];
  bytes.push(0x21, 0xf9, 4, 0, 0, 0, 0, 0); // graphic control extension
  bytes.push(0x21, 0xff, 11, ...Buffer.from('NETSCAPE2.0'), 3, 1, 0, 0, 0); // application extension
  for (let left = comment; left > 0; left -= 255) { const n = Math.min(255, left); if (left === comment) bytes.push(0x21, 0xfe); bytes.push(n, ...new Array<number>(n).fill(0x41)); if (left - n <= 0) bytes.push(0); }
  bytes.push(0x2c, ...u16(frame.left), ...u16(frame.top), ...u16(frame.fw), ...u16(frame.fh), 0, 2, 2, 0x4c, 0x01, 0, 0x3b);
  return Buffer.from(bytes).toString('base64');
}

test('a GIF frame larger than its logical screen sizes the image (a 1x1 screen holding a 2048x2048 frame was priced as 1x1)', () => {
  assert.deepEqual(imageSizeOf(gifFrame(1, 1, { left: 0, top: 0, fw: 2048, fh: 2048 })), { width: 2048, height: 2048 });
  assert.deepEqual(imageSizeOf(gifFrame(120, 80, { left: 100, top: 10, fw: 50, fh: 20 })), { width: 150, height: 80 });
  assert.deepEqual(imageSizeOf(gifFrame(640, 480, { left: 0, top: 0, fw: 10, fh: 10 })), { width: 640, height: 480 });
  // The frame after 100 KB of comment blocks is still found; cut before it, no size (the most is reserved).
  assert.deepEqual(imageSizeOf(gifFrame(1, 1, { left: 0, top: 0, fw: 1500, fh: 900 }, 100_000)), { width: 1500, height: 900 });
  assert.equal(imageSizeOf(gifFrame(1, 1, { left: 0, top: 0, fw: 1500, fh: 900 }, 100_000).slice(0, 4000)), null);
  const mini = imageRuleFor('gpt-4o-mini');
  assert.equal(imageTokens(mini, imageSizeOf(gifFrame(1, 1, { left: 0, top: 0, fw: 2048, fh: 2048 }))), imageTokens(mini, { width: 2048, height: 2048 }));
});

test('a header that cannot be read is no size (the caller reserves the most): not an image, cut short, zero sides, a JPEG without a frame header', () => {
  for (const s of ['', 'aGVsbG8gd29ybGQ=', png(100, 100).slice(0, 20), png(0, 100), Buffer.from([0xff, 0xd8, 0xff, 0xda, 0, 2]).toString('base64'), '!!!not base64!!!']) {
    assert.equal(imageSizeOf(s), null, s);
  }
  // A JPEG whose frame header lies past the bytes given (cut short): no size, not a wrong one.
  assert.equal(imageSizeOf(jpeg(1000, 700, { exifBytes: 60_000 }).slice(0, 40_000)), null);
});

test('the header is read from a prefix: a 20 MB base64 image costs no more than a small one', () => {
  const small = png(4000, 3000);
  const big = small + 'A'.repeat(20_000_000);
  // Against the small image in the same run, batches taking turns (a loaded machine slows both alike):
  // decoding the whole 20 MB would cost about a thousand times the header's read.
  const batch = (s: string): number => { const t0 = performance.now(); for (let i = 0; i < 20; i++) imageSizeOf(s); return (performance.now() - t0) / 20; };
  const bigMs: number[] = []; const smallMs: number[] = [];
  for (let r = 0; r < 7; r++) { smallMs.push(batch(small)); bigMs.push(batch(big)); }
  const median = (xs: number[]): number => xs.sort((x, y) => x - y)[3]!;
  assert.ok(median(bigMs) < 4 * median(smallMs) + 0.05, `20 MB image ${median(bigMs).toFixed(3)} ms against ${median(smallMs).toFixed(3)} ms for its header alone`);
  assert.deepEqual(imageSizeOf(big), { width: 4000, height: 3000 });
});

test('OpenAI tile models: base + tile x 512 px tiles after fitting in 2048 and the short side to 768 (the documented examples)', () => {
  const gpt4o = imageRuleFor('openai/gpt-4o');
  assert.equal(imageTokens(gpt4o, { width: 1024, height: 1024 }), 765);
  assert.equal(imageTokens(gpt4o, { width: 2048, height: 4096 }), 1105);
  assert.equal(imageTokens(gpt4o, { width: 500, height: 500 }), 255);
  assert.equal(imageTokens(gpt4o, null), 1445);
  assert.equal(gpt4o.max, 1445);
  const mini = imageRuleFor('openai/gpt-4o-mini');
  assert.equal(imageTokens(mini, { width: 1024, height: 1024 }), 25_501);
  assert.equal(mini.max, IMAGE_CEILING.openai);
  assert.equal(imageRuleFor('azure/o3').max, 75 + 8 * 150);
  assert.equal(imageRuleFor('openai/o3-mini').max, IMAGE_CEILING.openai, 'no rule of its own: the family ceiling');
});

test('detail "low": a tile model\'s base at any size; patch models, Anthropic, Gemini and fallbacks as without it; other levels as high', () => {
  const gpt4o = imageRuleFor('openai/gpt-4o');
  for (const size of [null, { width: 1024, height: 1024 }, { width: 4000, height: 300 }]) assert.equal(imageTokens(gpt4o, size, 'low'), 85);
  assert.equal(imageTokens(imageRuleFor('openai/gpt-4o-mini'), null, 'low'), 2833);
  assert.equal(imageTokens(imageRuleFor('openai/o3'), null, 'low'), 75);
  assert.equal(imageTokens(imageRuleFor('openai/computer-use-preview'), null, 'low'), 65);
  for (const d of ['high', 'auto', 'original', null, undefined] as const) {
    assert.equal(imageTokens(gpt4o, null, d), 1445, String(d));
    assert.equal(imageTokens(gpt4o, { width: 1024, height: 1024 }, d), 765, String(d));
  }
  // Patch models bill patches at every level; gpt-4.1 and gpt-5 take the larger of tiles and patches: the patches.
  const mini41 = imageRuleFor('openai/gpt-4.1-mini');
  assert.equal(imageTokens(mini41, { width: 1024, height: 1024 }, 'low'), Math.ceil(1024 * 1.62));
  assert.equal(imageTokens(mini41, null, 'low'), mini41.max);
  assert.equal(imageTokens(imageRuleFor('openai/gpt-4.1'), { width: 1024, height: 1024 }, 'low'), 1024);
  assert.equal(imageTokens(imageRuleFor('openai/gpt-5'), null, 'low'), Math.ceil(1536 * 1.2));
  // Not OpenAI's knob: unchanged.
  const sonnet = imageRuleFor('anthropic/claude-sonnet-4-5');
  assert.equal(imageTokens(sonnet, { width: 1092, height: 1092 }, 'low'), 1590);
  assert.equal(imageTokens(imageRuleFor('openai/gpt-5.4-mini'), null, 'low'), IMAGE_CEILING.openai);
  assert.equal(imageTokens(imageRuleFor('google/gemini-2.5-flash'), { width: 1000, height: 1000 }, 'low'), IMAGE_CEILING.gemini);
  // The expected figure (ranking) follows: gpt-4o-mini 2,833 at low, 25,501 for 1024x1024 otherwise.
  const mini = imageRuleFor('openai/gpt-4o-mini');
  assert.equal(expectedImageTokens(mini, null, 'low'), 2833);
  assert.equal(expectedImageTokens(mini, null, 'auto'), 25_501);
  assert.equal(expectedImageTokens(imageRuleFor('openai/gpt-5.4-mini'), null, 'low'), null);
});

test('OpenAI patch models: 32 px patches capped at 1536 times the model\'s multiplier; never under the bill measured', () => {
  const mini41 = imageRuleFor('openai/gpt-4.1-mini');
  assert.equal(imageTokens(mini41, { width: 1024, height: 1024 }), Math.ceil(1024 * 1.62));
  // community.openai.com: a 4000x1474 image to gpt-4.1-mini billed 2,488 image tokens.
  assert.ok(imageTokens(mini41, { width: 4000, height: 1474 }) >= 2488);
  assert.equal(mini41.max, Math.ceil(1536 * 1.62));
  assert.equal(imageRuleFor('openai/gpt-4.1-nano').max, Math.ceil(1536 * 2.46));
  assert.equal(imageRuleFor('openai/o4-mini-2025-04-16').max, Math.ceil(1536 * 1.72));
  // gpt-4.1: the larger of its tile and patch figures; gpt-5: of tiles 70 + 140 and patches x 1.2 (measured).
  assert.equal(imageTokens(imageRuleFor('openai/gpt-4.1'), { width: 1024, height: 1024 }), 1024);
  assert.equal(imageRuleFor('openai/gpt-5').max, Math.ceil(1536 * 1.2));
  // Later families whose budgets are not settled keep the family ceiling.
  assert.equal(imageRuleFor('openai/gpt-5.4-mini').max, IMAGE_CEILING.openai);
});

test('Anthropic: width x height / 750 or 28 px patches, whichever is larger, after scaling to the model\'s long edge, capped', () => {
  const sonnet = imageRuleFor('anthropic/claude-sonnet-4-5');
  assert.equal(imageTokens(sonnet, { width: 200, height: 200 }), 64); // 8 x 8 patches > 40000 / 750
  assert.equal(imageTokens(sonnet, { width: 1092, height: 1092 }), 1590); // the documented 1,590 (39 x 39 = 1,521 patches)
  assert.equal(imageTokens(sonnet, { width: 784, height: 1568 }), 1640);
  assert.equal(imageTokens(sonnet, { width: 8000, height: 8000 }), 1700);
  for (const id of ['anthropic/claude-3-5-sonnet-20241022', 'bedrock/us.anthropic.claude-sonnet-4-20250514-v1:0', 'openrouter/anthropic/claude-opus-4.6', 'anthropic/claude-haiku-4-5']) {
    assert.equal(imageRuleFor(id).max, 1700, id);
  }
  const opus47 = imageRuleFor('anthropic/claude-opus-4-7');
  assert.equal(opus47.max, 4800);
  assert.equal(imageTokens(opus47, { width: 2576, height: 1449 }), 4800);
  assert.equal(imageTokens(opus47, { width: 1000, height: 1000 }), 1334);
  assert.equal(imageRuleFor('anthropic/claude-sonnet-5').max, IMAGE_CEILING.anthropic, 'not known: the family ceiling');
});

test('Gemini 2.x: 258 tokens for an image within 384 px, else the family ceiling; unknown families the largest ceiling', () => {
  const g = imageRuleFor('google/gemini-2.5-flash');
  assert.equal(imageTokens(g, { width: 384, height: 300 }), 258);
  assert.equal(imageTokens(g, { width: 385, height: 300 }), IMAGE_CEILING.gemini);
  assert.equal(imageRuleFor('meta/llama-4-maverick').max, IMAGE_CEILING.generic);
});
