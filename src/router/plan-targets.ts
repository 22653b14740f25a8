// The attempt plan's pieces: each target's output cap under max_cost (exact decimal arithmetic on
// the prompt's token ceiling), and the one-pass selection of the best few candidates.
import { maxAffordableOutputTokens } from '../catalog/cost.ts';
import { decimalFromNumber } from '../catalog/decimal.ts';
import type { Candidate } from './candidates.ts';
import type { DecideInput, PlanTarget, Ranked } from './decision.ts';

/**
 * One plan entry with its output cap: the client's limit, the model's, and under max_cost the largest
 * output whose worst-case bill (exact decimal, prompt at its ceiling, dearest input price) stays
 * within it. A candidate that cannot afford one output token is marked excluded under max_cost (null).
 */
export function planTarget(r: Ranked, inp: DecideInput): PlanTarget | null {
  const c = r.cand;
  let cap: number | undefined = inp.view.clientMaxTokens !== null ? Math.min(inp.view.clientMaxTokens, c.maxOutput) : undefined;
  if (inp.params.maxCost !== null) {
    const afford = affordableOutput(c, r.inputTokensCeiling, inp.params.maxCost, inp.view.cacheControl);
    if (afford === null || afford < 1) {
      r.excluded = { constraint: 'max_cost', reason: `even one output token could exceed max_cost $${inp.params.maxCost} with a prompt of up to ${r.inputTokensCeiling} tokens` };
      return null;
    }
    cap = Math.min(cap ?? c.maxOutput, afford, c.maxOutput);
    return { candidate: c, maxOutputTokens: cap, bound: { outputTokens: cap, inputTokens: r.inputTokensCeiling } };
  }
  return { candidate: c, maxOutputTokens: cap };
}

/**
 * selectTop's best so far, reused (selectTop is synchronous and keeps nothing), with an explicit
 * length: emptying an array by its length frees its storage, which pushes then grow again.
 */
const TOP: number[] = [];

/**
 * Moves the best `k` of xs[from, to) to its front in order, the rest after them in their order (one
 * pass keeping the best k in a small sorted list: about one comparison per element, no sort of the
 * whole list, no copy of it).
 */
export function selectTop(xs: number[], k: number, better: (a: number, b: number) => number, from = 0, to = xs.length): void {
  if (to - from <= 1 || k <= 0) return;
  let m = 0; // TOP[0, m): the best so far, best first
  for (let r = from; r < to; r++) {
    const x = xs[r]!;
    if (m === k && better(x, TOP[k - 1]!) >= 0) continue;
    let at = m < k ? m++ : k - 1;
    while (at > 0 && better(x, TOP[at - 1]!) < 0) { TOP[at] = TOP[at - 1]!; at--; }
    TOP[at] = x;
  }
  // In place, no copy of the list (it holds every candidate still in the running): the rest slide to
  // the back in their order (the write index never passes the read index), then the best fill the front.
  let w = to;
  for (let r = to - 1; r >= from; r--) { const x = xs[r]!; if (!inTop(x, m)) xs[--w] = x; }
  for (let i = 0; i < m; i++) xs[from + i] = TOP[i]!;
}

const inTop = (x: number, m: number): boolean => {
  for (let i = 0; i < m; i++) if (TOP[i] === x) return true;
  return false;
};

function affordableOutput(c: Candidate, ceilingTokens: number, maxCost: number, cacheControl: boolean): number | null {
  // decimalFromNumber, not toFixed: toFixed writes 1e21 and above in exponent form, which no decimal parser reads (max_cost 1e308 was a 500).
  const n = maxAffordableOutputTokens(c.entry.model.pricing, ceilingTokens, decimalFromNumber(maxCost), { cacheWrite: cacheControl ? 'any' : 'none' });
  return n === null ? null : Number.isFinite(n) ? n : Number.MAX_SAFE_INTEGER;
}
