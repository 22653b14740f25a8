// Compiles a provider's declared parameter mapping rows into one function applied to upstream bodies.
// Rows rename, drop, default, map values, bound (clamp or reject, never silently) or refuse parameters;
// every change is reported so the client can be told (x-gateway-adjustments).
import { GatewayError } from '../gateway-error.ts';
import { compileRule, type Predicate } from './logic.ts';

export type MappingRow = {
  param: string; when?: unknown; rename?: string; drop?: boolean; reject?: string; default?: unknown;
  min?: number; max?: number; out_of_range?: 'clamp' | 'reject'; values?: Record<string, string>; note?: string;
};

export type Adjustment = string;

/**
 * The target model's catalog facts a row may test (`catalog.<field>`): what the maker's API accepts
 * for this model, so one row serves every model of the provider (`catalog.sampling`, CatalogModel).
 */
export type MappingCatalog = { sampling?: string };

/** Applies the rows to `body` in place; returns what changed. Throws GatewayError on a reject. */
export type CompiledMapping = (body: Record<string, unknown>, model: string, catalog?: MappingCatalog) => Adjustment[];

type Step = (body: Record<string, unknown>, out: Adjustment[]) => void;

export const MAPPING_VARS = ['model', 'body', 'catalog'] as const;

const NO_CATALOG: MappingCatalog = {};

export function compileMapping(rows: readonly MappingRow[]): CompiledMapping {
  if (rows.length === 0) return () => [];
  const steps = rows.map((r) => ({
    when: r.when === undefined ? null : compileRule(r.when),
    step: compileRow(r),
    // A row without a default does nothing when its parameter is absent: skip it before its condition.
    root: r.default === undefined ? r.param.split('.')[0]! : null,
  }));
  return (body, model, catalog = NO_CATALOG) => {
    const out: Adjustment[] = [];
    let data: { model: string; body: Record<string, unknown>; catalog: MappingCatalog } | null = null;
    for (const s of steps) {
      if (s.root !== null && body[s.root] === undefined) continue;
      if (s.when !== null && !(s.when as Predicate)((data ??= { model, body, catalog }))) continue;
      s.step(body, out);
    }
    return out;
  };
}

function compileRow(r: MappingRow): Step {
  const path = r.param.split('.');
  const name = r.param;
  return (body, out) => {
    let v = getPath(body, path);
    if (v === undefined) {
      if (r.default !== undefined) { setPath(body, path, structuredClone(r.default)); out.push(`${name}=default`); }
      return;
    }
    if (r.reject !== undefined) throw new GatewayError('unsupported_parameter', r.reject, { param: name });
    if (r.drop) { deletePath(body, path); out.push(`${name}=dropped`); return; }
    if (r.values && typeof v === 'string' && Object.hasOwn(r.values, v)) {
      const to = r.values[v]!;
      setPath(body, path, to);
      out.push(`${name}=${v}->${to}`);
      v = to;
    }
    if (typeof v === 'number' && ((r.min !== undefined && v < r.min) || (r.max !== undefined && v > r.max))) {
      const bound = r.min !== undefined && v < r.min ? r.min : r.max!;
      if (r.out_of_range !== 'clamp') {
        throw new GatewayError('invalid_parameter',
          `${name}=${v} is outside the range this model accepts (${r.min ?? '-inf'}..${r.max ?? 'inf'})`, { param: name });
      }
      setPath(body, path, bound);
      out.push(`${name}=${v}->${bound}(clamped)`);
      v = bound;
    }
    if (r.rename !== undefined) {
      deletePath(body, path);
      setPath(body, r.rename.split('.'), v);
      out.push(`${name}->${r.rename}`);
    }
  };
}

function getPath(o: Record<string, unknown>, path: readonly string[]): unknown {
  let cur: unknown = o;
  for (const k of path) {
    if (cur === null || typeof cur !== 'object' || !Object.hasOwn(cur, k)) return undefined;
    cur = (cur as Record<string, unknown>)[k];
  }
  return cur;
}

function setPath(o: Record<string, unknown>, path: readonly string[], v: unknown): void {
  let cur = o;
  for (let i = 0; i < path.length - 1; i++) {
    const next = cur[path[i]!];
    if (next === null || typeof next !== 'object') cur[path[i]!] = {};
    cur = cur[path[i]!] as Record<string, unknown>;
  }
  cur[path[path.length - 1]!] = v;
}

function deletePath(o: Record<string, unknown>, path: readonly string[]): void {
  let cur: unknown = o;
  for (let i = 0; i < path.length - 1; i++) {
    if (cur === null || typeof cur !== 'object') return;
    cur = (cur as Record<string, unknown>)[path[i]!];
  }
  if (cur !== null && typeof cur === 'object') delete (cur as Record<string, unknown>)[path[path.length - 1]!];
}
