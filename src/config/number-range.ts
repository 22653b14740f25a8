// Numbers in a config document that the schema's types let through but the gateway cannot use: YAML
// reads `.inf` and `1e400` as Infinity (which JSON Schema's "integer" accepts), and Node runs a timer
// longer than 2^31-1 ms after 1 ms instead (TimeoutOverflowWarning), so `auth.key_refresh_ms:
// 3000000000` read the keys every millisecond and an upstream timeout that large failed every call.
import type { ConfigProblem } from './load.ts';

/** The longest delay setTimeout and setInterval honour (about 24.8 days). */
export const MAX_TIMER_MS = 2 ** 31 - 1;

/** How a setting's unit converts to the milliseconds its timer runs for, by the name's suffix. */
const TIMER_UNITS: Array<[suffix: string, ms: number, unit: string]> = [['_ms', 1, 'ms'], ['_seconds', 1000, 'seconds'], ['_minutes', 60_000, 'minutes']];

/** Every non-finite number, and every timer setting longer than Node's timers run, with its path. */
export function numberRangeProblems(value: unknown, file: string): ConfigProblem[] {
  const out: ConfigProblem[] = [];
  const walk = (v: unknown, path: string, key: string): void => {
    if (typeof v === 'number') {
      if (!Number.isFinite(v)) { out.push({ file, path: path || '/', message: `must be a finite number, got ${v}` }); return; }
      const unit = TIMER_UNITS.find(([suffix]) => key.endsWith(suffix));
      if (unit && v * unit[1] > MAX_TIMER_MS) {
        const max = Math.floor(MAX_TIMER_MS / unit[1]);
        out.push({ file, path, message: `${v} ${unit[2]} is longer than a timer can run; at most ${max} ${unit[2]} (about 24.8 days)` });
      }
      return;
    }
    if (Array.isArray(v)) { v.forEach((x, i) => walk(x, `${path}/${i}`, key)); return; }
    if (v !== null && typeof v === 'object') for (const [k, x] of Object.entries(v)) walk(x, `${path}/${k}`, k);
  };
  walk(value, '', '');
  return out;
}
