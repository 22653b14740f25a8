// What a pass-through body (/v1/embeddings, /v1/completions, /v1/moderations, ...) is reserved at for a
// key's budget, per target. These bodies are relayed as they are, never decoded to the canonical
// request, so their text is read from the JSON itself: every string value (field names are not billed;
// `model` is left out) and every number inside an array (a token id: `input: [[1, 2, 3]]`). A target
// with a public tokenizer (OpenAI's: the only kind these routes serve) has its strings counted exactly
// while the work fits a budget (below), the others at their UTF-8 bytes + 1 (the strict ceiling: a
// byte-level BPE never makes more tokens than bytes); other targets at the reservation's text figure
// (src/tokens/estimate.ts reserveTextTokens). Before, the body's bytes / 4: numeric text (a CSV, hex
// ids) counts about 2.5x that under OpenAI's tokenizers, so a key could pass its budget on these routes.
//
// The exact count runs on the main thread, and gpt-tokenizer's cost is not linear in characters: a run
// without whitespace is one piece whose BPE is quadratic (65,536 random CJK characters in one run held
// the event loop 6.4 s under cl100k_base; 16,384 random letters 90 ms), and characters it meets rarely
// cost up to ~15 us each (4,096 random CJK characters in runs of 8: 50-70 ms), where English prose and
// digits run at 0.05-0.3 us. So a string is counted exactly only when no run of non-whitespace in it is
// longer than MAX_RUN, its characters fit the remaining budget at their class's weight (EXACT_UNITS),
// and the counting so far took less than EXACT_MS; every other string is taken at its bound.
import type { ModelEntry } from '../config/types.ts';
import { exactCounter } from '../tokens/encoders.ts';
import { reserveTextTokens, textShape } from '../tokens/estimate.ts';
import { exactWeight } from '../tokens/exact-cost.ts';
import { countingName, tokenizerFor, type Encoding } from '../tokens/families.ts';

/** Weighted characters counted exactly per body (src/tokens/exact-cost.ts exactWeight: digits and whitespace 1, ASCII punctuation 2, ASCII letters 4, beyond ASCII 32). */
export const EXACT_UNITS = 65_536;
/** The longest run of non-whitespace characters a string counted exactly may hold (one BPE piece at most this long). */
export const MAX_RUN = 128;
/** Exact counting stops once it has taken this long (checked between strings). */
const EXACT_MS = 8;

/** The body's texts and token ids, read once for every target of the plan; per-class sums are computed once, on first use. */
export type PassThroughText = { strings: string[]; chars: number; ids: number; bound?: number; other?: number; exact?: Partial<Record<Encoding, number>> };

export function passThroughText(body: Record<string, unknown>): PassThroughText {
  const strings: string[] = [];
  let chars = 0, ids = 0;
  // The body was parsed under the server's JSON depth limit: the recursion is bounded. Plain loops
  // (no Object.values arrays, no closure per call): 1,000,000 one-character strings (4 MB) took 33-64 ms.
  const walk = (v: unknown, inArray: boolean): void => {
    if (typeof v === 'string') { if (v.length > 0) { strings.push(v); chars += v.length; } }
    else if (typeof v === 'number') { if (inArray) ids++; }
    else if (Array.isArray(v)) { for (let i = 0; i < v.length; i++) walk(v[i], true); }
    else if (v !== null && typeof v === 'object') { const o = v as Record<string, unknown>; for (const k in o) walk(o[k], false); }
  };
  for (const k in body) if (k !== 'model') walk(body[k], false);
  return { strings, chars, ids };
}

/** Input tokens reserved for `e`: exact for a public tokenizer within the budget, else a bound or the reservation's estimate. */
export function passThroughInput(t: PassThroughText, e: ModelEntry): number {
  const tk = tokenizerFor(countingName(e.upstream, e.id));
  if (tk.kind !== 'exact') {
    if (t.other === undefined) { let n = 0; for (const s of t.strings) n += reserveTextTokens(textShape(s), Buffer.byteLength(s)); t.other = n; }
    return t.ids + t.other;
  }
  const exact = exactCounter(tk.encoding);
  if (exact === null) {
    if (t.bound === undefined) { let n = 0; for (const s of t.strings) n += Buffer.byteLength(s) + 1; t.bound = n; }
    return t.ids + t.bound;
  }
  const memo = (t.exact ??= {});
  let n = memo[tk.encoding];
  if (n === undefined) {
    n = 0;
    let left = EXACT_UNITS;
    const t0 = performance.now();
    for (const s of t.strings) {
      const w = left > 0 && s.length <= left ? exactWeight(s, MAX_RUN) : Infinity;
      if (w <= left && performance.now() - t0 < EXACT_MS) { left -= w; n += exact.count(s); } else n += Buffer.byteLength(s) + 1;
    }
    memo[tk.encoding] = n;
  }
  return t.ids + n;
}
