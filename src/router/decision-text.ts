// The stored JSON text of a recorded decision and of its features, written by the router's worker
// from the packed values (src/router/decision-row.ts) in one pass: the decision object is built once
// with its figures rounded as they are read (not unpacked, then copied rounded by roundRecorded) and
// serialised by JSON.stringify, which writes numbers and strings far faster than JS string building;
// the features' text is the main thread's JSON of them with the vector spliced in. The texts are the
// ones JSON.stringify(roundRecorded(recordedDecision(...))) (src/router/explain.ts, the reference)
// and JSON.stringify(features) give, character for character (test/router-record.test.ts), and the
// figures the rollups count are read on the way.
import type { AttemptRecord } from '../store/types.ts';
import type { DecisionFields } from '../store/router-rollup.ts';
import { numJson, round } from './round.ts';

/**
 * Where a row's packed values are: its decision's numbers from `ni` in `n` (packDecision's order), its
 * strings as indexes from `si` in `n` into the chunk's distinct strings `values` (-1 for null).
 */
export type TextReader = { n: ArrayLike<number>; ni: number; si: number; values: ReadonlyArray<string> };

const NONE: ReadonlyArray<readonly [string, number]> = [];

/**
 * The decision packDecision wrote at `r`, as stored: its JSON text (figures rounded as roundRecorded
 * rounds them) and the fields the rollups count. Advances `r`. The objects keyed by constraint are
 * filled by assignment as recordedDecision fills them, so JSON orders their keys the same way (array
 * indexes first; a `__proto__` name is dropped, and not counted). `budgetDropped`: the plan's targets the
 * key's budget left out, written after the attempts as recordedDecision writes them.
 */
export function decisionText(r: TextReader, attempts: readonly AttemptRecord[], budgetDropped: readonly string[] | null): { text: string; fields: DecisionFields } {
  const { n, values } = r;
  let { ni, si } = r;
  const S = (): string | null => { const i = n[si++]!; return i < 0 ? null : values[i]!; };
  const N = (): number | null => { const x = n[ni++]!; return Number.isNaN(x) ? null : x; };
  const w = N(), version = n[ni++]!, explored = n[ni++] === 1, q = n[ni++]!, cost = n[ni++]!, input = N(), out = N(), candidates = n[ni++]!;
  // NaN stands for null in the packed numbers (and JSON writes NaN as null).
  const quality = Number.isNaN(q) ? null : round(q, 4);
  const predicted = Number.isNaN(cost) ? null : round(cost);
  const policy = S(), kind = S(), affinity = S(), chosen = S(), tokenMethod = S();
  const plan: Array<[string | null, number | null]> = [];
  for (let k = n[ni++]!; k > 0; k--) plan.push([S(), N()]);
  let excludedBy = NONE;
  const by: Record<string, number> = {};
  const nBy = n[ni++]!;
  if (nBy > 0) {
    const list: Array<readonly [string, number]> = [];
    for (let k = 0; k < nBy; k++) {
      const name = S()!; const count = n[ni++]!;
      by[name] = count;
      if (name !== '__proto__') list.push([name, count]);
    }
    excludedBy = list;
  }
  const included: Array<[string | null, number, number, number]> = [];
  for (let k = n[ni++]!; k > 0; k--) { included.push([S(), round(n[ni]!, 3), round(n[ni + 1]!, 3), round(n[ni + 2]!, 4)]); ni += 3; }
  const excluded: Record<string, Array<[string | null, number, number]>> = {};
  for (let k = n[ni++]!; k > 0; k--) {
    const name = S()!;
    const list: Array<[string | null, number, number]> = (excluded[name] = []);
    for (let m = n[ni++]!; m > 0; m--) { list.push([S(), round(n[ni]!, 3), round(n[ni + 1]!, 3)]); ni += 2; }
  }
  r.ni = ni; r.si = si;
  const text = JSON.stringify({
    w, policy, state_version: version, kind, explored, affinity, chosen, chosen_quality: quality, chosen_cost_usd: predicted,
    input_tokens: input, token_method: tokenMethod, expected_output_tokens: out, plan, candidates, excluded_by: by, included, excluded, attempts,
    ...(budgetDropped !== null && budgetDropped.length > 0 ? { budget_dropped: budgetDropped } : {}),
  });
  return { text, fields: { chosen, quality, predicted, explored, affinity, attempts: attempts.length, version, excludedBy } };
}

/**
 * The features' JSON text as JSON.stringify({ ...meta, idx, val }) writes it: `meta` the JSON text of
 * the features without idx and val, and idx, val the `m` numbers each at `at` in `n`.
 */
export function featuresText(meta: string, n: ArrayLike<number>, at: number, m: number): string {
  const p: string[] = [];
  p.push(meta.length > 2 ? meta.slice(0, -1) : '{', meta.length > 2 ? ',"idx":[' : '"idx":[');
  for (let i = 0; i < m; i++) p.push(i > 0 ? ',' : '', numJson(n[at + i]!));
  p.push('],"val":[');
  for (let i = 0; i < m; i++) p.push(i > 0 ? ',' : '', numJson(n[at + m + i]!));
  p.push(']}');
  return p.join('');
}
