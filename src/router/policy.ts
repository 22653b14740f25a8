// Router policies: named lists of json-logic rules from gateway.yaml that exclude, require or prefer
// candidates. Checked at load (unknown operations and variables are config errors with file and
// path) and compiled to closures once; a request only calls them.
import { checkRule, compileRule, type LogicData, type Predicate } from '../mapping/logic.ts';

/**
 * `fixed`: the test reads only the candidate's attributes that a config version fixes and the key
 * (no request variable, no measured or per-request candidate figure), so its result per candidate is
 * computed once per (version, policy, key) and reused by every request (src/router/rule-cache.ts).
 */
export type PolicyRule = { name: string; when: Predicate | null; action: 'exclude' | 'require' | 'prefer'; test: Predicate; weight: number; fixed: boolean };
/** `readsInputTokens`: some rule reads request.input_tokens (the decision then counts every tokenizer first). */
export type CompiledPolicy = { name: string; rules: PolicyRule[]; readsInputTokens: boolean };

/**
 * The variables a rule may read (docs/router.md, "Policies"). Paths ending in `.*` take any
 * sub-path (caller-defined keys). `candidate.*` exists only in exclude/require/prefer, not in `when`.
 */
export const REQUEST_VARS = [
  'request.input_tokens', 'request.tools', 'request.images', 'request.json_output', 'request.json_schema',
  'request.stream', 'request.kind', 'request.messages', 'request.reasoning', 'request.max_output_tokens',
  'request.max_cost', 'request.max_cost_per_million_tokens', 'request.willingness_to_pay', 'request.route',
  'request.metadata.*', 'request.extra.*', 'extra.*', 'key.id', 'key.name', 'key.tags.*',
] as const;
export const CANDIDATE_VARS = [
  'candidate.id', 'candidate.provider', 'candidate.model', 'candidate.canonical', 'candidate.reliability_tier',
  'candidate.context_window', 'candidate.max_output_tokens', 'candidate.capabilities.tools', 'candidate.capabilities.vision',
  'candidate.capabilities.reasoning', 'candidate.capabilities.structured_output', 'candidate.capabilities.prompt_caching',
  'candidate.price.input_per_million', 'candidate.price.output_per_million', 'candidate.expected_cost_usd',
  'candidate.quality', 'candidate.latency_ms', 'candidate.error_rate', 'candidate.added_at', 'candidate.age_days',
] as const;

const ROOTS = ['request', 'key', 'extra', 'candidate'];

function knownVar(name: string, withCandidate: boolean): boolean {
  const lists: readonly string[][] = withCandidate ? [[...REQUEST_VARS], [...CANDIDATE_VARS]] : [[...REQUEST_VARS]];
  for (const list of lists) {
    for (const v of list) {
      if (v.endsWith('.*') ? name.startsWith(v.slice(0, -1)) && name.length > v.length - 1 : name === v) return true;
      // A whole object (e.g. `candidate.capabilities`, `request.metadata`) may be read too.
      if (v.startsWith(`${name}.`)) return true;
    }
  }
  return false;
}

/** Every `var` name in a rule (json-logic allows [name, default]); a name computed at run time is null. */
function varsOf(rule: unknown, out: Array<string | null> = []): Array<string | null> {
  if (Array.isArray(rule)) { for (const r of rule) varsOf(r, out); return out; }
  if (rule === null || typeof rule !== 'object') return out;
  for (const [op, arg] of Object.entries(rule)) {
    if (op === 'var') {
      const n = Array.isArray(arg) ? arg[0] : arg;
      out.push(typeof n === 'string' ? n : null);
      if (Array.isArray(arg)) varsOf(arg.slice(1), out);
    } else if (op === 'missing' || op === 'missing_some') {
      // They read variables named by their data: which ones is known only at run time.
      out.push(null);
      varsOf(arg, out);
    } else varsOf(arg, out);
  }
  return out;
}

/**
 * Candidate variables that change per request, with measurements or with the clock (`age_days`: a
 * config version can serve for weeks), the rest is fixed per config version.
 */
const PER_REQUEST_CANDIDATE = new Set(['candidate', 'candidate.expected_cost_usd', 'candidate.quality', 'candidate.latency_ms', 'candidate.error_rate', 'candidate.age_days']);

const fixedVar = (v: string | null): boolean =>
  v !== null && (v === 'key' || v.startsWith('key.') || (v.startsWith('candidate.') && !PER_REQUEST_CANDIDATE.has(v)));

const readsInput = (v: string | null): boolean => v === null || v === '' || v === 'request' || v === 'request.input_tokens';

function checkExpr(rule: unknown, at: string, withCandidate: boolean): string[] {
  const problems = checkRule(rule, ROOTS, '').map((m) => `${at}: ${m}`);
  if (problems.length > 0) return problems;
  for (const v of varsOf(rule)) {
    if (v === null) continue;
    if (!knownVar(v, withCandidate)) {
      problems.push(`${at}: unknown variable "${v}"${!withCandidate && v.startsWith('candidate') ? ' (candidate variables are not available in "when")' : ''}; see docs/router.md for the variables`);
    }
  }
  return problems;
}

type Obj = Record<string, unknown>;
const ACTIONS = ['exclude', 'require', 'prefer'] as const;

/**
 * Problems of a `router:` section as (path, message) pairs, paths relative to the gateway file
 * (e.g. /router/policies/cheap/0/exclude). The JSON Schema has already checked the shapes.
 */
export function checkRouterConfig(raw: unknown): Array<{ path: string; message: string }> {
  const out: Array<{ path: string; message: string }> = [];
  const r = (raw ?? {}) as Obj;
  const policies = (r.policies ?? {}) as Record<string, Obj[]>;
  for (const [name, rules] of Object.entries(policies)) {
    rules.forEach((rule, i) => {
      const base = `/router/policies/${name}/${i}`;
      const actions = ACTIONS.filter((a) => rule[a] !== undefined);
      if (actions.length !== 1) out.push({ path: base, message: `a policy rule needs exactly one of exclude, require, prefer (got ${actions.length})` });
      if (rule.when !== undefined) for (const m of checkExpr(rule.when, 'when', false)) out.push({ path: `${base}/when`, message: m });
      for (const a of actions) for (const m of checkExpr(rule[a], a, true)) out.push({ path: `${base}/${a}`, message: m });
    });
  }
  const known = new Set(Object.keys(policies));
  if (r.default_policy !== undefined && !known.has(r.default_policy as string)) {
    out.push({ path: '/router/default_policy', message: `unknown policy "${String(r.default_policy)}" (defined: ${[...known].join(', ') || 'none'})` });
  }
  for (const [glob, p] of Object.entries((r.key_policies ?? {}) as Record<string, string>)) {
    if (!known.has(p)) out.push({ path: `/router/key_policies/${glob}`, message: `unknown policy "${p}" (defined: ${[...known].join(', ') || 'none'})` });
  }
  const defaults: Array<[string, Obj]> = [['/router/defaults', (r.defaults ?? {}) as Obj], ...Object.entries((r.key_defaults ?? {}) as Record<string, Obj>).map(([g, d]) => [`/router/key_defaults/${g}`, d] as [string, Obj])];
  for (const [path, d] of defaults) {
    for (const [i, m] of ((d.models ?? []) as unknown[]).entries()) if (m === 'router') out.push({ path: `${path}/models/${i}`, message: 'a default models list cannot name "router"' });
  }
  const signalAt = new Map<unknown, number>();
  for (const [i, s] of ((r.quality_signals ?? []) as Obj[]).entries()) {
    // Compared with the defaults (0 and 1) filled in: `min: 1` alone for a 1-5 rating left an empty
    // range, and every value of the metric scored nothing, with nothing said.
    const [lo, hi] = [(s.min ?? 0) as number, (s.max ?? 1) as number];
    if (lo >= hi) out.push({ path: `/router/quality_signals/${i}`, message: `min must be below max (min ${lo}, max ${hi}${s.min === undefined || s.max === undefined ? '; min defaults to 0 and max to 1' : ''})` });
    // Training reads one signal per metric (the last listed): a second entry would silently replace the first's direction, range and keys.
    const first = signalAt.get(s.metric);
    if (first !== undefined) out.push({ path: `/router/quality_signals/${i}/metric`, message: `metric "${String(s.metric)}" is already quality_signals[${first}]; list each metric once` });
    else signalAt.set(s.metric, i);
  }
  return out;
}

export function compilePolicies(raw: Record<string, unknown>): Map<string, CompiledPolicy> {
  const out = new Map<string, CompiledPolicy>();
  for (const [name, list] of Object.entries(raw)) {
    const rules: PolicyRule[] = (list as Obj[]).map((rule, i) => {
      const action = ACTIONS.find((a) => rule[a] !== undefined)!;
      return {
        name: (rule.name as string | undefined) ?? `${name}[${i}]`,
        when: rule.when === undefined ? null : compileRule(rule.when),
        action, test: compileRule(rule[action]), weight: (rule.weight as number | undefined) ?? 0.05,
        fixed: varsOf(rule[action]).every(fixedVar),
      };
    });
    const readsInputTokens = (list as Obj[]).some((rule) => varsOf([rule.when, rule[ACTIONS.find((a) => rule[a] !== undefined)!]]).some(readsInput));
    out.set(name, { name, rules, readsInputTokens });
  }
  return out;
}

/** Rules of a policy that apply to this request (their `when` holds). */
export function activeRules(p: CompiledPolicy | null, requestData: LogicData): PolicyRule[] {
  if (!p) return [];
  return p.rules.filter((r) => r.when === null || r.when(requestData));
}
