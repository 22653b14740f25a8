// What a pass-through body (/v1/embeddings, /v1/completions, /v1/moderations, ...) is reserved at for a
// key's budget, per target. These bodies are relayed as they are, never decoded to the canonical
// request, so their text is read from the JSON itself: every string value (field names are not billed;
// `model` is left out) and every number inside an array (a token id: `input: [[1, 2, 3]]`). A target
// with a public tokenizer (OpenAI's: the only kind these routes serve) has its strings counted exactly
// while they fit EXACT_CHARS, beyond that at their UTF-8 bytes (the strict ceiling: a byte-level BPE
// never makes more tokens than bytes); others at the reservation's text figure (src/tokens/estimate.ts
// reserveTextTokens). Before, the body's bytes / 4: numeric text (a CSV, hex ids) counts about 2.5x that
// under OpenAI's tokenizers, so a key could pass its budget on these routes.
import type { ModelEntry } from '../config/types.ts';
import { exactCounter } from '../tokens/encoders.ts';
import { reserveTextTokens, textShape } from '../tokens/estimate.ts';
import { countingName, tokenizerFor } from '../tokens/families.ts';

/** Characters counted exactly per body (encoding runs at about 17 MB/s: at most ~4 ms). */
export const EXACT_CHARS = 65_536;

/** The body's texts and token ids, read once for every target of the plan. */
export type PassThroughText = { strings: string[]; chars: number; ids: number };

export function passThroughText(body: Record<string, unknown>): PassThroughText {
  const out: PassThroughText = { strings: [], chars: 0, ids: 0 };
  // The body was parsed under the server's JSON depth limit: the recursion is bounded.
  const walk = (v: unknown, inArray: boolean): void => {
    if (typeof v === 'string') { if (v.length > 0) { out.strings.push(v); out.chars += v.length; } }
    else if (typeof v === 'number') { if (inArray) out.ids++; }
    else if (Array.isArray(v)) { for (const x of v) walk(x, true); }
    else if (v !== null && typeof v === 'object') { for (const x of Object.values(v)) walk(x, false); }
  };
  for (const [k, v] of Object.entries(body)) if (k !== 'model') walk(v, false);
  return out;
}

/** Input tokens reserved for `e`: exact for a public tokenizer within EXACT_CHARS, else a bound or the reservation's estimate. */
export function passThroughInput(t: PassThroughText, e: ModelEntry): number {
  const tk = tokenizerFor(countingName(e.upstream, e.id));
  const exact = tk.kind === 'exact' ? exactCounter(tk.encoding) : null;
  let n = t.ids;
  for (const s of t.strings) {
    const bytes = Buffer.byteLength(s);
    if (tk.kind !== 'exact') n += reserveTextTokens(textShape(s), bytes);
    else n += exact !== null && t.chars <= EXACT_CHARS ? exact.count(s) : bytes + 1;
  }
  return n;
}
