// Query-string parsing for the admin API: typed values out of URLSearchParams, with invalid_parameter
// naming the parameter. Lists may repeat (`key=a&key=b`) or be comma-separated.
import { isDecimalString } from '../../catalog/decimal.ts';
import { invalidParam } from '../../gateway-error.ts';

/**
 * The name of the first query parameter, path segment or body field (a dotted path) whose text holds a
 * NUL character, or null. PostgreSQL refuses NUL in text (22021, which would be a 500), and no name,
 * email, id or filter of this API may hold one, so the API refuses it at its edge on both stores.
 */
export function nulField(v: unknown, at: string): string | null {
  if (typeof v === 'string') return v.includes('\u0000') ? at : null;
  if (Array.isArray(v)) { for (const [i, x] of v.entries()) { const f = nulField(x, `${at}[${i}]`); if (f) return f; } return null; }
  if (v !== null && typeof v === 'object') {
    for (const [k, x] of Object.entries(v)) { const f = nulField(k, at) ?? nulField(x, at === '' ? k : `${at}.${k}`); if (f) return f; }
  }
  return null;
}

export function refuseNul(v: unknown, at = ''): void {
  const f = nulField(v, at);
  if (f !== null) throw invalidParam(f === '' ? 'body' : f, `${f === '' ? 'the body' : f} must not contain NUL characters`);
}

/** A parameter that takes one value: given twice (`top=5&top=6`, an array where a scalar belongs) it is a 400, never the first. */
export function single(q: URLSearchParams, name: string): string | null {
  const all = q.getAll(name);
  if (all.length > 1) throw invalidParam(name, `${name} takes one value; it was given ${all.length} times`);
  return all[0] ?? null;
}

export function list(q: URLSearchParams, name: string): string[] | undefined {
  const all = q.getAll(name).flatMap((v) => v.split(',')).map((v) => v.trim()).filter((v) => v !== '');
  if (all.length > 500) throw invalidParam(name, `${name}: at most 500 values`);
  return all.length ? all : undefined;
}

/** An instant: ISO 8601 or epoch milliseconds. */
export function time(q: URLSearchParams, name: string): number | undefined {
  const v = single(q, name);
  if (v === null || v === '') return undefined;
  const t = /^\d{1,15}$/.test(v) ? Number(v) : Date.parse(v);
  if (!Number.isFinite(t)) throw invalidParam(name, `${name} must be an ISO 8601 time or epoch milliseconds`);
  return t;
}

export function int(q: URLSearchParams, name: string, min: number, max: number, fallback: number): number {
  const v = single(q, name);
  if (v === null || v === '') return fallback;
  // Digits only: Number() would also take 0x10, 1e1 and padded spaces for a count.
  const n = /^\d{1,15}$/.test(v) ? Number(v) : NaN;
  if (!Number.isSafeInteger(n) || n < min || n > max) throw invalidParam(name, `${name} must be a whole number from ${min} to ${max}`);
  return n;
}

export function oneOf<T extends string>(q: URLSearchParams, name: string, allowed: readonly T[], fallback: T): T {
  const v = single(q, name);
  if (v === null || v === '') return fallback;
  if (!(allowed as readonly string[]).includes(v)) throw invalidParam(name, `${name} must be one of ${allowed.join(', ')}`);
  return v as T;
}

export function bool(q: URLSearchParams, name: string): boolean | undefined {
  const v = single(q, name);
  if (v === null || v === '') return undefined;
  if (v === 'true' || v === 'yes' || v === '1') return true;
  if (v === 'false' || v === 'no' || v === '0') return false;
  throw invalidParam(name, `${name} must be true or false`);
}

export function money(q: URLSearchParams, name: string): string | undefined {
  const v = single(q, name);
  if (v === null || v === '') return undefined;
  if (!isDecimalString(v)) throw invalidParam(name, `${name} must be a decimal amount in USD`);
  return v;
}

/** [from, to) with defaults (the last `defaultMs` up to now); from before to, at most ~10 years. */
export function range(q: URLSearchParams, defaultMs: number, now = Date.now()): { from: number; to: number } {
  const to = time(q, 'to') ?? now;
  const from = time(q, 'from') ?? to - defaultMs;
  if (from >= to) throw invalidParam('from', 'from must be before to');
  if (to - from > 3660 * 86_400_000) throw invalidParam('from', 'the range may span at most ten years');
  return { from, to };
}
