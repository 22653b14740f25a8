// ISO 8601 UTC timestamps ("2026-11-21T14:07:36.123Z") for the request path. Date#toISOString
// costs about 1 µs here; within one second every timestamp shares its first 20 characters, so those
// are formatted once per second and only the milliseconds are appended.
let cachedSecond = NaN;
let cachedPrefix = '';
const MS = Array.from({ length: 1000 }, (_, i) => `${String(i).padStart(3, '0')}Z`);

/** The same string as `new Date(ms).toISOString()` (truncating fractional milliseconds). */
export function isoFromMs(ms: number): string {
  const t = Math.trunc(ms);
  const second = Math.floor(t / 1000);
  if (second !== cachedSecond) {
    const full = new Date(t).toISOString();
    // Years outside 0000-9999 are written with a sign and six digits: no shared prefix to keep.
    if (full.length !== 24) return full;
    cachedSecond = second;
    cachedPrefix = full.slice(0, 20);
  }
  return cachedPrefix + MS[t - second * 1000]!;
}
