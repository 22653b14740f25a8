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
  }
  return { candidate: c, maxOutputTokens: cap };
}

/**
 * Moves the best `k` of xs[from, to) to its front in order, the rest after them in their order (one
 * pass keeping the best k in a small sorted list: about one comparison per element, no sort of the
 * whole list, no copy of it).
 */
export function selectTop(xs: number[], k: number, better: (a: number, b: number) => number, from = 0, to = xs.length): void {
  if (to - from <= 1 || k <= 0) return;
  const top: number[] = [];
  for (let r = from; r < to; r++) {
    const x = xs[r]!;
    if (top.length === k && better(x, top[k - 1]!) >= 0) continue;
    let at = top.length < k ? top.length : k - 1;
    while (at > 0 && better(x, top[at - 1]!) < 0) { if (at < top.length) top[at] = top[at - 1]!; else top.push(top[at - 1]!); at--; }
    if (at < top.length) top[at] = x; else top.push(x);
  }
  // In place, no copy of the list (it holds every candidate still in the running): the rest slide to
  // the back in their order (the write index never passes the read index), then the best fill the front.
  let w = to;
  for (let r = to - 1; r >= from; r--) { const x = xs[r]!; if (!top.includes(x)) xs[--w] = x; }
  for (let i = 0; i < top.length; i++) xs[from + i] = top[i]!;
}

function affordableOutput(c: Candidate, ceilingTokens: number, maxCost: number, cacheControl: boolean): number | null {
  // decimalFromNumber, not toFixed: toFixed writes 1e21 and above in exponent form, which no decimal parser reads (max_cost 1e308 was a 500).
  const n = maxAffordableOutputTokens(c.entry.model.pricing, ceilingTokens, decimalFromNumber(maxCost), { cacheWrite: cacheControl ? 'any' : 'none' });
  return n === null ? null : Number.isFinite(n) ? n : Number.MAX_SAFE_INTEGER;
}
