// Decayed sufficient statistics shared by train and predict: weighted counts and sums kept as
// small number arrays so a state stays plain JSON and two states can be merged or decayed.

/** [weight, weighted sum of scores, weighted sum of squared scores]. */
export type Tally = [number, number, number];

export const newTally = (): Tally => [0, 0, 0];

export function addTally(t: Tally, w: number, x: number): void {
  t[0] += w; t[1] += w * x; t[2] += w * x * x;
}

/**
 * Replaces a value `from` folded into t with weight w by `to`: the sums move, the weight stays.
 * Nothing happens to an empty tally; the sums stay within what scores in [0, 1] can give.
 */
export function correctTally(t: Tally, w: number, from: number, to: number): void {
  if (!(t[0] > 0)) return;
  t[1] = Math.min(t[0], Math.max(0, t[1] + w * (to - from)));
  t[2] = Math.min(t[0], Math.max(0, t[2] + w * (to * to - from * from)));
}

/** Posterior mean of a tally shrunk toward `prior` with `strength` pseudo-observations. */
export const shrink = (t: Tally | undefined, prior: number, strength: number): number =>
  t && t[0] > 0 ? (t[1] + strength * prior) / (t[0] + strength) : prior;

/** Multiplies every number of a nested record of arrays by f (evidence decay), in place. */
export function scaleDeep(x: unknown, f: number): void {
  if (Array.isArray(x)) {
    for (let i = 0; i < x.length; i++) {
      const v = x[i];
      if (typeof v === 'number') x[i] = v * f; else scaleDeep(v, f);
    }
  } else if (x && typeof x === 'object') {
    for (const v of Object.values(x)) scaleDeep(v, f);
  }
}

/** Returns rec[k], creating it with make() when absent. */
export function slot<T>(rec: Record<string, T>, k: string, make: () => T): T {
  let v = rec[k];
  if (v === undefined) { v = make(); rec[k] = v; }
  return v;
}

/** Decay factor of evidence `ageMs` old for a half-life in days (no half-life: 1). */
export function decay(ageMs: number, halfLifeDays: number | undefined): number {
  if (halfLifeDays === undefined || !(halfLifeDays > 0) || ageMs <= 0) return 1;
  return Math.pow(0.5, ageMs / (halfLifeDays * 86_400_000));
}
