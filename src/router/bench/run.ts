// `gateway router-bench --train FILE --test FILE [--plot FILE.svg] [--choices FILE.jsonl]`: the
// offline evaluation of the router (docs/router.md, "Offline evaluation"). Prints the sweep table,
// the baselines and the figures; the last line is `AIQ router=<x> knn=<y> best_single_hull=<z>`.
import { closeSync, openSync, realpathSync, writeFileSync } from 'node:fs';
import { resolve } from 'node:path';
import { noWords, parseArgs } from '../../util/cli-args.ts';
import { BenchDataError, modelsOf, readBench } from './data.ts';
import { evaluate, trainMs, type Evaluation } from './evaluate.ts';
import { plotSvg } from './svg.ts';

export const ROUTER_BENCH_USAGE = 'router-bench --train FILE --test FILE [--plot FILE.svg] [--choices FILE.jsonl]';

const f4 = (x: number | undefined) => (x === undefined || !Number.isFinite(x) ? '-' : x.toFixed(4));
const usd = (x: number | undefined) => (x === undefined || !Number.isFinite(x) ? '-' : x.toExponential(3));

/** The report as lines (the last one is the AIQ line). */
export function report(e: Evaluation, head: string[]): string[] {
  const L = [...head, ''];
  L.push('W (willingness_to_pay)   router score  router cost/prompt   knn score  knn cost/prompt');
  e.grid.forEach((w, i) => {
    const r = e.router.points[i]!, k = e.knn.points[i];
    L.push(`${w.toExponential(2).padEnd(25)}${f4(r.score).padStart(12)}  ${usd(r.cost).padStart(18)}   ${f4(k?.score).padStart(9)}  ${usd(k?.cost).padStart(15)}`);
  });
  L.push('', 'single models on the test file          score   cost/prompt  answered');
  for (const s of [...e.singles].sort((a, b) => a.cost - b.cost)) L.push(`  ${s.model.padEnd(36)}${f4(s.score).padStart(8)}  ${usd(s.cost).padStart(12)}  ${String(s.answered).padStart(8)}`);
  L.push(`  ${'oracle (cheapest best answer)'.padEnd(36)}${f4(e.oracle.score).padStart(8)}  ${usd(e.oracle.cost).padStart(12)}`);
  L.push('');
  L.push(`best single model: ${e.best.model} (score ${f4(e.best.score)}, cost ${usd(e.best.cost)}); cheapest: ${e.cheapest.model} (score ${f4(e.cheapest.score)}, cost ${usd(e.cheapest.cost)})`);
  const ratio = (c: number | undefined) => (c === undefined ? 'never reached' : `${usd(c)} (${(c / e.best.cost).toFixed(3)} of its cost)`);
  L.push(`cost at which the router's hull matches the best single model's score: ${ratio(e.routerCostAtBest)}`);
  L.push(`cost at which the kNN baseline's hull matches it: ${ratio(e.knnCostAtBest)}`);
  L.push(`router's hull score at the cheapest model's cost: ${f4(e.routerScoreAtCheapest)} (cheapest model: ${f4(e.cheapest.score)})`);
  L.push(`AIQ: area under the non-decreasing convex hull of (cost, score), cost normalised to [${usd(e.range.lo)}, ${usd(e.range.hi)}]`);
  L.push(`AIQ router=${e.router.aiq.toFixed(4)} knn=${e.knn.aiq.toFixed(4)} best_single_hull=${e.bestSingleHull.toFixed(4)}`);
  return L;
}

/** Whether two paths name one file (the same path spelled differently, or a link to it). */
function sameFile(a: string, b: string): boolean {
  try { return realpathSync(a) === realpathSync(b); } catch { return resolve(a) === resolve(b); }
}

/** Runs the command; returns the exit code (2: usage, 1: bad data). */
export function runRouterBench(argv: string[], log: (s: string) => void = console.log, err: (s: string) => void = console.error): number {
  let a;
  try {
    // The commands' one parser (src/util/cli-args.ts): an unknown flag, a missing value, a stray word and a
    // repeated flag are refused (`--test a --test b` had been evaluated on b without a word).
    const parsed = parseArgs(argv, ['train', 'test', 'plot', 'choices']);
    noWords(parsed);
    const v = parsed.values;
    a = { train: v.get('train'), test: v.get('test'), plot: v.get('plot'), choices: v.get('choices') };
  } catch (e) { err(`${(e as Error).message}\nusage: gateway ${ROUTER_BENCH_USAGE}`); return 2; }
  if (!a.train || !a.test) { err(`--train and --test are required\nusage: gateway ${ROUTER_BENCH_USAGE}`); return 2; }
  // The evaluation is on held-out prompts: scoring the train file on itself measured recall (AIQ 0.88
  // where the held-out file gave 0.70 on the same data) under the heading 'learned from the train file only'.
  if (sameFile(a.train, a.test)) { err(`--train and --test name the same file (${a.test}): the test file must hold prompts the router did not learn from\nusage: gateway ${ROUTER_BENCH_USAGE}`); return 2; }
  let train, test;
  try { train = readBench(a.train); test = readBench(a.test); } catch (e) {
    if (e instanceof BenchDataError || (e as NodeJS.ErrnoException).code) { err(`router-bench: ${(e as Error).message}`); return 1; }
    throw e;
  }
  // The outputs are opened before the evaluation (minutes on real data), not after it: a --plot
  // naming a directory or a missing folder ended the run with a stack trace and the report unprinted.
  const outputs: Array<[flag: string, file: string]> = [];
  if (a.plot !== undefined) outputs.push(['--plot', a.plot]);
  if (a.choices !== undefined) outputs.push(['--choices', a.choices]);
  for (const [flag, file] of outputs) {
    // Written at the end, an output naming an input replaced the operator's data file with the results.
    const input = [['--train', a.train], ['--test', a.test]].find(([, f]) => sameFile(file, f!));
    if (input) { err(`router-bench: ${flag} names the ${input[0]} file (${file}); writing it would replace the data`); return 2; }
  }
  if (a.plot !== undefined && a.choices !== undefined && sameFile(a.plot, a.choices)) { err(`router-bench: --plot and --choices name the same file (${a.choices})`); return 2; }
  for (const [flag, file] of outputs) {
    try { closeSync(openSync(file, 'a')); } catch (e) { err(`router-bench: cannot write ${flag} ${file}: ${(e as Error).message}`); return 1; }
  }
  const choices: string[] = [];
  const e = evaluate(train, test, a.choices ? { onChoice: (r, wtp, model) => choices.push(JSON.stringify({ id: r.id, wtp, model })) } : {});
  const trainIds = new Set(train.map((r) => r.id));
  const shared = test.filter((r) => trainIds.has(r.id)).length;
  if (shared > 0) err(`router-bench: warning: ${shared} of the ${test.length} test ids are also in the train file; their figures measure recall, not routing`);
  const trainModels = new Set(modelsOf(train));
  const unseen = modelsOf(test).filter((m) => !trainModels.has(m));
  const head = [
    `router-bench: train ${a.train} (${train.length} prompts, ${trainModels.size} models), test ${a.test} (${test.length} prompts, ${modelsOf(test).length} models)`,
    `learned from the train file's outcomes only (no benchmark priors), through feedbackOutcome -> train in ${(trainMs / 1000).toFixed(1)} s; costs estimated by the learned cost model`,
    `kNN baseline: TF-IDF over the same hashed features, cosine, k=${e.knn.k} (leave-one-out on the train file)`,
  ];
  if (unseen.length) head.push(`not routable (no outcomes in the train file, so no learned cost or quality): ${unseen.join(', ')}`);
  if (a.choices) writeFileSync(a.choices, choices.length ? choices.join('\n') + '\n' : '');
  if (a.plot) {
    writeFileSync(a.plot, plotSvg({
      title: `router-bench: ${test.length} test prompts; AIQ router ${e.router.aiq.toFixed(4)}, kNN ${e.knn.aiq.toFixed(4)}, single hull ${e.bestSingleHull.toFixed(4)}`,
      curves: [{ name: 'router', points: e.router.points, color: '#1f6fd1' }, { name: `kNN (k=${e.knn.k})`, points: e.knn.points, color: '#e08a00' }],
      singles: e.singles.filter((s) => s.answered > 0), oracle: e.oracle,
    }));
  }
  for (const line of report(e, head)) log(line);
  return 0;
}
