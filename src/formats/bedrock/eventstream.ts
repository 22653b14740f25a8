// AWS event-stream framing (application/vnd.amazon.eventstream), used by Bedrock ConverseStream:
// an incremental decoder that accepts any byte boundary and checks both CRCs, and an encoder.
// Frame: total length u32 | headers length u32 | prelude CRC32 | headers | payload | message CRC32.
import { crc32 } from 'node:zlib';

export type EventMessage = { headers: Record<string, string>; payload: Uint8Array };

/** Larger frames than this are treated as corruption rather than buffered without bound. */
const MAX_FRAME = 24 * 1024 * 1024;
const PRELUDE = 12;
const OVERHEAD = 16;

export class EventStreamError extends Error {
  override readonly name = 'EventStreamError';
}

const utf8 = new TextEncoder();
const text = new TextDecoder('utf-8');

/** Encodes one frame with string headers (value type 7), as Bedrock sends them. */
export function encodeEventMessage(headers: Record<string, string>, payload: Uint8Array): Uint8Array {
  const encoded = Object.entries(headers).map(([k, v]) => [utf8.encode(k), utf8.encode(v)] as const);
  for (const [k, v] of encoded) {
    if (k.length === 0 || k.length > 255 || v.length > 0xffff) throw new EventStreamError('event-stream header name or value too long');
  }
  const headersLength = encoded.reduce((n, [k, v]) => n + 1 + k.length + 1 + 2 + v.length, 0);
  const total = OVERHEAD + headersLength + payload.length;
  const out = new Uint8Array(total);
  const view = new DataView(out.buffer);
  view.setUint32(0, total);
  view.setUint32(4, headersLength);
  view.setUint32(8, crc32(out.subarray(0, 8)));
  let at = PRELUDE;
  for (const [k, v] of encoded) {
    out[at++] = k.length;
    out.set(k, at); at += k.length;
    out[at++] = 7;
    view.setUint16(at, v.length); at += 2;
    out.set(v, at); at += v.length;
  }
  out.set(payload, at);
  view.setUint32(total - 4, crc32(out.subarray(0, total - 4)));
  return out;
}

const hex = (b: Uint8Array): string => Buffer.from(b).toString('hex');

/**
 * Header values of every wire type, rendered as strings: booleans `true`/`false`, integers in
 * decimal, byte arrays in base64, timestamps (ms since epoch) as ISO 8601, UUIDs in 8-4-4-4-12 form.
 */
function decodeHeaders(bytes: Uint8Array): Record<string, string> {
  const view = new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  const out: Record<string, string> = {};
  let at = 0;
  const need = (n: number): void => {
    if (at + n > bytes.length) throw new EventStreamError('event-stream header runs past its section');
  };
  while (at < bytes.length) {
    need(1);
    const nameLength = bytes[at++]!;
    need(nameLength + 1);
    const name = text.decode(bytes.subarray(at, at + nameLength));
    at += nameLength;
    const type = bytes[at++]!;
    let value: string;
    switch (type) {
      case 0: value = 'true'; break;
      case 1: value = 'false'; break;
      case 2: need(1); value = String(view.getInt8(at)); at += 1; break;
      case 3: need(2); value = String(view.getInt16(at)); at += 2; break;
      case 4: need(4); value = String(view.getInt32(at)); at += 4; break;
      case 5: need(8); value = String(view.getBigInt64(at)); at += 8; break;
      case 6: case 7: {
        need(2);
        const len = view.getUint16(at); at += 2;
        need(len);
        const raw = bytes.subarray(at, at + len); at += len;
        value = type === 7 ? text.decode(raw) : Buffer.from(raw).toString('base64');
        break;
      }
      case 8: need(8); value = new Date(Number(view.getBigInt64(at))).toISOString(); at += 8; break;
      case 9: {
        need(16);
        const h = hex(bytes.subarray(at, at + 16)); at += 16;
        value = `${h.slice(0, 8)}-${h.slice(8, 12)}-${h.slice(12, 16)}-${h.slice(16, 20)}-${h.slice(20)}`;
        break;
      }
      default: throw new EventStreamError(`unknown event-stream header value type ${type}`);
    }
    out[name] = value;
  }
  return out;
}

/**
 * Incremental decoder; push() throws EventStreamError on a bad CRC or malformed frame. Frames decoded
 * before a bad one in the same chunk are returned first (their content is real and may already be
 * owed to a client); the error is thrown by the next push.
 */
export function createEventStreamDecoder(): { push(chunk: Uint8Array): EventMessage[] } {
  let buf: Uint8Array = new Uint8Array(0);
  let failure: EventStreamError | null = null;
  // Chunks of a frame that is not complete yet, joined once when it is: joining on every push was
  // quadratic (a 20 MB frame arriving in 16 KiB chunks took 36 s of CPU, the event loop blocked).
  const parts: Uint8Array[] = [];
  let partsSize = 0;
  /** Bytes the frame being received needs in all (0: not known yet, decode what there is). */
  let need = 0;
  return {
    push(chunk) {
      if (failure) throw failure;
      if (buf.length + partsSize + chunk.length < need) {
        parts.push(new Uint8Array(chunk));
        partsSize += chunk.length;
        return [];
      }
      if (buf.length === 0 && parts.length === 0) buf = chunk;
      else {
        const joined = new Uint8Array(buf.length + partsSize + chunk.length);
        joined.set(buf);
        let at = buf.length;
        for (const p of parts) { joined.set(p, at); at += p.length; }
        joined.set(chunk, at);
        buf = joined;
        parts.length = 0;
        partsSize = 0;
      }
      const out: EventMessage[] = [];
      const bad = (message: string): EventMessage[] => {
        failure = new EventStreamError(message);
        if (out.length === 0) throw failure;
        return out;
      };
      let at = 0;
      while (buf.length - at >= PRELUDE) {
        const view = new DataView(buf.buffer, buf.byteOffset + at, PRELUDE);
        const total = view.getUint32(0);
        const headersLength = view.getUint32(4);
        if (crc32(buf.subarray(at, at + 8)) !== view.getUint32(8)) return bad('event-stream prelude CRC mismatch');
        if (total < OVERHEAD || total > MAX_FRAME || headersLength > total - OVERHEAD) {
          return bad(`event-stream frame has impossible lengths (${total}, ${headersLength})`);
        }
        if (buf.length - at < total) break;
        const frame = buf.subarray(at, at + total);
        const expected = new DataView(frame.buffer, frame.byteOffset + total - 4, 4).getUint32(0);
        if (crc32(frame.subarray(0, total - 4)) !== expected) return bad('event-stream message CRC mismatch');
        out.push({
          headers: decodeHeaders(frame.subarray(PRELUDE, PRELUDE + headersLength)),
          payload: new Uint8Array(frame.subarray(PRELUDE + headersLength, total - 4)),
        });
        at += total;
      }
      // Keep only the unread tail, copied (a Buffer's slice() would share the caller's memory),
      // so a caller reusing its chunk buffer cannot corrupt it; payloads are copies for the same reason.
      buf = new Uint8Array(buf.subarray(at));
      need = buf.length >= PRELUDE ? new DataView(buf.buffer, buf.byteOffset, 4).getUint32(0) : 0;
      return out;
    },
  };
}
