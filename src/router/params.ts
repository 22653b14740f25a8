// The router's request parameters (`models`, `max_cost`, `max_cost_per_million_tokens`,
// `willingness_to_pay`, `extra`), parsed once from a validated body; bad values are 400s naming the field.
import { GatewayError } from '../gateway-error.ts';

export type RouterParams = {
  /** Names as sent (provider/model or bare); null = every routable model. */
  models: string[] | null;
  /** The fields taken from gateway.yaml's defaults, each with where it was configured (RouterDefaults.from). */
  fromDefaults?: RouterDefaults['from'];
  maxCost: number | null;
  maxCostPerMillion: number | null;
  /** USD the caller pays for +10% quality; null = quality first (W = infinity). */
  wtp: number | null;
  extra: Record<string, unknown>;
};

const bad = (param: string, message: string): GatewayError => new GatewayError('invalid_parameter', message, { param });

function bound(v: unknown, param: string, allowZero: boolean): number | null {
  if (v === undefined || v === null) return null;
  if (typeof v !== 'number') throw bad(param, `'${param}' must be a number (USD)`);
  if (!Number.isFinite(v)) throw bad(param, `'${param}' must be a finite number (USD); ${v} is out of range`);
  if (v < 0 || (!allowZero && v === 0)) throw bad(param, `'${param}' must be ${allowZero ? 'zero or more' : 'greater than zero'}, got ${v}`);
  return v;
}

/**
 * Router fields gateway.yaml gives a routed request that does not set them (`router.defaults`,
 * `router.key_defaults`), each with where it was configured (`from`, by field).
 */
export type RouterDefaults = {
  models?: string[]; maxCost?: number; maxCostPerMillion?: number; wtp?: number;
  from: Partial<Record<'models' | 'max_cost' | 'max_cost_per_million_tokens' | 'willingness_to_pay', string>>;
};

/** `p` with each field the request left unset taken from `d` (and recorded in fromDefaults). */
export function withDefaults(p: RouterParams, d: RouterDefaults | null): RouterParams {
  if (d === null) return p;
  const out: RouterParams = { ...p };
  const from: RouterDefaults['from'] = {};
  if (p.models === null && d.models) { out.models = d.models; from.models = d.from.models; }
  if (p.maxCost === null && d.maxCost !== undefined) { out.maxCost = d.maxCost; from.max_cost = d.from.max_cost; }
  if (p.maxCostPerMillion === null && d.maxCostPerMillion !== undefined) { out.maxCostPerMillion = d.maxCostPerMillion; from.max_cost_per_million_tokens = d.from.max_cost_per_million_tokens; }
  if (p.wtp === null && d.wtp !== undefined) { out.wtp = d.wtp; from.willingness_to_pay = d.from.willingness_to_pay; }
  if (Object.keys(from).length > 0) out.fromDefaults = from;
  return out;
}

/** The x-router-defaults value: each field taken from the defaults and where, e.g. `max_cost=key_defaults[agent-*], willingness_to_pay=defaults`. */
export const describeDefaults = (from: RouterDefaults['from'] | undefined): string | null =>
  from ? Object.entries(from).map(([k, v]) => `${k}=${v}`).join(', ') : null;

export function parseRouterParams(body: Record<string, unknown>): RouterParams {
  let models: string[] | null = null;
  if (body.models !== undefined && body.models !== null) {
    if (!Array.isArray(body.models)) throw bad('models', "'models' must be an array of model names");
    if (body.models.length === 0) throw bad('models', "'models' must name at least one model (leave it out to route over the whole catalog)");
    if (body.models.length > 1000) throw bad('models', "'models' may name at most 1000 models");
    body.models.forEach((m: unknown, i) => {
      if (typeof m !== 'string' || m === '') throw bad(`models[${i}]`, `'models[${i}]' must be a non-empty string`);
      if (m === 'router') throw bad(`models[${i}]`, `'models[${i}]' cannot be "router"`);
    });
    models = body.models as string[];
  }
  const extra = body.extra;
  if (extra !== undefined && extra !== null && (typeof extra !== 'object' || Array.isArray(extra))) throw bad('extra', "'extra' must be an object");
  return {
    models,
    maxCost: bound(body.max_cost, 'max_cost', false),
    maxCostPerMillion: bound(body.max_cost_per_million_tokens, 'max_cost_per_million_tokens', false),
    wtp: bound(body.willingness_to_pay, 'willingness_to_pay', true),
    extra: (extra ?? {}) as Record<string, unknown>,
  };
}
