// Minimal image files of a given size (headers only: what src/tokens/image-size.ts reads), as base64.

const u16be = (n: number): number[] => [(n >> 8) & 0xff, n & 0xff];
const u32be = (n: number): number[] => [(n >>> 24) & 0xff, (n >> 16) & 0xff, (n >> 8) & 0xff, n & 0xff];
const u24le = (n: number): number[] => [n & 0xff, (n >> 8) & 0xff, (n >> 16) & 0xff];
const b64 = (bytes: number[]): string => Buffer.from(bytes).toString('base64');

export function png(w: number, h: number): string {
  return b64([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a, ...u32be(13), ...Buffer.from('IHDR'), ...u32be(w), ...u32be(h), 8, 6, 0, 0, 0, 0, 0, 0, 0, ...u32be(0), ...Buffer.from('IEND'), 0xae, 0x42, 0x60, 0x82]);
}

export function gif(w: number, h: number): string {
  return b64([...Buffer.from('GIF89a'), w & 0xff, w >> 8, h & 0xff, h >> 8, 0, 0, 0, 0x3b]);
}

/** A JPEG: JFIF, an APP1 (EXIF) segment of `exifBytes`, a DQT, then the frame header (SOF0, or SOF2 when progressive). */
export function jpeg(w: number, h: number, o: { exifBytes?: number; progressive?: boolean } = {}): string {
  const exif = o.exifBytes ?? 0;
  const app1 = exif > 0 ? [0xff, 0xe1, ...u16be(exif + 2), ...new Array<number>(exif).fill(0x45)] : [];
  return b64([0xff, 0xd8, 0xff, 0xe0, ...u16be(16), ...Buffer.from('JFIF\0'), 1, 1, 0, 0, 1, 0, 1, 0, 0, ...app1,
    0xff, 0xdb, ...u16be(67), 0, ...new Array<number>(64).fill(1),
    0xff, o.progressive ? 0xc2 : 0xc0, ...u16be(17), 8, ...u16be(h), ...u16be(w), 3, 1, 0x22, 0, 2, 0x11, 1, 3, 0x11, 1, 0xff, 0xd9]);
}

const riff = (chunk: string, payload: number[]): string => b64([...Buffer.from('RIFF'), ...u32be(0).reverse(), ...Buffer.from('WEBP'), ...Buffer.from(chunk), ...u32be(payload.length).reverse(), ...payload]);

/** Lossy WebP (VP8 key frame). */
export const webpLossy = (w: number, h: number): string => riff('VP8 ', [0x30, 0x01, 0x00, 0x9d, 0x01, 0x2a, w & 0xff, (w >> 8) & 0x3f, h & 0xff, (h >> 8) & 0x3f, 0, 0]);

/** Lossless WebP (VP8L): 14 bits each of width - 1 and height - 1 after the 0x2f signature. */
export function webpLossless(w: number, h: number): string {
  const v = ((w - 1) & 0x3fff) | (((h - 1) & 0x3fff) << 14);
  return riff('VP8L', [0x2f, v & 0xff, (v >>> 8) & 0xff, (v >>> 16) & 0xff, (v >>> 24) & 0xff, 0, 0, 0]);
}

/** Extended WebP (VP8X): 24-bit width - 1 and height - 1. */
export const webpExtended = (w: number, h: number): string => riff('VP8X', [0x10, 0, 0, 0, ...u24le(w - 1), ...u24le(h - 1)]);
