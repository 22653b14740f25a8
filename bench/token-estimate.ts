// Fits and measures the prompt-token estimate of src/tokens/estimate.ts: the truth is o200k_base
// (gpt-tokenizer) on a mixed sample; prints the least-squares coefficients, and the held-out error of
// the shipped coefficients, of the fitted ones and of chars/4. Run: npx node bench/token-estimate.ts
import { countTokens } from 'gpt-tokenizer/encoding/o200k_base';
import { COEFFICIENTS, estimateShape, textShape, type TextShape } from '../src/tokens/estimate.ts';
import { textSample } from './lib/text-sample.ts';

const samples = textSample();

const KEYS = Object.keys(COEFFICIENTS) as Array<keyof TextShape>;
const rows = samples.map((s) => ({ ...s, shape: textShape(s.text), truth: countTokens(s.text) }));
// Deterministic split: every 4th sample is held out.
const train = rows.filter((_, i) => i % 4 !== 0);
const test = rows.filter((_, i) => i % 4 === 0);

/** Least squares without intercept, weighting each sample by 1/truth so the fit minimises relative error. */
function fit(rs: typeof rows): Record<keyof TextShape, number> {
  const n = KEYS.length;
  const A = Array.from({ length: n }, () => new Array<number>(n).fill(0));
  const b = new Array<number>(n).fill(0);
  for (const r of rs) {
    const x = KEYS.map((k) => r.shape[k]);
    const w = 1 / Math.max(1, r.truth) ** 2;
    for (let i = 0; i < n; i++) { b[i]! += w * x[i]! * r.truth; for (let j = 0; j < n; j++) A[i]![j]! += w * x[i]! * x[j]!; }
  }
  for (let i = 0; i < n; i++) A[i]![i]! += 1e-6; // ridge: a class absent from the sample stays finite
  // Gaussian elimination.
  for (let c = 0; c < n; c++) {
    let p = c;
    for (let r = c + 1; r < n; r++) if (Math.abs(A[r]![c]!) > Math.abs(A[p]![c]!)) p = r;
    [A[c], A[p]] = [A[p]!, A[c]!]; [b[c], b[p]] = [b[p]!, b[c]!];
    for (let r = 0; r < n; r++) {
      if (r === c) continue;
      const f = A[r]![c]! / A[c]![c]!;
      for (let k = c; k < n; k++) A[r]![k]! -= f * A[c]![k]!;
      b[r]! -= f * b[c]!;
    }
  }
  return Object.fromEntries(KEYS.map((k, i) => [k, +(b[i]! / A[i]![i]!).toFixed(3)])) as Record<keyof TextShape, number>;
}

const fitted = fit(train);
type Est = (r: (typeof rows)[number]) => number;
function report(name: string, est: Est): void {
  const byKind = new Map<string, number[]>();
  const all: number[] = [];
  for (const r of test) {
    const e = (est(r) - r.truth) / r.truth;
    all.push(e);
    const k = r.kind.startsWith('lang:') ? (/^(zh|ja|ko)/.test(r.kind.slice(5)) ? 'lang:cjk' : 'lang:other') : r.kind;
    (byKind.get(k) ?? byKind.set(k, []).get(k)!).push(e);
  }
  const stat = (es: number[]): string => {
    const abs = es.map(Math.abs).sort((a, b) => a - b);
    const mean = es.reduce((a, b) => a + b, 0) / es.length;
    return `mean ${(100 * mean).toFixed(1)}% |err| median ${(100 * abs[Math.floor(abs.length / 2)]!).toFixed(1)}% p90 ${(100 * abs[Math.floor(abs.length * 0.9)]!).toFixed(1)}% max under ${(100 * Math.min(...es)).toFixed(1)}%`;
  };
  console.log(`${name.padEnd(10)} all (${all.length}): ${stat(all)}`);
  for (const [k, es] of [...byKind].sort()) console.log(`${''.padEnd(10)} ${k} (${es.length}): ${stat(es)}`);
}
console.log(`samples: ${rows.length} (train ${train.length}, held out ${test.length}); truth: o200k_base`);
console.log('fitted coefficients:', JSON.stringify(fitted));
report('shipped', (r) => estimateShape(r.shape));
report('fitted', (r) => estimateShape(r.shape, fitted));
report('chars/4', (r) => Math.ceil(r.text.length / 4));
