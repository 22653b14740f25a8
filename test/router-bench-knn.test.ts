// The kNN baseline's neighbour selection: the heap of k gives exactly what a stable sort of every
// index gave (ties to the lower index, the left-out row skipped), so the baseline's figures are unchanged.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { topK } from '../src/router/bench/knn.ts';

function bySort(s: Float64Array, k: number, skip: number): number[] {
  const order = Array.from(s.keys()).filter((j) => j !== skip);
  order.sort((a, b) => s[b]! - s[a]!);
  return order.slice(0, k);
}

test('topK equals a stable sort of every index: ties, zeros, negatives, k above the count, the skipped row', () => {
  let seed = 3;
  const rnd = () => { seed = (Math.imul(seed, 1664525) + 1013904223) >>> 0; return seed / 2 ** 32; };
  for (let t = 0; t < 400; t++) {
    const n = 1 + Math.floor(rnd() * 300);
    // Few distinct values: many ties; some zero (rows sharing no feature) and negative (signed features).
    const s = Float64Array.from({ length: n }, () => (rnd() < 0.3 ? 0 : Math.round((rnd() * 2 - 0.4) * 8) / 8));
    const k = [1, 5, 40, 160, 400][t % 5]!;
    const skip = rnd() < 0.5 ? Math.floor(rnd() * n) : -1;
    assert.deepEqual(topK(s, k, skip), bySort(s, k, skip), `n ${n}, k ${k}, skip ${skip}`);
  }
  assert.deepEqual(topK(new Float64Array([0.5, 0.9]), 0), []);
});
