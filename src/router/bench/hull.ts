// Cost/quality curve arithmetic: the non-decreasing convex hull of (cost, score) points, the area
// under it (AIQ), and where it reaches a score or a cost. Pure functions, tested by hand-computed cases.

export type Point = { cost: number; score: number };

/**
 * The best score reachable at each budget by mixing operating points (choosing point i for a
 * share of prompts): the upper concave hull from the cheapest point (the best score among the
 * cheapest) to the best-scoring point (the cheapest among the best), vertices ascending in cost.
 * Beyond the last vertex the curve stays flat; below the first it does not exist (no mix is that cheap).
 */
export function hull(points: readonly Point[]): Point[] {
  const ps = points.filter((p) => Number.isFinite(p.cost) && Number.isFinite(p.score))
    .slice().sort((a, b) => a.cost - b.cost || b.score - a.score);
  if (ps.length === 0) return [];
  let top = ps[0]!;
  for (const p of ps) if (p.score > top.score) top = p;
  const h: Point[] = [];
  for (const p of ps) {
    if (p.cost > top.cost) break;
    if (h.length > 0 && p.cost === h[h.length - 1]!.cost) continue; // same cost, lower score
    // Pop while the last vertex lies on or below the chord from the one before it to p.
    while (h.length >= 2) {
      const a = h[h.length - 2]!, b = h[h.length - 1]!;
      const cross = (b.cost - a.cost) * (p.score - a.score) - (b.score - a.score) * (p.cost - a.cost);
      if (cross >= 0) h.pop(); else break;
    }
    if (h.length === 1 && p.score <= h[0]!.score) continue; // a dearer point that is no better
    h.push(p);
  }
  return h;
}

/** Value of the hull curve at cost c: undefined below its cheapest vertex, flat after its last. */
export function hullAt(h: readonly Point[], c: number): number | undefined {
  if (h.length === 0 || c < h[0]!.cost) return undefined;
  for (let i = 1; i < h.length; i++) {
    const a = h[i - 1]!, b = h[i]!;
    if (c <= b.cost) return a.score + ((b.score - a.score) * (c - a.cost)) / (b.cost - a.cost);
  }
  return h[h.length - 1]!.score;
}

/** The lowest cost at which the hull curve reaches `score` (undefined if it never does). */
export function costToReach(h: readonly Point[], score: number): number | undefined {
  if (h.length === 0) return undefined;
  if (h[0]!.score >= score) return h[0]!.cost;
  for (let i = 1; i < h.length; i++) {
    const a = h[i - 1]!, b = h[i]!;
    if (b.score >= score) return a.cost + ((score - a.score) * (b.cost - a.cost)) / (b.score - a.score);
  }
  return undefined;
}

/**
 * AIQ: the area under the hull curve over [lo, hi] divided by (hi - lo), with costs normalised to
 * that range (RouterBench's definition; lo/hi are the cheapest and dearest single model's mean
 * cost). Where the curve does not exist (below the cheapest point) it counts as score 0. When
 * hi <= lo the AIQ is the curve's value at lo (0 if undefined).
 */
export function aiq(points: readonly Point[], lo: number, hi: number): number {
  const h = hull(points);
  if (h.length === 0) return 0;
  if (!(hi > lo)) return hullAt(h, lo) ?? 0;
  // Breakpoints of the piecewise-linear curve inside [lo, hi]; trapezoids between them are exact.
  const xs = [lo, hi];
  for (const p of h) if (p.cost > lo && p.cost < hi) xs.push(p.cost);
  xs.sort((a, b) => a - b);
  let area = 0;
  for (let i = 1; i < xs.length; i++) {
    const a = xs[i - 1]!, b = xs[i]!;
    if (b <= a) continue;
    const start = h[0]!.cost;
    if (b <= start) continue;
    const from = Math.max(a, start);
    area += ((hullAt(h, from)! + hullAt(h, b)!) / 2) * (b - from);
  }
  return area / (hi - lo);
}
