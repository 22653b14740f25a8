// The AWS event stream binary framing (application/vnd.amazon.eventstream) for the Bedrock mock:
// an encoder for string-valued headers with both CRC32s, and a strict decoder for the tests.
import { crc32 } from 'node:zlib';

/** Header value type 7: a UTF-8 string with a 16-bit length. */
const STRING_TYPE = 7;

/**
 * One frame: total length, headers length, prelude CRC, headers, payload, message CRC
 * (all integers big-endian; both CRCs are CRC-32 over the bytes before them).
 */
export function encodeFrame(headers: Record<string, string>, payload: Buffer | string): Buffer {
  const body = Buffer.isBuffer(payload) ? payload : Buffer.from(payload, 'utf8');
  const headerParts: Buffer[] = [];
  for (const [name, value] of Object.entries(headers)) {
    const n = Buffer.from(name, 'utf8');
    const v = Buffer.from(value, 'utf8');
    const h = Buffer.alloc(1 + n.length + 1 + 2 + v.length);
    h.writeUInt8(n.length, 0);
    n.copy(h, 1);
    h.writeUInt8(STRING_TYPE, 1 + n.length);
    h.writeUInt16BE(v.length, 2 + n.length);
    v.copy(h, 4 + n.length);
    headerParts.push(h);
  }
  const headerBytes = Buffer.concat(headerParts);
  const total = 12 + headerBytes.length + body.length + 4;
  const frame = Buffer.alloc(total);
  frame.writeUInt32BE(total, 0);
  frame.writeUInt32BE(headerBytes.length, 4);
  frame.writeUInt32BE(crc32(frame.subarray(0, 8)), 8);
  headerBytes.copy(frame, 12);
  body.copy(frame, 12 + headerBytes.length);
  frame.writeUInt32BE(crc32(frame.subarray(0, total - 4)), total - 4);
  return frame;
}

/** An event frame as Bedrock sends it: JSON payload with the three standard headers. */
export function eventFrame(eventType: string, payload: unknown): Buffer {
  return encodeFrame(
    { ':event-type': eventType, ':content-type': 'application/json', ':message-type': 'event' },
    JSON.stringify(payload),
  );
}

export interface DecodedFrame {
  headers: Record<string, string>;
  payload: Buffer;
}

/**
 * Decodes a whole buffer of frames, checking lengths and both CRCs; throws on any mismatch.
 * Returns the frames and the bytes left over after the last complete frame.
 */
export function decodeFrames(buf: Buffer): { frames: DecodedFrame[]; rest: Buffer } {
  const frames: DecodedFrame[] = [];
  let at = 0;
  while (buf.length - at >= 12) {
    const total = buf.readUInt32BE(at);
    const headersLength = buf.readUInt32BE(at + 4);
    if (crc32(buf.subarray(at, at + 8)) !== buf.readUInt32BE(at + 8)) throw new Error('prelude CRC mismatch');
    if (buf.length - at < total) break;
    const frame = buf.subarray(at, at + total);
    if (crc32(frame.subarray(0, total - 4)) !== frame.readUInt32BE(total - 4)) throw new Error('message CRC mismatch');
    const headers: Record<string, string> = {};
    let h = 12;
    while (h < 12 + headersLength) {
      const nameLength = frame.readUInt8(h);
      const name = frame.toString('utf8', h + 1, h + 1 + nameLength);
      const type = frame.readUInt8(h + 1 + nameLength);
      if (type !== STRING_TYPE) throw new Error(`unsupported header type ${type}`);
      const valueLength = frame.readUInt16BE(h + 2 + nameLength);
      headers[name] = frame.toString('utf8', h + 4 + nameLength, h + 4 + nameLength + valueLength);
      h += 4 + nameLength + valueLength;
    }
    frames.push({ headers, payload: frame.subarray(12 + headersLength, total - 4) });
    at += total;
  }
  return { frames, rest: buf.subarray(at) };
}
