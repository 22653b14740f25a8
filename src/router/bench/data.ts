// Router-bench data files: one prompt a line with each model's score and cost (the format of
// ../shared/router-bench/). Parsed and checked once, with the line number of anything wrong.
import { readFileSync } from 'node:fs';
import { extractPromptFeatures } from '../quality/features.ts';
import type { Outcome, PromptFeatures } from '../quality/types.ts';

export type BenchOutcome = { score: number; cost: number };
export type BenchRow = {
  id: string;
  task: string;
  prompt: string;
  /** Model -> measured outcome (only the models that answered this prompt). */
  outcomes: Map<string, BenchOutcome>;
  features: PromptFeatures;
};

export class BenchDataError extends Error {}

function fail(file: string, line: number, msg: string): never {
  throw new BenchDataError(`${file}:${line}: ${msg}`);
}

/** Parses JSONL text; `file` names it in errors. Blank lines are skipped; ids must be unique. */
export function parseBench(text: string, file: string): BenchRow[] {
  const rows: BenchRow[] = [];
  const ids = new Set<string>();
  const lines = text.split('\n');
  for (let i = 0; i < lines.length; i++) {
    const raw = lines[i]!.trim();
    if (!raw) continue;
    let o: unknown;
    try { o = JSON.parse(raw); } catch (e) { fail(file, i + 1, `not JSON (${(e as Error).message})`); }
    if (!o || typeof o !== 'object' || Array.isArray(o)) fail(file, i + 1, 'each line must be a JSON object');
    const r = o as Record<string, unknown>;
    if (typeof r.id !== 'string' || !r.id) fail(file, i + 1, '"id" must be a non-empty string');
    if (ids.has(r.id)) fail(file, i + 1, `duplicate id "${r.id}"`);
    if (typeof r.prompt !== 'string') fail(file, i + 1, '"prompt" must be a string');
    if (r.task !== undefined && typeof r.task !== 'string') fail(file, i + 1, '"task" must be a string');
    if (!r.outcomes || typeof r.outcomes !== 'object' || Array.isArray(r.outcomes)) fail(file, i + 1, '"outcomes" must be an object of model -> {score, cost_usd}');
    const outcomes = new Map<string, BenchOutcome>();
    for (const [m, v] of Object.entries(r.outcomes as Record<string, unknown>)) {
      const x = v as Record<string, unknown> | null;
      const score = x?.score, cost = x?.cost_usd;
      if (typeof score !== 'number' || !(score >= 0 && score <= 1)) fail(file, i + 1, `outcomes["${m}"].score must be a number in [0, 1]`);
      if (typeof cost !== 'number' || !(cost >= 0) || !Number.isFinite(cost)) fail(file, i + 1, `outcomes["${m}"].cost_usd must be a finite number >= 0`);
      outcomes.set(m, { score, cost });
    }
    if (outcomes.size === 0) fail(file, i + 1, '"outcomes" is empty');
    ids.add(r.id);
    rows.push({ id: r.id, task: (r.task as string | undefined) ?? '', prompt: r.prompt, outcomes, features: extractPromptFeatures({ turns: [r.prompt] }) });
  }
  if (rows.length === 0) throw new BenchDataError(`${file}: no rows`);
  return rows;
}

export function readBench(file: string): BenchRow[] {
  let text: string;
  // Node's EISDIR ("illegal operation on a directory, read") does not say which file it was.
  try { text = readFileSync(file, 'utf8'); } catch (e) { throw new BenchDataError(`${file}: cannot read it (${(e as Error).message})`); }
  return parseBench(text, file);
}

/** The outcomes of rows as the feedback path would record them: one per (prompt, model). */
export function outcomesOf(rows: readonly BenchRow[], keep: (model: string) => boolean = () => true): Outcome[] {
  const out: Outcome[] = [];
  for (const r of rows) {
    for (const [model, o] of r.outcomes) {
      if (keep(model)) out.push({ features: r.features, model, score: o.score, costUsd: o.cost, time: 0 });
    }
  }
  return out;
}

/** Every model named in rows, sorted. */
export function modelsOf(rows: readonly BenchRow[]): string[] {
  const s = new Set<string>();
  for (const r of rows) for (const m of r.outcomes.keys()) s.add(m);
  return [...s].sort();
}
