// Width and height of an inline (base64) image read from its header, without decoding the image: only
// a prefix of the base64 is decoded (a JPEG whose size marker comes after a long EXIF block takes a
// longer prefix, up to MAX_PREFIX_CHARS). PNG (IHDR), JPEG (SOF0-SOF15 but DHT/JPG/DAC), GIF (logical
// screen grown to hold the first frame), WebP (VP8, VP8L, VP8X). Null when the header cannot be read: the caller reserves the most.

export type ImageSize = { width: number; height: number };

/** Base64 characters decoded first (1,536 bytes): enough for PNG, GIF, WebP and most JPEGs. */
const FIRST_PREFIX_CHARS = 2048;
/** A JPEG's SOF marker may follow an EXIF block with a thumbnail (up to 64 KB per segment). */
const MAX_PREFIX_CHARS = 4 * 65_536;

const decode = (b64: string, chars: number): Buffer => Buffer.from(chars >= b64.length ? b64 : b64.slice(0, chars - (chars % 4)), 'base64');

/** The image's size in pixels, or null when its header is not one of the formats above (or is cut short). */
export function imageSizeOf(b64: string): ImageSize | null {
  let chars = FIRST_PREFIX_CHARS;
  for (;;) {
    const b = decode(b64, chars);
    const r = headerSize(b);
    if (r !== 'more' || chars >= b64.length || chars >= MAX_PREFIX_CHARS) return r === 'more' ? null : r;
    chars = Math.min(chars * 8, MAX_PREFIX_CHARS);
  }
}

/** 'more': a JPEG whose size marker, or a GIF whose first frame, lies past the bytes given. */
function headerSize(b: Buffer): ImageSize | null | 'more' {
  if (b.length >= 24 && b.readUInt32BE(0) === 0x89504e47 && b.toString('latin1', 12, 16) === 'IHDR') return sized(b.readUInt32BE(16), b.readUInt32BE(20));
  if (b.length >= 13 && b.toString('latin1', 0, 4) === 'GIF8') return gif(b);
  if (b.length >= 25 && b.toString('latin1', 0, 4) === 'RIFF' && b.toString('latin1', 8, 12) === 'WEBP') return webp(b);
  if (b.length >= 4 && b[0] === 0xff && b[1] === 0xd8) return jpeg(b);
  return null;
}

const sized = (width: number, height: number): ImageSize | null => (width > 0 && height > 0 ? { width, height } : null);

/**
 * A GIF's logical screen, grown to hold its first frame: a frame may extend past the screen it names
 * (a 1x1 screen holding a 2048x2048 frame), and decoders such as Pillow size the image to hold it, so the
 * screen alone could be far below what is billed. 'more': the first frame's descriptor lies past the bytes given.
 */
function gif(b: Buffer): ImageSize | null | 'more' {
  const w = b.readUInt16LE(6), h = b.readUInt16LE(8);
  const flags = b[10]!;
  let i = 13 + (flags & 0x80 ? 3 * (1 << ((flags & 7) + 1)) : 0); // the global color table
  for (;;) {
    if (i >= b.length) return 'more';
    const c = b[i]!;
    if (c === 0x2c) { // image descriptor: left, top, width, height
      if (i + 9 > b.length) return 'more';
      return sized(Math.max(w, b.readUInt16LE(i + 1) + b.readUInt16LE(i + 5)), Math.max(h, b.readUInt16LE(i + 3) + b.readUInt16LE(i + 7)));
    }
    if (c !== 0x21) return sized(w, h); // the trailer (no frame) or bytes that are no GIF block
    i += 2; // extension introducer and label, then sub-blocks up to an empty one
    for (;;) {
      if (i >= b.length) return 'more';
      const n = b[i]!;
      i += 1 + n;
      if (n === 0) break;
    }
  }
}

function webp(b: Buffer): ImageSize | null {
  const chunk = b.toString('latin1', 12, 16);
  if (b.length < 30) return chunk === 'VP8L' && b[20] === 0x2f ? lossless(b) : null;
  if (chunk === 'VP8X') return sized(1 + b.readUIntLE(24, 3), 1 + b.readUIntLE(27, 3));
  // Lossy: a key frame's start code 9d 01 2a, then 14-bit width and height.
  if (chunk === 'VP8 ' && b[23] === 0x9d && b[24] === 0x01 && b[25] === 0x2a) return sized(b.readUInt16LE(26) & 0x3fff, b.readUInt16LE(28) & 0x3fff);
  // Lossless: signature 0x2f, then 14 bits each of width - 1 and height - 1.
  return chunk === 'VP8L' && b[20] === 0x2f ? lossless(b) : null;
}

function lossless(b: Buffer): ImageSize | null {
  const v = b.readUInt32LE(21);
  return sized((v & 0x3fff) + 1, ((v >>> 14) & 0x3fff) + 1);
}

function jpeg(b: Buffer): ImageSize | null | 'more' {
  let i = 2;
  while (i + 4 <= b.length) {
    if (b[i] !== 0xff) return null;
    const m = b[i + 1]!;
    if (m === 0xff) { i++; continue; } // fill byte
    if (m === 0xd8 || m === 0x01 || (m >= 0xd0 && m <= 0xd7)) { i += 2; continue; } // markers without a length
    if (m === 0xd9 || m === 0xda) return null; // end of image or start of scan before any frame header
    const len = b.readUInt16BE(i + 2);
    if (len < 2) return null;
    // SOF0-SOF15 but DHT (c4), JPG (c8) and DAC (cc): precision, height, width.
    if (m >= 0xc0 && m <= 0xcf && m !== 0xc4 && m !== 0xc8 && m !== 0xcc) {
      if (i + 9 > b.length) return 'more';
      return sized(b.readUInt16BE(i + 7), b.readUInt16BE(i + 5));
    }
    i += 2 + len;
  }
  return 'more';
}
