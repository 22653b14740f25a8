// The cold-start prior: what the router believes about a model before any outcome of its own.
// (a) per-model figures by task category from public benchmarks (priors.json, each with its source
// and date); (b) for a model with none, a conservative default from its family, maker and price.
import { readFileSync } from 'node:fs';
import type { ModelRef, TaskKind } from './types.ts';

/** Benchmark categories the priors file uses, and which one speaks for each task kind. */
export const PRIOR_CATEGORIES = ['general', 'code', 'math', 'reasoning', 'knowledge', 'chat', 'tool_use', 'vision'] as const;
export type PriorCategory = (typeof PRIOR_CATEGORIES)[number];
export const CATEGORY_OF_KIND: Record<TaskKind, PriorCategory> = {
  code: 'code', math: 'math', multiple_choice: 'knowledge', tool_use: 'tool_use', vision: 'vision',
  extraction: 'general', translation: 'chat', summarization: 'chat', writing: 'chat', reasoning: 'reasoning', chat: 'chat',
};

/** One figure: a benchmark result mapped to [0, 1], the benchmark, and where (a key of sources) and when it was published. */
export type PriorFigure = { q: number; benchmark: string; source: string; date: string; setting?: string };
/** A published result on a benchmark that is no category's own (e.g. SWE-bench Verified): used through bridges. */
export type PriorResult = { q: number; source: string; date: string; setting?: string };
export type PriorEntry = {
  family?: string; maker?: string;
  figures: Partial<Record<PriorCategory, PriorFigure>>;
  results?: Record<string, PriorResult>;
};
export type PriorTable = {
  schema: 1;
  updated: string;
  about?: string;
  sources?: Record<string, { source: string; date: string }>;
  models: Record<string, PriorEntry>;
};

/**
 * The default prior for a model without benchmark figures, by blended price per million tokens.
 * Conservative on purpose: below what models of the tier usually score, so an unknown model earns
 * traffic on evidence (exploration) rather than on its price.
 */
export const DEFAULT_PRIOR = {
  /** [upper bound of blended $/M, q] ascending; a price above every bound takes the last q. */
  byPrice: [[0.3, 0.4], [1.5, 0.48], [6, 0.55], [Infinity, 0.6]] as ReadonlyArray<readonly [number, number]>,
  /** No price known. */
  unknown: 0.4,
  /** A sibling in the same family with figures: its figure minus this margin. */
  familyMargin: 0.08,
  /** An earlier version of the same line with figures (predecessorOf): its figure minus this margin. */
  predecessorMargin: 0.03,
  /** Pseudo-outcomes a prior is worth against learned evidence. */
  strength: { benchmark_prior: 4, default_prior: 2 },
} as const;

/**
 * A model id as the priors compare it across providers: lower case, no provider path, version dots
 * as dashes (claude-3.5 = claude-3-5), no ':free'-style tag, no 'meta-' before llama, no
 * '-instruct' tail. Computed once per model (predict caches priors per model and kind).
 */
export function normalId(id: string): string {
  return id.slice(id.lastIndexOf('/') + 1).toLowerCase()
    .replace(/:(?:free|beta|thinking|extended)$/, '')
    .replace(/(\d)\.(\d)/g, '$1-$2')
    .replace(/^meta-(?=llama)/, '')
    .replace(/-(?:instruct(?:-turbo)?|it)$/, '');
}

/** normalId without a date or 'latest' suffix: gpt-4o-2024-08-06 and gpt-4o share a key. */
export function priorKey(id: string): string {
  return normalId(id).replace(/[-@](?:\d{8}|\d{4}-\d{2}-\d{2}|latest|v\d+(?::\d+)?)$/, '');
}

/** The family a default prior borrows from: the key before its first version digits (gpt-4o -> gpt). */
export function familyOf(id: string): string {
  const k = priorKey(id);
  return k.replace(/[-_.]?v?\d.*$/, '') || k;
}

/**
 * A model's line and version: the prior key's dash-separated parts, the parts that are numbers (a
 * `v` before them allowed) the version, the rest the line ("claude-opus-5-5" -> claude-opus, [5, 5];
 * "claude-3-5-sonnet" -> claude-sonnet, [3, 5]; "gpt-5.6-sol" -> gpt-sol, [5, 6]). The size stays in
 * the line where the name writes it as a word ("qwen2-5-7b" -> qwen2-7b); a release stage (preview,
 * exp) does not ("gemini-3-flash-preview" -> gemini-flash, [3]).
 */
const RELEASE_WORDS = new Set(['preview', 'exp', 'experimental']);

export function lineOf(id: string): { line: string; version: number[] } {
  const words: string[] = [], version: number[] = [];
  for (const part of priorKey(id).split('-')) {
    const m = /^v?(\d+)$/.exec(part);
    if (m) version.push(Number(m[1])); else if (!RELEASE_WORDS.has(part)) words.push(part);
  }
  return { line: words.join('-'), version };
}

/** Whether version a comes before version b (part by part; a prefix comes first: 5 before 5.1). */
function earlier(a: readonly number[], b: readonly number[]): boolean {
  for (let i = 0; i < Math.min(a.length, b.length); i++) if (a[i] !== b[i]) return a[i]! < b[i]!;
  return a.length < b.length;
}

export type Prior = { q: number; strength: number; source: 'benchmark_prior' | 'default_prior' };

/**
 * Where a cold-start prior came from, as the dry run shows it: a published figure (the category's own
 * or, lacking it, the general one), a figure bridged from another benchmark, or the default prior's
 * rule (the weakest family sibling less a margin, or the price tier).
 */
export type PriorBasis =
  | { basis: 'figure' | 'bridge'; model: string; category: PriorCategory; benchmark: string; result: number;
    /** The document the result was published in (the table's source entry) and its date. */
    reference: string; date: string; setting?: string;
    /** Bridges only: the fit the figure came through; `extrapolated` when the result lies outside the results it was fitted on. */
    fit?: { models: number; r2: number; extrapolated: boolean } }
  | { basis: 'family' | 'predecessor'; sibling: string; sibling_q: number; margin: number }
  | { basis: 'price_tier'; blended_per_million: number }
  | { basis: 'no_price' };

/**
 * A bridge from one benchmark to a category's figures, fitted over the table's models that report
 * both: logit(category figure) = a + b * logit(result). Newer models publish other benchmarks than
 * older ones (GPQA Diamond and SWE-bench Verified, not MMLU and HumanEval, which saturated); a bridge
 * puts them on the scale the category's figures are on, so one table ranks both generations.
 */
export type PriorBridge = {
  category: PriorCategory; from: string;
  a: number; b: number;
  /** Models the fit rests on; the residual standard deviation (logit units) and R^2 of the fit. */
  n: number; residualSd: number; r2: number;
  /** The range of the source benchmark the fit saw (beyond it the bridge extrapolates). */
  fromMin: number; fromMax: number;
};

/** Bridges need this many models reporting both benchmarks. */
export const BRIDGE_MIN_MODELS = 8;

const EDGE = 0.005;
const logit = (q: number) => { const p = q < EDGE ? EDGE : q > 1 - EDGE ? 1 - EDGE : q; return Math.log(p / (1 - p)); };
const sigmoid = (z: number) => 1 / (1 + Math.exp(-z));

/** Every published result of an entry by benchmark: its figures' benchmarks and its other results. */
function resultsOf(e: PriorEntry): Map<string, PriorResult> {
  const out = new Map<string, PriorResult>();
  for (const f of Object.values(e.figures)) if (f) out.set(f.benchmark, f);
  if (e.results) for (const [b, r] of Object.entries(e.results)) out.set(b, r);
  return out;
}

/** Least-squares bridges in logit space, for each category from each benchmark that enough models share with it. */
export function fitBridges(table: PriorTable): PriorBridge[] {
  const entries = Object.values(table.models);
  const results = entries.map(resultsOf);
  const sources = new Set<string>();
  for (const r of results) for (const b of r.keys()) sources.add(b);
  const bridges: PriorBridge[] = [];
  for (const category of PRIOR_CATEGORIES) {
    for (const from of sources) {
      const xs: number[] = [], ys: number[] = [];
      entries.forEach((e, i) => {
        const f = e.figures[category];
        const x = results[i]!.get(from)?.q;
        if (f && f.benchmark !== from && x !== undefined) { xs.push(x); ys.push(f.q); }
      });
      if (xs.length < BRIDGE_MIN_MODELS) continue;
      const lx = xs.map(logit), ly = ys.map(logit), n = xs.length;
      const mx = lx.reduce((s, v) => s + v, 0) / n, my = ly.reduce((s, v) => s + v, 0) / n;
      let sxy = 0, sxx = 0, syy = 0;
      for (let i = 0; i < n; i++) { sxy += (lx[i]! - mx) * (ly[i]! - my); sxx += (lx[i]! - mx) ** 2; syy += (ly[i]! - my) ** 2; }
      if (sxx === 0 || syy === 0) continue;
      const b = sxy / sxx;
      if (!(b > 0)) continue; // a benchmark that does not rank models the same way bridges nothing
      bridges.push({
        category, from, a: my - b * mx, b, n,
        residualSd: Math.sqrt(Math.max(0, syy - b * sxy) / (n - 2)), r2: (sxy * sxy) / (sxx * syy),
        fromMin: Math.min(...xs), fromMax: Math.max(...xs),
      });
    }
  }
  return bridges;
}

/** A figure reached through a bridge: the estimate, the benchmark it came from, the result read there and the bridge. */
export type BridgedFigure = { q: number; via: string; from: PriorResult; bridge: PriorBridge };

/** Compiled prior lookups: entries by exact id, by dateless key (first listed wins), by family; bridged figures per entry. */
export type CompiledPriors = {
  byId: Map<string, PriorEntry>; byKey: Map<string, PriorEntry>; byFamily: Map<string, PriorEntry[]>;
  /** Entries by line (lineOf), with their versions. */
  byLine: Map<string, Array<{ entry: PriorEntry; version: number[] }>>;
  bridges: PriorBridge[];
  bridged: Map<PriorEntry, Partial<Record<PriorCategory, BridgedFigure>>>;
  /** Each entry's id in the table, and the table's sources (for explanations). */
  idOf: Map<PriorEntry, string>;
  sources: NonNullable<PriorTable['sources']>;
};

export function compilePriors(table: PriorTable): CompiledPriors {
  const byId = new Map<string, PriorEntry>();
  const byKey = new Map<string, PriorEntry>();
  const byFamily = new Map<string, PriorEntry[]>();
  const byLine = new Map<string, Array<{ entry: PriorEntry; version: number[] }>>();
  const idOf = new Map<PriorEntry, string>();
  const addFamily = (f: string, e: PriorEntry) => { const l = byFamily.get(f); if (!l) byFamily.set(f, [e]); else if (!l.includes(e)) l.push(e); };
  for (const [id, e] of Object.entries(table.models)) {
    byId.set(normalId(id), e);
    idOf.set(e, id);
    if (!byKey.has(priorKey(id))) byKey.set(priorKey(id), e);
    addFamily(familyOf(id), e);
    if (e.family) addFamily(e.family, e);
    const { line, version } = lineOf(id);
    if (version.length > 0) { const l = byLine.get(line); if (!l) byLine.set(line, [{ entry: e, version }]); else l.push({ entry: e, version }); }
  }
  // A category figure a model lacks comes from its result with the tightest bridge (least residual).
  const bridges = fitBridges(table);
  const bridged = new Map<PriorEntry, Partial<Record<PriorCategory, BridgedFigure>>>();
  for (const e of Object.values(table.models)) {
    const results = resultsOf(e);
    const out: Partial<Record<PriorCategory, BridgedFigure>> = {};
    for (const category of PRIOR_CATEGORIES) {
      if (e.figures[category]) continue;
      let best: PriorBridge | undefined;
      for (const br of bridges) {
        if (br.category === category && results.has(br.from) && (!best || br.residualSd < best.residualSd)) best = br;
      }
      if (best) {
        const from = results.get(best.from)!;
        out[category] = { q: sigmoid(best.a + best.b * logit(from.q)), via: best.from, from, bridge: best };
      }
    }
    if (Object.keys(out).length) bridged.set(e, out);
  }
  return { byId, byKey, byFamily, byLine, bridges, bridged, idOf, sources: table.sources ?? {} };
}

/**
 * Where an entry's figure for a category is: its own, else bridged, else its general figure (own or
 * bridged). `measured`: published figures only, no bridge (what the family rule lends to a sibling).
 */
function figureAt(priors: CompiledPriors, e: PriorEntry, cat: PriorCategory, measured = false): { q: number; category: PriorCategory; own?: PriorFigure; bridged?: BridgedFigure } | undefined {
  const b = measured ? undefined : priors.bridged.get(e);
  for (const c of cat === 'general' ? ['general' as const] : [cat, 'general' as const]) {
    const own = e.figures[c];
    if (own) return { q: own.q, category: c, own };
    const via = b?.[c];
    if (via) return { q: via.q, category: c, bridged: via };
  }
  return undefined;
}

/** The prior of one model for one task kind (null priors: only the default prior). */
export function priorFor(model: ModelRef, kind: TaskKind, priors: CompiledPriors | null): Prior {
  const { q, source } = priorWithBasis(model, kind, priors);
  return { q, strength: DEFAULT_PRIOR.strength[source], source };
}

/** priorFor with where the figure came from (the dry run's explanation; priorFor keeps only what predict needs). */
export function priorWithBasis(model: ModelRef, kind: TaskKind, priors: CompiledPriors | null): { q: number; source: Prior['source']; basis: PriorBasis } {
  const cat = CATEGORY_OF_KIND[kind];
  const e = priors ? priors.byId.get(normalId(model.id)) ?? priors.byKey.get(priorKey(model.id)) : undefined;
  const at = priors && e ? figureAt(priors, e, cat) : undefined;
  if (at) return { q: at.q, source: 'benchmark_prior', basis: figureBasis(priors!, e!, at) };
  let q: number = DEFAULT_PRIOR.unknown;
  const p = model.pricePerMillion;
  let basis: PriorBasis = { basis: 'no_price' };
  if (p !== undefined && Number.isFinite(p) && p >= 0) {
    for (const [bound, v] of DEFAULT_PRIOR.byPrice) if (p <= bound) { q = v; break; }
    basis = { basis: 'price_tier', blended_per_million: Number(p.toPrecision(6)) };
  }
  const siblings = priors ? (model.family !== undefined ? priors.byFamily.get(model.family) : undefined) ?? priors.byFamily.get(familyOf(model.id)) : undefined;
  if (siblings) {
    // The weakest sibling with a published figure, less a margin: a family name is a hint, not
    // evidence. Bridged figures are not lent: an estimate for the newest sibling (a 235B model's math
    // read off its GPQA Diamond) lifted its family's small and old models to near the frontier.
    let best = Infinity, weakest: PriorEntry | undefined;
    for (const s of siblings) { const f = figureAt(priors!, s, cat, true)?.q; if (f !== undefined && f < best) { best = f; weakest = s; } }
    if (weakest && best - DEFAULT_PRIOR.familyMargin > q) {
      q = best - DEFAULT_PRIOR.familyMargin;
      basis = { basis: 'family', sibling: priors!.idOf.get(weakest)!, sibling_q: Number(best.toFixed(4)), margin: DEFAULT_PRIOR.familyMargin };
    }
  }
  const pred = priors ? predecessorOf(priors, model.id, cat) : undefined;
  if (pred && pred.q - DEFAULT_PRIOR.predecessorMargin > q) {
    q = pred.q - DEFAULT_PRIOR.predecessorMargin;
    basis = { basis: 'predecessor', sibling: priors!.idOf.get(pred.entry)!, sibling_q: Number(pred.q.toFixed(4)), margin: DEFAULT_PRIOR.predecessorMargin };
  }
  return { q, source: 'default_prior', basis };
}

/**
 * The latest earlier version of the same line that has a figure for the category (bridged figures
 * count: the line keeps the size), e.g. claude-opus-4-8 for claude-opus-5-5, gpt-5.6-sol for
 * gpt-6-sol. A maker's next version of a line is rarely weaker than the last; taken less a margin, the
 * new model still ranks below it until its own outcomes say otherwise.
 */
function predecessorOf(priors: CompiledPriors, id: string, cat: PriorCategory): { entry: PriorEntry; q: number } | undefined {
  const { line, version } = lineOf(id);
  if (version.length === 0) return undefined;
  let best: { entry: PriorEntry; q: number; version: number[] } | undefined;
  for (const c of priors.byLine.get(line) ?? []) {
    if (!earlier(c.version, version) || (best && !earlier(best.version, c.version))) continue;
    const f = figureAt(priors, c.entry, cat)?.q;
    if (f !== undefined) best = { entry: c.entry, q: f, version: c.version };
  }
  return best;
}

/** The published figure (or bridged result) behind a benchmark prior, with its source's address. */
function figureBasis(priors: CompiledPriors, e: PriorEntry, at: NonNullable<ReturnType<typeof figureAt>>): PriorBasis {
  const model = priors.idOf.get(e)!;
  const cite = (key: string) => priors.sources[key]?.source ?? key;
  if (at.own) {
    const f = at.own;
    return { basis: 'figure', model, category: at.category, benchmark: f.benchmark, result: f.q, reference: cite(f.source), date: f.date, ...(f.setting ? { setting: f.setting } : {}) };
  }
  const { via, from: r, bridge } = at.bridged!;
  return {
    basis: 'bridge', model, category: at.category, benchmark: via, result: r.q, reference: cite(r.source), date: r.date, ...(r.setting ? { setting: r.setting } : {}),
    fit: { models: bridge.n, r2: Number(bridge.r2.toFixed(2)), extrapolated: r.q < bridge.fromMin || r.q > bridge.fromMax },
  };
}

let builtinTable: PriorTable | undefined;
let builtin: CompiledPriors | undefined;
/** The table shipped in priors.json, read once. */
function shippedTable(): PriorTable {
  builtinTable ??= JSON.parse(readFileSync(new URL('./priors.json', import.meta.url), 'utf8')) as PriorTable;
  return builtinTable;
}
/** The priors shipped in priors.json, compiled once. */
export function builtinPriors(): CompiledPriors {
  builtin ??= compilePriors(shippedTable());
  return builtin;
}

/**
 * An operator's table (router.priors_file) over the shipped one: its models add to the shipped ones
 * and replace those with the same normalised id; its sources add to (and override) the shipped ones.
 * The bridges are refitted over the merged table, so the operator's figures count in them too.
 */
export function withOperatorPriors(table: PriorTable | null): CompiledPriors {
  if (table === null) return builtinPriors();
  const base = shippedTable();
  const replaced = new Set(Object.keys(table.models).map(normalId));
  const models: PriorTable['models'] = {};
  for (const [id, e] of Object.entries(base.models)) if (!replaced.has(normalId(id))) models[id] = e;
  Object.assign(models, table.models);
  return compilePriors({ ...base, sources: { ...base.sources, ...table.sources }, models });
}

/** Figures and results whose source is listed neither in the table nor in the shipped one (the schema checks the rest). */
export function checkPriorSources(table: PriorTable): Array<{ path: string; message: string }> {
  const known = (k: string) => table.sources?.[k] !== undefined || shippedTable().sources?.[k] !== undefined;
  const out: Array<{ path: string; message: string }> = [];
  for (const [id, e] of Object.entries(table.models)) {
    for (const [cat, f] of Object.entries(e.figures)) {
      if (f && !known(f.source)) out.push({ path: `/models/${id}/figures/${cat}/source`, message: `source "${f.source}" is not listed under /sources` });
    }
    for (const [bench, r] of Object.entries(e.results ?? {})) {
      if (!known(r.source)) out.push({ path: `/models/${id}/results/${bench}/source`, message: `source "${r.source}" is not listed under /sources` });
    }
  }
  return out;
}
