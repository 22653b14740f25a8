// Password hashing for dashboard users: scrypt from node:crypto (run on libuv's thread pool, never the
// event loop), parameters stored with each hash so they can be raised later without breaking old ones.
import { randomBytes, scrypt, timingSafeEqual, type ScryptOptions } from 'node:crypto';

/** N = 2^15, r = 8, p = 1 (32 MiB per hash, OWASP's minimum set for scrypt); about 60-100 ms here. */
export const SCRYPT_DEFAULTS = { N: 2 ** 15, r: 8, p: 1 } as const;
const KEY_LENGTH = 32;
export const MIN_PASSWORD_LENGTH = 12;
export const MAX_PASSWORD_LENGTH = 1024;

function derive(password: string, salt: Buffer, o: { N: number; r: number; p: number }): Promise<Buffer> {
  const opts: ScryptOptions = { N: o.N, r: o.r, p: o.p, maxmem: 256 * o.N * o.r + 1024 * 1024 };
  return new Promise((ok, fail) => scrypt(password.normalize('NFC'), salt, KEY_LENGTH, opts, (e, k) => (e ? fail(e) : ok(k))));
}

/** `scrypt$N$r$p$<salt b64>$<hash b64>`. */
export async function hashPassword(password: string, o: { N: number; r: number; p: number } = SCRYPT_DEFAULTS): Promise<string> {
  const salt = randomBytes(16);
  const key = await derive(password, salt, o);
  return `scrypt$${o.N}$${o.r}$${o.p}$${salt.toString('base64')}$${key.toString('base64')}`;
}

/** False for a wrong password or a malformed stored hash; compares in constant time. */
export async function verifyPassword(password: string, stored: string): Promise<boolean> {
  const parts = stored.split('$');
  if (parts.length !== 6 || parts[0] !== 'scrypt') return false;
  const [N, r, p] = [Number(parts[1]), Number(parts[2]), Number(parts[3])];
  if (![N, r, p].every((n) => Number.isSafeInteger(n) && n > 0)) return false;
  const want = Buffer.from(parts[5]!, 'base64');
  if (want.length !== KEY_LENGTH) return false;
  const got = await derive(password, Buffer.from(parts[4]!, 'base64'), { N, r, p });
  return timingSafeEqual(got, want);
}

/** A reason the password is refused, or null. Length is what matters (NIST SP 800-63B); no composition rules. */
export function passwordProblem(password: unknown): string | null {
  if (typeof password !== 'string') return 'password must be a string';
  const n = [...password].length;
  if (n < MIN_PASSWORD_LENGTH) return `password must have at least ${MIN_PASSWORD_LENGTH} characters`;
  if (n > MAX_PASSWORD_LENGTH) return `password must have at most ${MAX_PASSWORD_LENGTH} characters`;
  return null;
}

/** A random password for a new or reset account, shown once (about 120 bits). */
export function generatePassword(): string {
  return randomBytes(15).toString('base64url').replace(/[-_]/g, 'x') + '-' + randomBytes(3).toString('hex');
}
