// Cross-validation of the router's quality predictor on router-bench data (default: the shared dev
// file, read in place). Splits hold out prompts (k-fold), whole tasks, and whole models; prints the
// router's AIQ against the kNN baseline and the single-model hull per fold, mean and spread.
//   node bench/router-quality.ts [--data FILE] [--folds 5] [--seeds 1,2,3] [--splits prompts,tasks,models,newmodels] [--no-knn]
import { benchArgs } from './lib/args.ts';
import { readBench, modelsOf, type BenchRow } from '../src/router/bench/data.ts';
import { evaluate, type EvaluateOptions } from '../src/router/bench/evaluate.ts';
import { rng } from '../src/router/quality/clusters.ts';


/** Deterministic shuffle (the PRNG training uses) so folds are the same run to run. */
function shuffled<T>(xs: readonly T[], seed: number): T[] {
  const rnd = rng(seed);
  const out = xs.slice();
  for (let i = out.length - 1; i > 0; i--) { const j = Math.floor(rnd() * (i + 1)); [out[i], out[j]] = [out[j]!, out[i]!]; }
  return out;
}

type Fold = { name: string; train: BenchRow[]; test: BenchRow[]; opts?: EvaluateOptions };

export function folds(rows: BenchRow[], kind: string, k: number, seed: number): Fold[] {
  if (kind === 'prompts') {
    const sh = shuffled(rows, seed);
    return Array.from({ length: k }, (_, f) => ({
      name: `prompts ${f + 1}/${k}`,
      train: sh.filter((_, i) => i % k !== f), test: sh.filter((_, i) => i % k === f),
    }));
  }
  if (kind === 'tasks') {
    return [...new Set(rows.map((r) => r.task))].map((t) => ({
      name: `task ${t}`, train: rows.filter((r) => r.task !== t), test: rows.filter((r) => r.task === t),
    }));
  }
  // Models: the held-out model's train outcomes are withheld (or all but `few` of them: a new model
  // with a little evidence); it is still in the test file, so with none the router cannot pick it
  // while the single-model hull can. Prompts split as in fold 1 of 'prompts'.
  const sh = shuffled(rows, seed);
  const train = sh.filter((_, i) => i % k !== 0), test = sh.filter((_, i) => i % k === 0);
  const few = kind === 'newmodels' ? 50 : 0;
  return modelsOf(rows).map((m) => {
    const kept = new Set(train.filter((r) => r.outcomes.has(m)).slice(0, few));
    return { name: `${few ? 'new ' : ''}model ${m}${few ? ` (${few} outcomes)` : ''}`, train, test, opts: { keep: (x: string, r: BenchRow) => x !== m || kept.has(r) } };
  });
}

const fmt = (x: number | undefined, d = 4) => (x === undefined || Number.isNaN(x) ? '-' : x.toFixed(d));
function spread(xs: number[]): string {
  const m = xs.reduce((s, x) => s + x, 0) / xs.length;
  const sd = Math.sqrt(xs.reduce((s, x) => s + (x - m) ** 2, 0) / Math.max(1, xs.length - 1));
  return `${fmt(m)} ± ${fmt(sd)} (min ${fmt(Math.min(...xs))}, max ${fmt(Math.max(...xs))})`;
}

if (import.meta.main) {
  const { values: a } = benchArgs({
    options: {
      data: { type: 'string', default: '../shared/router-bench/routerbench-dev.jsonl' },
      folds: { type: 'string', default: '5' },
      seeds: { type: 'string', default: '1' },
      splits: { type: 'string', default: 'prompts,tasks,models,newmodels' },
      'no-knn': { type: 'boolean', default: false },
    },
  });
  const rows = readBench(a.data!);
  for (const split of a.splits!.split(',')) {
    const fs = split === 'prompts' ? a.seeds!.split(',').flatMap((seed) => folds(rows, split, Number(a.folds), Number(seed))) : folds(rows, split, Number(a.folds), 1);
    const r: number[] = [], kn: number[] = [], h: number[] = [], half: number[] = [];
    console.log(`\n== split by ${split}: ${fs.length} folds`);
    console.log('fold'.padEnd(44) + 'router   knn      single   router-single  cost@best/best-cost  k');
    for (const f of fs) {
      const t0 = performance.now();
      const e = evaluate(f.train, f.test, { ...f.opts, noKnn: a['no-knn'] });
      r.push(e.router.aiq); kn.push(e.knn.aiq); h.push(e.bestSingleHull);
      const ratio = e.routerCostAtBest === undefined ? NaN : e.routerCostAtBest / e.best.cost;
      half.push(ratio);
      console.log(`${f.name.padEnd(44)}${fmt(e.router.aiq)}   ${fmt(e.knn.aiq)}   ${fmt(e.bestSingleHull)}   ${fmt(e.router.aiq - e.bestSingleHull).padStart(7)}        ${fmt(ratio, 3).padStart(6)}            ${e.knn.k}   (${((performance.now() - t0) / 1000).toFixed(1)} s)`);
    }
    console.log(`router AIQ        ${spread(r)}`);
    if (!a['no-knn']) console.log(`knn AIQ           ${spread(kn)}`);
    console.log(`single hull AIQ   ${spread(h)}`);
    console.log(`router - single   ${spread(r.map((x, i) => x - h[i]!))}`);
    if (!a['no-knn']) console.log(`router - knn      ${spread(r.map((x, i) => x - kn[i]!))}`);
    const fin = half.filter((x) => Number.isFinite(x));
    console.log(`cost to reach best single / its cost: ${fin.length ? spread(fin) : '-'}; not reached in ${half.length - fin.length} of ${half.length} folds`);
  }
}
