// The model browser (the compiled config's model index: what this gateway can serve, with prices per
// million tokens) and the comparison of models from real traffic (usage_rollup) and feedback
// (feedback_rollup): rates and means with 95% intervals, cost per request, latency percentiles.
import { divDecimal, formatDecimal } from '../catalog/decimal.ts';
import { perMillion } from '../catalog/cost.ts';
import type { ModelEntry } from '../config/types.ts';
import { str, type Row } from '../store/rows.ts';
import type { SqlRunner } from '../store/sql-runner.ts';
import { USAGE_SUM_COLUMNS } from '../store/dashboard-schema.ts';
import { foldBeforeRead } from '../store/rollup-fold.ts';
import { keyScope, type Access } from './access.ts';
import { confidence, metricsOf, sumsFromRow } from './rollup-math.ts';
import { grainFor, readRollup, segments, sumsOf, type DimFilter } from './rollup-query.ts';
import type { MetricStat, ModelComparison, ModelInfo, ModelPerformance } from './ui/api-types.ts';

export function modelInfo(e: ModelEntry): ModelInfo {
  const m = e.model;
  const prices: Record<string, string> = {};
  for (const [k, v] of Object.entries(m.pricing ?? {})) if (typeof v === 'string' && v !== '0') prices[k] = formatDecimal(perMillion(v));
  return {
    id: e.id, provider: e.provider.id, name: m.name, display_name: m.display_name ?? null, context_window: m.context_window,
    max_completion_tokens: m.max_completion_tokens, input_modalities: m.modalities?.input ?? [], output_modalities: m.modalities?.output ?? [],
    capabilities: { ...m.capabilities }, prices_per_million: prices, added_at: m.added_at, updated_at: m.updated_at,
    reliability_tier: m.reliability_tier, status: m.status ?? 'active', unpriced: m.unpriced === true,
  };
}

/** Every servable model, hidden ones left out, sorted by id. */
export function modelCatalog(models: Map<string, ModelEntry>): ModelInfo[] {
  return [...models.values()].filter((e) => e.model.hidden !== true).map(modelInfo).sort((a, b) => (a.id < b.id ? -1 : 1));
}

export type CompareQuery = { from: number; to: number; models?: string[]; metric?: string };

/** Per model (all with traffic in range, or the ones asked for): usage metrics and feedback metrics. Two reads of per-model rollups. */
export async function compareModels(sql: SqlRunner, q: CompareQuery, access: Access): Promise<ModelComparison> {
  await foldBeforeRead(sql);
  const scope = keyScope(access);
  const filter: DimFilter = { keys: scope, models: q.models };
  const segs = segments(q.from, q.to);
  const perf = new Map<string, ModelPerformance>();
  const usage = await readRollup(sql, {
    table: 'usage_rollup', grain: grainFor('model', filter), segs, filter, noBucket: true,
    select: `r.model AS model, ${sumsOf(sql, USAGE_SUM_COLUMNS)}`, groupBy: ['r.model'],
  });
  for (const r of usage) {
    const m = metricsOf(sumsFromRow(r));
    perf.set(str(r.model), {
      model: str(r.model), requests: m.requests, errors: m.errors, error_rate: m.error_rate, cost_usd: m.cost_usd,
      cost_per_request_usd: m.requests > 0 ? formatDecimal(divDecimal(m.cost_usd, String(m.requests), 12)) : null,
      latency_ms: m.latency_ms, ttft_ms: m.ttft_ms, output_tokens_per_request: m.requests > 0 ? m.output_tokens / m.requests : null, metrics: [],
    });
  }
  // Feedback rollups keep (key, model) and model alone: a member's scope reads the first.
  const rows = await readRollup(sql, {
    table: 'feedback_rollup', grain: scope ? 'cell' : 'model', segs, filter: { keys: scope, models: q.models }, noBucket: true,
    select: 'r.model AS model, r.metric AS metric, r.type AS type, SUM(r.count) AS n, SUM(r.value_sum) AS s, SUM(r.value_sumsq) AS ss',
    groupBy: ['r.model', 'r.metric', 'r.type'], ...(q.metric ? { where: 'r.metric = ?', whereParams: [q.metric] } : {}),
  });
  const metrics = new Set<string>();
  for (const r of rows as Row[]) {
    const model = str(r.model);
    let p = perf.get(model);
    if (!p) {
      p = { model, requests: 0, errors: 0, error_rate: null, cost_usd: '0', cost_per_request_usd: null, latency_ms: none(), ttft_ms: none(), output_tokens_per_request: null, metrics: [] };
      perf.set(model, p);
    }
    const type = str(r.type) as MetricStat['type'];
    const c = confidence(type, Number(r.n), Number(r.s), Number(r.ss));
    p.metrics.push({ metric: str(r.metric), type, count: Number(r.n), mean: c.mean, ci_low: c.lo, ci_high: c.hi });
    metrics.add(str(r.metric));
  }
  for (const p of perf.values()) p.metrics.sort((a, b) => (a.metric < b.metric ? -1 : a.metric > b.metric ? 1 : 0));
  const models = [...perf.values()].sort((a, b) => b.requests - a.requests || (a.model < b.model ? -1 : 1));
  return { from: new Date(q.from).toISOString(), to: new Date(q.to).toISOString(), metrics: [...metrics].sort(), models };
}

const none = () => ({ p50: null, p95: null, p99: null, mean: null });
