// UUIDv7 (RFC 9562): 48-bit Unix milliseconds, then random bits; sortable by time, valid as a feedback id.
import { randomFillSync } from 'node:crypto';

const pool = new Uint8Array(16 * 256);
let poolPos = pool.length;
const hex: string[] = Array.from({ length: 256 }, (_, i) => i.toString(16).padStart(2, '0'));

/** Returns a new UUIDv7 string. Random bytes come from a refilled pool to keep the hot path cheap. */
export function uuidv7(now: number = Date.now()): string {
  if (poolPos === pool.length) { randomFillSync(pool); poolPos = 0; }
  const b = pool.subarray(poolPos, poolPos + 16);
  poolPos += 16;
  b[0] = (now / 2 ** 40) & 0xff; b[1] = (now / 2 ** 32) & 0xff; b[2] = (now >>> 24) & 0xff;
  b[3] = (now >>> 16) & 0xff; b[4] = (now >>> 8) & 0xff; b[5] = now & 0xff;
  b[6] = (b[6]! & 0x0f) | 0x70;
  b[8] = (b[8]! & 0x3f) | 0x80;
  let s = '';
  for (let i = 0; i < 16; i++) {
    s += hex[b[i]!];
    if (i === 3 || i === 5 || i === 7 || i === 9) s += '-';
  }
  return s;
}

const UUID_RE = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/i;
export const isUuid = (s: string): boolean => UUID_RE.test(s);

/**
 * Whether `id` is a UUIDv7 minted within the last `ms` (by its time, the first 48 bits; a minute ahead
 * of this clock allowed for another host's): a record or stored response another replica is still
 * writing may be named by one, so a lookup that finds nothing for it is worth repeating.
 */
export function mintedWithin(id: string, ms: number, now: number = Date.now()): boolean {
  if (!isUuid(id) || id[14] !== '7') return false;
  const at = parseInt(id.slice(0, 8) + id.slice(9, 13), 16);
  return at <= now + 60_000 && now - at < ms;
}
