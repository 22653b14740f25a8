// Expected output tokens per canonical model and prompt kind, learned from every routed answer (no
// feedback needed): the mean of observed completion tokens, folded in by the background trainer.

/** canonical model -> prompt kind -> [weighted count, mean output tokens]. Plain JSON (stored with the state). */
export type OutputTable = Record<string, Record<string, [number, number]>>;

/** Observations that make the learned mean fully trusted; below it, blended with the fallback. */
const FULL_TRUST = 5;

/**
 * Output tokens to expect: the table's mean for (model, kind), else the model's mean over all
 * kinds, blended toward the quality model's estimate or the configured default while evidence is thin.
 */
export function expectedOutput(t: OutputTable, model: string, kind: string, fromQuality: number | undefined, fallback: number): number {
  const m = t[model];
  const base = fromQuality ?? fallback;
  if (!m) return Math.round(base);
  const cell = m[kind] ?? m['*'];
  if (!cell) return Math.round(base);
  const [n, mean] = cell;
  const w = Math.min(1, n / FULL_TRUST);
  return Math.max(1, Math.round(w * mean + (1 - w) * base));
}

/**
 * Output counts past this are no answer's (the catalog's largest output limit is 393,216 tokens) but an
 * upstream's garbage usage (billed as reported, up to 2^31-1): one such count in a running mean would
 * move it by count / n for good (2^31 after 1,000 answers: +2 million tokens expected).
 */
export const MAX_OBSERVED_OUTPUT = 1_000_000;

/** Folds observations into a copy of the table (per kind and the model-wide '*' row). */
export function foldOutputs(t: OutputTable, obs: ReadonlyArray<{ model: string; kind: string; outputTokens: number }>): OutputTable {
  const out: OutputTable = structuredClone(t);
  for (const o of obs) {
    if (!Number.isFinite(o.outputTokens) || o.outputTokens < 0 || o.outputTokens > MAX_OBSERVED_OUTPUT) continue;
    const m = (out[o.model] ??= {});
    for (const k of [o.kind, '*']) {
      const cell = m[k] ?? [0, 0];
      const n = cell[0] + 1;
      m[k] = [n, cell[1] + (o.outputTokens - cell[1]) / n];
    }
  }
  return out;
}

const isObject = (v: unknown): v is Record<string, unknown> => typeof v === 'object' && v !== null && !Array.isArray(v);

/**
 * Why `t` (a stored state's output column, as parsed) is no OutputTable, or null when it is one:
 * expectedOutput reads every cell as [count, mean], so a state holding anything else would fail
 * every routed request. Cheap: models x kinds cells.
 */
export function outputTableProblem(t: unknown): string | null {
  if (!isObject(t)) return `the output table is ${t === null ? 'null' : Array.isArray(t) ? 'an array' : typeof t}, not an object`;
  for (const [model, kinds] of Object.entries(t)) {
    if (!isObject(kinds)) return `the output table's entry for ${JSON.stringify(model)} is not an object`;
    for (const [kind, cell] of Object.entries(kinds)) {
      if (!Array.isArray(cell) || cell.length !== 2 || !cell.every((x) => typeof x === 'number' && Number.isFinite(x))) {
        return `the output table's cell ${JSON.stringify(model)}/${JSON.stringify(kind)} is not [count, mean]`;
      }
    }
  }
  return null;
}
