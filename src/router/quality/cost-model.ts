// Learned cost and output length per model and prompt kind, from observed answers: cost is fitted
// as (price per prompt token) * prompt tokens + (output cost of the kind), the same structure as a
// catalog price times a token estimate, so the offline bench estimates costs the way production does.
import type { TaskKind } from './types.ts';

/** Per kind: [weight, sum tokens, sum cost, sum tokens^2, sum tokens*cost]. */
export type CostSums = [number, number, number, number, number];
/** Per kind: [weight, sum output tokens]. */
export type OutSums = [number, number];

export type ModelCost = { cost: Partial<Record<TaskKind, CostSums>>; out: Partial<Record<TaskKind, OutSums>> };

export function addCost(m: ModelCost, kind: TaskKind, w: number, tokens: number, cost: number): void {
  const s = (m.cost[kind] ??= [0, 0, 0, 0, 0]);
  s[0] += w; s[1] += w * tokens; s[2] += w * cost; s[3] += w * tokens * tokens; s[4] += w * tokens * cost;
}

export function addOut(m: ModelCost, kind: TaskKind, w: number, outputTokens: number): void {
  const s = (m.out[kind] ??= [0, 0]);
  s[0] += w; s[1] += w * outputTokens;
}

/** Fitted per model: one slope (USD per prompt token) and an intercept per kind (output cost). */
export type CostFit = { perToken: number; base: Partial<Record<TaskKind, number>>; baseAll: number; out: Partial<Record<TaskKind, number>>; outAll: number | undefined };

/**
 * Within-kind least squares with a slope shared across kinds (a model has one input price), the
 * slope kept >= 0 and intercepts >= 0; kinds without cost data fall back to the pooled intercept.
 */
export function fitCost(m: ModelCost): CostFit | undefined {
  let sxy = 0, sxx = 0, w = 0, st = 0, sc = 0;
  for (const s of Object.values(m.cost)) {
    if (!s || s[0] <= 0) continue;
    const mt = s[1] / s[0], mc = s[2] / s[0];
    sxy += s[4] - s[0] * mt * mc;
    sxx += s[3] - s[0] * mt * mt;
    w += s[0]; st += s[1]; sc += s[2];
  }
  const out: Partial<Record<TaskKind, number>> = {};
  let ow = 0, os = 0;
  for (const [k, s] of Object.entries(m.out)) {
    if (!s || s[0] <= 0) continue;
    out[k as TaskKind] = s[1] / s[0]; ow += s[0]; os += s[1];
  }
  const outAll = ow > 0 ? os / ow : undefined;
  if (w <= 0) return ow > 0 ? { perToken: 0, base: {}, baseAll: NaN, out, outAll } : undefined;
  let perToken = sxx > 1e-9 ? Math.max(0, sxy / sxx) : 0;
  // Too little spread in prompt length to tell price from output: all of the cost is "per token".
  if (sxx <= 1e-9 && st > 0) perToken = sc / st;
  const base: Partial<Record<TaskKind, number>> = {};
  for (const [k, s] of Object.entries(m.cost)) {
    if (!s || s[0] <= 0) continue;
    base[k as TaskKind] = Math.max(0, (s[2] - perToken * s[1]) / s[0]);
  }
  return { perToken, base, baseAll: Math.max(0, (sc - perToken * st) / w), out, outAll };
}

/** Expected cost of one answer to a prompt of `tokens` tokens and kind `kind`. */
export function expectedCost(f: CostFit, kind: TaskKind, tokens: number): number | undefined {
  if (Number.isNaN(f.baseAll)) return undefined;
  return f.perToken * tokens + (f.base[kind] ?? f.baseAll);
}
